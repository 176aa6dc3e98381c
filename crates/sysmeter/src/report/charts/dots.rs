//! The fleet chart of one metric: one row per host with its value as a dot, the fleet's
//! p10–p90 as a shaded band and its median as a line, outliers in a second colour. Values
//! share one axis (log when they span `AUTO_LOG_SPAN` or more, as the bar charts do).
//!
//! Pure: a description in, an SVG string out. Depends on `axis`, `svg` and `model::units`.

use super::axis::{AUTO_LOG_SPAN, Axis, ScaleMode};
use super::svg::{Anchor, Svg, color};
use super::{CHAR_W, WIDTH};
use crate::model::Unit;
use crate::model::units;

const ROW: f64 = 22.0;

/// One host's dot.
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
    /// The hosts, top to bottom.
    pub dots: Vec<Dot>,
}

fn fit(chart: &DotChart) -> Axis {
    let values: Vec<f64> = chart.dots.iter().map(|d| d.value).collect();
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
    let name_w = chart
        .dots
        .iter()
        .map(|d| d.name.chars().count())
        .max()
        .unwrap_or(0);
    let f = Frame {
        axis: fit(chart),
        x: (name_w as f64 * CHAR_W + 16.0, WIDTH - 86.0),
        y: (8.0, 8.0 + ROW * chart.dots.len() as f64),
    };
    let height = f.y.1 + 44.0;
    let mut svg = Svg::new(WIDTH, height, &chart.title);
    draw_fleet(&mut svg, chart, &f, height);
    for (i, d) in chart.dots.iter().enumerate() {
        let y = f.y.0 + ROW * i as f64 + ROW / 2.0;
        svg.text(
            (f.x.0 - 6.0, y + 4.0),
            Anchor::End,
            "fill=\"#222\"",
            &d.name,
        );
        let value = units::value(d.value, chart.unit);
        let fill = if d.outlier { color(1) } else { color(0) };
        let tip = format!("{}: {value}", d.name);
        let x = f.px(d.value);
        svg.circle((x, y), 5.0, fill, Some(&tip));
        svg.text((x + 9.0, y + 4.0), Anchor::Start, "fill=\"#222\"", &value);
    }
    Some(svg.finish())
}

/// The p10–p90 band, the grid and tick labels, the median line and the axis title.
fn draw_fleet(svg: &mut Svg, chart: &DotChart, f: &Frame, height: f64) {
    let (top, bottom) = f.y;
    let (lo, hi) = (f.px(chart.band.0), f.px(chart.band.1));
    let band = units::range(chart.band.0, chart.band.1, chart.unit);
    let tip = format!("fleet p10–p90: {band}");
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
        svg.text(at, Anchor::Middle, "fill=\"#444\"", &f.axis.label(t));
    }
    let m = f.px(chart.median);
    let dash = "stroke-width=\"1.5\" stroke-dasharray=\"4 3\"";
    svg.line((m, top), (m, bottom), "#333", dash);
    svg.line((f.x.0, top), (f.x.0, bottom), "#666", "stroke-width=\"1\"");
    let title = if f.axis.is_log() {
        format!("{} (log scale)", chart.axis_label)
    } else {
        chart.axis_label.clone()
    };
    let centre = ((f.x.0 + f.x.1) / 2.0, height - 8.0);
    svg.text(centre, Anchor::Middle, "fill=\"#222\"", &title);
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
        assert!(svg.contains("fleet p10–p90: 190–400 ns"));
        assert!(!svg.contains("NaN"));
        assert_eq!(
            render(&DotChart {
                dots: vec![],
                ..chart(&[1.0])
            }),
            None
        );
    }
}
