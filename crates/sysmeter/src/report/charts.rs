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

mod axis;
mod bandwidth;
mod bars;
pub mod dots;
mod hierarchy;
pub mod svg;
mod xy;

use axis::ScaleMode;
use bars::{Bar, BarChart};
use xy::{Line, Point, XyChart};

use crate::model::CacheInfo;
use crate::model::{ExperimentResult, Metric, Series, Unit};

/// One rendered chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// Caption for people, e.g. `random, stride 64 B by working set`.
    pub caption: String,
    /// The `<svg>` element.
    pub svg: String,
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
    let mut charts = series_charts(r, caches);
    let (bandwidth, used) = bandwidth::charts(&r.id, &r.metrics);
    for (threads, chart) in bandwidth {
        let caption = match threads {
            1 => "Bandwidth by working-set size, 1 thread".to_string(),
            n => format!("Bandwidth by working-set size, {n} threads (size per thread)"),
        };
        charts.extend(xy::render(&chart).map(|svg| Chart { caption, svg }));
    }
    let rest: Vec<&Metric> = r
        .metrics
        .iter()
        .filter(|m| !used.contains(&m.name))
        .collect();
    charts.extend(metric_bars(&r.id, &rest));
    charts
}

/// Series grouped by (x label, x unit, y unit), in order of first appearance.
fn group_series(series: &[Series]) -> Vec<Vec<&Series>> {
    let mut groups: Vec<Vec<&Series>> = Vec::new();
    for s in series {
        let same = |g: &&mut Vec<&Series>| {
            g.first().is_some_and(|f| {
                f.x_label == s.x_label && f.x_unit == s.x_unit && f.y_unit == s.y_unit
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
        let (markers, levels) = if latency {
            hierarchy::annotations(&r.findings, caches)
        } else {
            (Vec::new(), Vec::new())
        };
        let mode = if latency {
            ScaleMode::Log
        } else {
            ScaleMode::Auto
        };
        let names: Vec<&str> = group.iter().map(|s| s.name.as_str()).collect();
        let caption = format!("{} by {}", names.join(" · "), first.x_label);
        let chart = XyChart {
            title: format!("{}: {caption}", r.id),
            x_label: first.x_label.clone(),
            x_unit: first.x_unit,
            x_mode: mode,
            y_label: unit_title(first.y_unit).to_string(),
            y_unit: first.y_unit,
            y_mode: mode,
            lines,
            markers,
            levels,
        };
        charts.extend(xy::render(&chart).map(|svg| Chart { caption, svg }));
    }
    charts
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

/// A bar chart per unit of the metrics (several units only when an experiment mixes them).
fn metric_bars(id: &str, metrics: &[&Metric]) -> Vec<Chart> {
    let mut units: Vec<Unit> = Vec::new();
    for m in metrics {
        if !units.contains(&m.unit) {
            units.push(m.unit);
        }
    }
    let mut charts = Vec::new();
    for unit in &units {
        let bars: Vec<Bar> = metrics
            .iter()
            .filter(|m| m.unit == *unit && m.summary.median.is_finite())
            .map(|m| Bar {
                name: m.name.clone(),
                value: m.summary.median,
                lo: m.summary.ci95.0,
                hi: m.summary.ci95.1,
            })
            .collect();
        let caption = if units.len() == 1 {
            "Metrics (median, whiskers: 95% CI)".to_string()
        } else {
            format!("Metrics in {} (median, whiskers: 95% CI)", unit.as_str())
        };
        let chart = BarChart {
            title: format!("{id}: {caption}"),
            axis_label: format!("median {}", unit_title(*unit)),
            unit: *unit,
            bars,
        };
        charts.extend(bars::render(&chart).map(|svg| Chart { caption, svg }));
    }
    charts
}

#[cfg(test)]
mod tests;
