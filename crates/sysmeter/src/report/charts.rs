//! SVG charts of an experiment's results, hand-written (no JavaScript, no fonts, no network):
//! every [`Series`] group as an x/y line chart with CI bands (log axes when the data span a
//! wide range; a latency-by-size curve gets the detected cache levels marked), bandwidth
//! metrics named `kernel, LEVEL (SIZE), N threads` as bandwidth-by-size curves, and the
//! remaining scalar metrics as a horizontal bar chart per unit.
//!
//! Pure: an [`ExperimentResult`] (and the host's cache list) in, SVG strings out. Depends on
//! `model`, `host` types and `model::units`. Drawn by hand rather than with plotters so that
//! every chart type shares one look, byte and time axes get the ticks people read (4 KiB,
//! 16 KiB, …; decades of ns), and every text node goes through one tested escape function.
//!
//! [`Series`]: crate::model::Series

mod answers;
mod axis;
mod bandwidth;
mod bars;
pub mod change;
pub mod dots;
mod hierarchy;
pub mod quantity;
pub mod svg;
mod xy;

pub use answers::{scale_fit, time_by_call};
use axis::ScaleMode;
use bars::{Bar, BarChart};
pub use quantity::Quantity;
use xy::{Level, Line, Point, XyChart};

use crate::model::CacheInfo;
use crate::model::alloc::{ALLOC_ID, LIVE_HEAP, PEAK_LIVE, peak};
use crate::model::{ExperimentResult, IntervalBasis, Metric, Series, Unit, units};

/// Width of every chart's view box (the page's content width).
const WIDTH: f64 = 1040.0;
/// Approximate width of one character of 12 px sans-serif, for the layout of the bar, change
/// and dot charts.
const CHAR_W: f64 = 6.4;

/// One rendered chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Title, e.g. `random, stride 64 B by working set`.
    pub title: String,
    /// One sentence saying what to read from the chart.
    pub caption: String,
    /// The quantity of every line or bar drawn, in drawing order: a chart is right only when
    /// they are all the same (checked by `charts::tests` over a run of every kind).
    pub quantities: Vec<Quantity>,
    /// The `<svg>` element.
    pub svg: String,
}

impl Chart {
    /// The chart of `svg` with its texts, when it was drawn (a renderer answers `None` when
    /// there is nothing to draw).
    fn drawn(
        svg: Option<String>,
        title: String,
        caption: String,
        quantities: Vec<Quantity>,
    ) -> Option<Chart> {
        Some(Chart {
            title,
            caption,
            quantities,
            svg: svg?,
        })
    }
}

/// What a y axis of `unit` shows.
fn unit_title(unit: Unit) -> &'static str {
    match unit {
        Unit::Ns => "time per operation",
        Unit::BytesPerSec => "throughput",
        Unit::Bytes => "size",
        Unit::Count => "value",
    }
}

/// Every chart of `r`: series first (the main curves), then bandwidth, then metric bars.
pub fn for_result(r: &ExperimentResult, caches: &[CacheInfo]) -> Vec<Chart> {
    let (mut charts, rest) = curves_and_rest(r, caches);
    charts.extend(metric_bars(&r.id, &rest));
    charts
}

/// The curves of `r` (series and bandwidth), without bars of its other metrics: what a
/// diagnosis shows, whose metrics are key figures of different kinds, not one axis.
pub fn curves(r: &ExperimentResult, caches: &[CacheInfo]) -> Vec<Chart> {
    curves_and_rest(r, caches).0
}

/// The bars of `r`'s metrics alone (a trace's time by call).
pub fn bars(r: &ExperimentResult) -> Vec<Chart> {
    let all: Vec<&Metric> = r.metrics.iter().collect();
    metric_bars(&r.id, &all)
}

/// The curves, and the metrics no curve used.
fn curves_and_rest<'r>(
    r: &'r ExperimentResult,
    caches: &[CacheInfo],
) -> (Vec<Chart>, Vec<&'r Metric>) {
    let mut charts = series_charts(r, caches);
    let (bandwidth, used) = bandwidth::charts(&r.id, &r.metrics);
    for (threads, chart) in bandwidth {
        let title = match threads {
            1 => "Bandwidth by working-set size, 1 thread".to_string(),
            n => format!("Bandwidth by working-set size, {n} threads (size per thread)"),
        };
        let caption = "Read where each curve drops: that is where the working set leaves a \
                       cache level; higher is faster."
            .to_string();
        let quantities = vec![Quantity::Throughput; chart.lines.len()];
        charts.extend(Chart::drawn(xy::render(&chart), title, caption, quantities));
    }
    let rest: Vec<&Metric> = r
        .metrics
        .iter()
        .filter(|m| !used.contains(&m.name))
        .collect();
    (charts, rest)
}

/// The quantity of a series' y values.
fn y_quantity(s: &Series) -> Quantity {
    Quantity::of(&s.name, s.y_unit)
}

/// Series grouped by (x label, x unit, y quantity), in order of first appearance.
fn group_series(series: &[Series]) -> Vec<Vec<&Series>> {
    let mut groups: Vec<Vec<&Series>> = Vec::new();
    for s in series {
        let same = |g: &&mut Vec<&Series>| {
            g.first().is_some_and(|f| {
                f.x_label == s.x_label && f.x_unit == s.x_unit && y_quantity(f) == y_quantity(s)
            })
        };
        match groups.iter_mut().find(|g| same(g)) {
            Some(g) => g.push(s),
            None => groups.push(vec![s]),
        }
    }
    groups
}

/// One line chart per series group.
fn series_charts(r: &ExperimentResult, caches: &[CacheInfo]) -> Vec<Chart> {
    let annotate = hierarchy::has_levels(&r.findings);
    let mut charts = Vec::new();
    for group in group_series(&r.series) {
        let Some(first) = group.first() else { continue };
        let lines: Vec<Line> = group.iter().map(|s| line(s)).collect();
        let latency = annotate && first.x_unit == Unit::Bytes && first.y_unit == Unit::Ns;
        let (markers, mut levels) = if latency {
            hierarchy::annotations(&r.findings, caches)
        } else {
            (Vec::new(), Vec::new())
        };
        levels.extend(peak_level(r, &group));
        let mode = if latency {
            ScaleMode::Log
        } else {
            ScaleMode::Auto
        };
        let names: Vec<&str> = group.iter().map(|s| s.name.as_str()).collect();
        let title = format!("{} by {}", names.join(" · "), first.x_label);
        let quantity = y_quantity(first);
        let chart = XyChart {
            title: format!("{}: {title}", r.id),
            x_label: Quantity::of(&first.x_label, first.x_unit).axis_title(&first.x_label),
            x_unit: first.x_unit,
            x_mode: mode,
            y_label: quantity.axis_title(unit_title(first.y_unit)),
            y_unit: first.y_unit,
            y_mode: mode,
            lines,
            markers,
            levels,
        };
        let sampled = (group.iter().flat_map(|s| &s.points)).any(|p| p.summary.n > 1);
        let caption = curve_caption(quantity, &first.x_label, latency, sampled);
        let quantities = group.iter().map(|s| y_quantity(s)).collect();
        charts.extend(Chart::drawn(xy::render(&chart), title, caption, quantities));
    }
    charts
}

/// The peak of live bytes, marked on the chart of the live heap: the heap is sampled at
/// ticks and the peak may fall between two, so the chart's y range is made to hold it.
fn peak_level(r: &ExperimentResult, group: &[&Series]) -> Option<Level> {
    if r.id != ALLOC_ID || !group.iter().any(|s| s.name == LIVE_HEAP) {
        return None;
    }
    let (bytes, after) = peak(r)?;
    let at = after.map_or_else(String::new, |ns| {
        format!(" after {}", units::duration_ns(ns))
    });
    Some(Level {
        y: bytes,
        from: None,
        to: None,
        label: Some(format!(
            "{PEAK_LIVE} {}{at}",
            units::value(bytes, Unit::Bytes)
        )),
    })
}

/// What to read from a curve of `quantity` by `x`; `sampled` when its points have samples
/// (else each is one observation, with no CI to draw).
fn curve_caption(quantity: Quantity, x: &str, latency: bool, sampled: bool) -> String {
    if !sampled {
        return format!(
            "How the {} changes with {x}; each point is one observation (no interval).",
            quantity.as_str()
        );
    }
    if latency {
        return "Read the plateaus: each is a cache level, and the steps between them are where \
                the working set stops fitting; the band is the within-run 95% CI of the median."
            .to_string();
    }
    format!(
        "How the median {} changes with {x}; the shaded band around each line is its within-run 95% CI.",
        quantity.as_str()
    )
}

/// A series as a chart line (median and CI at each x).
fn line(s: &Series) -> Line {
    Line {
        name: s.name.clone(),
        points: s
            .points
            .iter()
            .filter(|p| p.x.is_finite() && p.summary.median.is_finite())
            .map(|p| Point {
                x: p.x,
                y: p.summary.median,
                lo: p.summary.ci95.0,
                hi: p.summary.ci95.1,
            })
            .collect(),
    }
}

/// What to read from a bar chart of `kind`, with or without run-to-run bands.
fn bars_caption(kind: Quantity, bands: bool) -> String {
    let mut caption = format!(
        "Compare the bar lengths: each is a metric's median {}, and a whisker (within-run 95% \
         CI of the median) wider than the gap between two bars means the difference is within \
         this run's noise.",
        kind.as_str()
    );
    if bands {
        caption.push_str(
            " The shaded band is the run-to-run interval: where the next run's median should \
             fall on this machine (95%).",
        );
    }
    caption
}

/// A bar chart per quantity of the metrics (several only when an experiment mixes them).
fn metric_bars(id: &str, metrics: &[&Metric]) -> Vec<Chart> {
    let quantity = |m: &Metric| Quantity::of(&m.name, m.unit);
    let mut kinds: Vec<(Quantity, Unit)> = Vec::new();
    for m in metrics {
        if !kinds.iter().any(|(q, _)| *q == quantity(m)) {
            kinds.push((quantity(m), m.unit));
        }
    }
    let mut charts = Vec::new();
    for (kind, unit) in &kinds {
        let shown: Vec<&&Metric> = metrics
            .iter()
            .filter(|m| quantity(m) == *kind && m.summary.median.is_finite())
            .collect();
        let bars: Vec<Bar> = shown
            .iter()
            .map(|m| Bar {
                name: m.name.clone(),
                // With rounds the table's figure and range: the round medians'.
                value: m.figure(),
                lo: m
                    .rounds
                    .as_ref()
                    .map_or(m.summary.ci95.0, |r| fold(&r.medians, f64::min)),
                hi: m
                    .rounds
                    .as_ref()
                    .map_or(m.summary.ci95.1, |r| fold(&r.medians, f64::max)),
                band: (m.run_to_run)
                    .filter(|i| i.basis != IntervalBasis::ThisRun)
                    .map(|i| (i.lo, i.hi, i.words(m.unit))),
                at_least: m.at_least,
            })
            .collect();
        let what = match bars.iter().any(|b| b.band.is_some()) {
            true => "median, whiskers: within-run 95% CI, band: run to run",
            false => "median, whiskers: within-run 95% CI",
        };
        let title = if kinds.len() == 1 {
            format!("Metrics ({what})")
        } else {
            format!("Metrics in {} ({what})", kind.as_str())
        };
        let caption = bars_caption(*kind, bars.iter().any(|b| b.band.is_some()));
        let chart = BarChart {
            title: format!("{id}: {title}"),
            axis_label: kind.axis_title(&format!("median {}", unit_title(*unit))),
            unit: *unit,
            bars,
        };
        let quantities = shown.iter().map(|m| quantity(m)).collect();
        charts.extend(Chart::drawn(
            bars::render(&chart),
            title,
            caption,
            quantities,
        ));
    }
    charts
}

#[cfg(test)]
mod tests;

/// `pick` over `values` (the lowest or the highest of the round medians).
fn fold(values: &[f64], pick: fn(f64, f64) -> f64) -> f64 {
    values.iter().copied().reduce(pick).unwrap_or(f64::NAN)
}
