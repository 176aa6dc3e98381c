//! The fleet chart of one metric, one short strip whatever the fleet's size: the fleet's
//! p10–p90 as a shaded band, its median as a dashed line, and the hosts' values either as
//! dots on one line (up to [`STRIP_HOSTS`] hosts, each dot's tooltip naming its host, the
//! outliers named under the strip) or, beyond, as a histogram of [`BINS`] bars with the
//! outliers' bars in a second colour and counted. Never a row per host: the chart's size does
//! not grow with the fleet. Values share one axis (log when they span `AUTO_LOG_SPAN` or more,
//! as the bar charts do). When the chart holds only some of the hosts' values (a fleet the
//! database reduced: the outliers and the host nearest the median), only the outliers are
//! counted over the band, and the chart says so.
//!
//! Pure: a description in, an SVG string out. Depends on `axis`, `svg` and `model::units`.

use super::WIDTH;
use super::axis::{AUTO_LOG_SPAN, Axis, ScaleMode};
use super::svg::{Anchor, Svg, TICK, color};
use crate::model::Unit;
use crate::model::units;

/// Most hosts drawn as dots; beyond, a histogram.
pub const STRIP_HOSTS: usize = 50;
/// Bars of the histogram.
pub const BINS: usize = 120;
/// Bars a histogram's outlier label needs: runs of outlier bars closer than this share one.
const LABEL_BINS: usize = 14;
/// Most outliers named under a strip (the rest are in the outlier list).
const NAMED: usize = 4;
/// Height of the plot (the strip or the tallest bar).
const PLOT_H: f64 = 48.0;
/// The least height of an outlier's bar, so one host among thousands still shows.
const OUTLIER_BAR: f64 = 10.0;

/// One host's value.
#[derive(Debug, Clone, PartialEq)]
pub struct Dot {
    /// Host name.
    pub name: String,
    /// Its value.
    pub value: f64,
    /// Drawn in the outlier colour.
    pub outlier: bool,
}

/// A metric across the hosts of a fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct DotChart {
    /// What the chart is about (the SVG title).
    pub title: String,
    /// Axis title.
    pub axis_label: String,
    /// Unit of every value.
    pub unit: Unit,
    /// The fleet's median.
    pub median: f64,
    /// The fleet's p10 and p90.
    pub band: (f64, f64),
    /// How many hosts measured the metric (more than `dots` when the database sent only
    /// some values).
    pub hosts: usize,
    /// The hosts' values.
    pub dots: Vec<Dot>,
}

impl DotChart {
    /// Whether `dots` holds every host's value.
    fn complete(&self) -> bool {
        self.dots.len() >= self.hosts
    }
}

fn fit(chart: &DotChart) -> Axis {
    let mut values: Vec<f64> = chart.dots.iter().map(|d| d.value).collect();
    values.extend([chart.band.0, chart.band.1, chart.median]);
    let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let min = positive.iter().copied().fold(f64::INFINITY, f64::min);
    let max = positive.iter().copied().fold(0.0, f64::max);
    let mode = if positive.len() == values.len() && max / min >= AUTO_LOG_SPAN {
        ScaleMode::Log
    } else {
        ScaleMode::Linear
    };
    Axis::fit(&values, chart.unit, mode)
}

/// Where things go: the axis, the plot's left and right ends, and its top and bottom.
struct Frame {
    axis: Axis,
    x: (f64, f64),
    y: (f64, f64),
}

impl Frame {
    fn px(&self, v: f64) -> f64 {
        self.x.0 + self.axis.frac(v).clamp(0.0, 1.0) * (self.x.1 - self.x.0)
    }
}

/// The chart as SVG, or `None` without hosts.
pub fn render(chart: &DotChart) -> Option<String> {
    if chart.dots.is_empty() {
        return None;
    }
    let f = Frame {
        axis: fit(chart),
        x: (24.0, WIDTH - 24.0),
        y: (22.0, 22.0 + PLOT_H),
    };
    let strip = chart.complete() && chart.dots.len() <= STRIP_HOSTS;
    let height = f.y.1 + if strip { 70.0 } else { 40.0 };
    let mut svg = Svg::new(WIDTH, height, &chart.title);
    draw_fleet(&mut svg, chart, &f);
    if strip {
        draw_strip(&mut svg, chart, &f);
    } else {
        draw_histogram(&mut svg, chart, &f);
    }
    Some(svg.finish())
}

/// Every host a dot on the strip (nudged up or down so equal values stay apart), the first
/// [`NAMED`] outliers named with their value under it.
fn draw_strip(svg: &mut Svg, chart: &DotChart, f: &Frame) {
    let mid = (f.y.0 + f.y.1) / 2.0;
    for (i, d) in chart.dots.iter().enumerate() {
        let y = mid + ((i % 5) as f64 - 2.0) * 6.0;
        let value = units::value(d.value, chart.unit);
        let fill = if d.outlier { color(1) } else { color(0) };
        svg.circle(
            (f.px(d.value), y),
            5.0,
            fill,
            Some(&format!("{}: {value}", d.name)),
        );
    }
    let outliers = chart.dots.iter().filter(|d| d.outlier).take(NAMED);
    for (i, d) in outliers.enumerate() {
        let (x, below) = (f.px(d.value), f.y.1 + 50.0 + 13.0 * (i % 2) as f64);
        let anchor = if x > (f.x.0 + f.x.1) / 2.0 {
            Anchor::End
        } else {
            Anchor::Start
        };
        let value = units::value(d.value, chart.unit);
        let name_w = d.name.chars().count() as f64 * super::CHAR_W + 6.0;
        let shift = if matches!(anchor, Anchor::End) {
            -name_w
        } else {
            name_w
        };
        svg.text((x, below), anchor, "fill=\"#b3261e\"", &d.name);
        svg.text((x + shift, below), anchor, "fill=\"#222\"", &value);
    }
}

/// The hosts counted in [`BINS`] bars along the axis, the outliers' bars in the outlier
/// colour on top, at least [`OUTLIER_BAR`] high, with their count over the plot.
fn draw_histogram(svg: &mut Svg, chart: &DotChart, f: &Frame) {
    let mut bins = vec![Bin::default(); BINS];
    for d in &chart.dots {
        if !chart.complete() && !d.outlier {
            continue;
        }
        let i = ((f.axis.frac(d.value) * BINS as f64) as usize).min(BINS - 1);
        bins[i].add(d);
    }
    let tallest = bins.iter().map(|b| b.typical).max().unwrap_or(0).max(1) as f64;
    let step = (f.x.1 - f.x.0) / BINS as f64;
    for (i, b) in bins
        .iter()
        .enumerate()
        .filter(|(_, b)| b.typical + b.outliers > 0)
    {
        let x = f.x.0 + step * i as f64;
        let range = match b.lo == b.hi {
            true => units::value(b.lo, chart.unit),
            false => units::range(b.lo, b.hi, chart.unit),
        };
        let h = (PLOT_H * b.typical as f64 / tallest).max(if b.typical > 0 { 1.5 } else { 0.0 });
        if b.typical > 0 {
            let tip = format!("{} host(s): {range}", b.typical);
            svg.rect((x, f.y.1 - h), (step - 1.0, h), color(0), Some(&tip));
        }
        if b.outliers > 0 {
            let oh = (PLOT_H * b.outliers as f64 / tallest).max(OUTLIER_BAR);
            let tip = format!("{} outlier(s): {range}", b.outliers);
            svg.rect((x, f.y.1 - h - oh), (step - 1.0, oh), color(1), Some(&tip));
        }
    }
    for (first, last, n) in outlier_runs(&bins) {
        let centre = f.x.0 + step * (first + last + 1) as f64 / 2.0;
        let label = if n == 1 {
            "1 outlier".to_string()
        } else {
            format!("{n} outliers")
        };
        svg.text(
            (centre, f.y.0 - 6.0),
            Anchor::Middle,
            "fill=\"#b3261e\"",
            &label,
        );
    }
}

/// The bars with outliers as runs (first bar, last bar, outliers), runs closer than
/// [`LABEL_BINS`] bars merged so that their labels do not overlap.
fn outlier_runs(bins: &[Bin]) -> Vec<(usize, usize, usize)> {
    let mut runs: Vec<(usize, usize, usize)> = Vec::new();
    for (i, b) in bins.iter().enumerate().filter(|(_, b)| b.outliers > 0) {
        match runs.last_mut() {
            Some(run) if i - run.1 <= LABEL_BINS => (run.1, run.2) = (i, run.2 + b.outliers),
            _ => runs.push((i, i, b.outliers)),
        }
    }
    runs
}

/// The hosts of one bar.
#[derive(Clone, Default)]
struct Bin {
    typical: usize,
    outliers: usize,
    lo: f64,
    hi: f64,
}

impl Bin {
    fn add(&mut self, d: &Dot) {
        if self.typical + self.outliers == 0 {
            (self.lo, self.hi) = (d.value, d.value);
        }
        (self.lo, self.hi) = (self.lo.min(d.value), self.hi.max(d.value));
        match d.outlier {
            true => self.outliers += 1,
            false => self.typical += 1,
        }
    }
}

/// The p10–p90 band, the grid and tick labels, the median line and the axis title.
fn draw_fleet(svg: &mut Svg, chart: &DotChart, f: &Frame) {
    let (top, bottom) = f.y;
    let (lo, hi) = (f.px(chart.band.0), f.px(chart.band.1));
    let band = units::range(chart.band.0, chart.band.1, chart.unit);
    let tip = format!("fleet p10–p90, outliers included: {band}");
    svg.rect(
        (lo, top),
        ((hi - lo).max(1.0), bottom - top),
        "#e8eef6",
        Some(&tip),
    );
    for t in f.axis.ticks() {
        svg.line(
            (f.px(t), top),
            (f.px(t), bottom),
            "#e3e3e3",
            "stroke-width=\"1\"",
        );
        let at = (f.px(t), bottom + 16.0);
        svg.text(at, Anchor::Middle, TICK, &f.axis.label(t));
    }
    let m = f.px(chart.median);
    let dash = "stroke-width=\"1.5\" stroke-dasharray=\"4 3\"";
    svg.line((m, top), (m, bottom), "#333", dash);
    svg.line(
        (f.x.0, bottom),
        (f.x.1, bottom),
        "#666",
        "stroke-width=\"1\"",
    );
    let mut title = if f.axis.is_log() {
        format!("{} (log scale)", chart.axis_label)
    } else {
        chart.axis_label.clone()
    };
    if !chart.complete() {
        title.push_str(&format!(
            "; only the outliers counted of {} hosts",
            chart.hosts
        ));
    }
    let at = ((f.x.0 + f.x.1) / 2.0, bottom + 32.0);
    svg.text(at, Anchor::Middle, "fill=\"#5f6368\"", &title);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(values: &[f64]) -> DotChart {
        DotChart {
            title: "os.syscall: getppid".into(),
            axis_label: "time per operation".into(),
            unit: Unit::Ns,
            median: values[values.len() / 2],
            band: (values[0], values[values.len() - 1]),
            hosts: values.len(),
            dots: values
                .iter()
                .enumerate()
                .map(|(i, v)| Dot {
                    name: format!("host-{i}"),
                    value: *v,
                    outlier: *v > 300.0,
                })
                .collect(),
        }
    }

    #[test]
    fn every_host_is_a_dot_and_outliers_have_their_colour() {
        let svg = render(&chart(&[190.0, 195.0, 200.0, 400.0])).unwrap_or_default();
        assert_eq!(svg.matches("<circle").count(), 4);
        assert_eq!(svg.matches(&format!("fill=\"{}\"", color(1))).count(), 1);
        assert!(svg.contains(">host-3</text>") && svg.contains(">400 ns</text>"));
        assert!(svg.contains("fleet p10–p90, outliers included: 190–400 ns"));
        assert!(!svg.contains("NaN"));
        assert_eq!(
            render(&DotChart {
                dots: vec![],
                ..chart(&[1.0])
            }),
            None
        );
    }

    #[test]
    fn thousands_of_hosts_are_a_histogram_of_fixed_size_with_the_outliers_counted() {
        let mut values: Vec<f64> = (0..5000).map(|i| 190.0 + (i % 20) as f64).collect();
        values.extend([400.0, 401.0, 401.5, 402.0]);
        let svg = render(&chart(&values)).unwrap_or_default();
        assert_eq!(svg.matches("<circle").count(), 0, "no dot per host");
        assert!(svg.matches("<rect").count() <= BINS * 2 + 1);
        assert!(svg.len() < 30_000, "{} bytes", svg.len());
        assert!(svg.contains(">4 outliers</text>") && svg.contains("4 outlier(s): 400–402 ns"));
        // The database sent only the outliers and the typical host: only they are counted.
        let reduced = DotChart {
            hosts: 10_000,
            ..chart(&[200.0, 400.0, 410.0])
        };
        let svg = render(&reduced).unwrap_or_default();
        assert!(
            svg.contains("only the outliers counted of 10000 hosts"),
            "{svg}"
        );
        assert!(svg.contains("1 outlier(s): 410 ns") && !svg.contains("host(s)"));
    }
}
