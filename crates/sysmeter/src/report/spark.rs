//! A series in one terminal line: a unicode sparkline of its medians (log scale when they
//! span more than a decade), the first and last points, and what the experiment's findings
//! mark on its first curve (a knee).
//!
//! Pure: strings from a [`Series`]; numbers from [`crate::model::units`].

use crate::model::units::value;
use crate::model::{Finding, Series, Unit};

/// The eight bar heights of a sparkline.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// Most characters a sparkline takes; longer series are sampled evenly.
pub const MAX_WIDTH: usize = 40;

/// Bars for `ys` (at most [`MAX_WIDTH`]); empty when there is nothing finite to draw.
pub fn sparkline(ys: &[f64]) -> String {
    let finite: Vec<f64> = ys.iter().copied().filter(|y| y.is_finite()).collect();
    let (Some(lo), Some(hi)) = (
        finite.iter().copied().reduce(f64::min),
        finite.iter().copied().reduce(f64::max),
    ) else {
        return String::new();
    };
    let log = lo > 0.0 && hi / lo > 10.0;
    let scale = |y: f64| if log { y.ln() } else { y };
    let (a, b) = (scale(lo), scale(hi));
    let width = finite.len().min(MAX_WIDTH);
    (0..width)
        .map(|i| {
            let y = finite[i * finite.len() / width];
            let t = if b > a { (scale(y) - a) / (b - a) } else { 0.5 };
            BARS[((t * 7.0).round() as usize).min(7)]
        })
        .collect()
}

/// `name by x: ▁▂▅█ first at x0 → last at xn`.
pub fn line(series: &Series) -> String {
    let ys: Vec<f64> = series.points.iter().map(|p| p.summary.median).collect();
    let mut out = format!("{} by {}: {}", series.name, series.x_label, sparkline(&ys));
    let (first, last) = (series.points.first(), series.points.last());
    if let (Some(f), Some(l)) = (first, last) {
        out.push_str(&format!(
            " {} at {} → {} at {}",
            value(f.summary.median, series.y_unit),
            value(f.x, series.x_unit),
            value(l.summary.median, series.y_unit),
            value(l.x, series.x_unit),
        ));
    }
    out
}

/// [`line`](fn@line) with the experiment's `knee` finding marked: `… · knee at 8 threads`. The knee is
/// found on an experiment's first curve, so only that one gets the mark.
pub fn line_with_knee(series: &Series, findings: &[Finding]) -> String {
    let mut out = line(series);
    let knee = findings
        .iter()
        .find(|f| f.key == "knee")
        .and_then(|f| f.value);
    if let Some(k) = knee {
        let at = match series.x_unit {
            // A count of threads or files: the nearest whole one.
            Unit::Count => format!("{} {}", value(k.round(), Unit::Count), series.x_label),
            unit => value(k, unit),
        };
        out.push_str(&format!(" · knee at {at}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparklines_rise_with_the_values_and_stay_short() {
        assert_eq!(
            sparkline(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]),
            "▁▂▃▄▅▆▇█"
        );
        assert_eq!(sparkline(&[]), "");
        assert_eq!(sparkline(&[5.0, 5.0]), "▅▅");
        let long: Vec<f64> = (1..=200).map(f64::from).collect();
        assert_eq!(sparkline(&long).chars().count(), MAX_WIDTH);
        // Over more than a decade the scale is logarithmic: 1, 10, 100 are evenly spaced.
        assert_eq!(sparkline(&[1.0, 10.0, 100.0]), "▁▅█");
    }

    #[test]
    fn the_knee_is_marked_on_the_first_curve_in_whole_threads() {
        use crate::model::{SeriesPoint, Summary};
        let point = |x: f64, y: f64| SeriesPoint {
            x,
            summary: Summary {
                median: y,
                ..Summary::default()
            },
            cycles: None,
        };
        let series = Series {
            name: "per-block latency".into(),
            x_label: "threads".into(),
            x_unit: Unit::Count,
            y_unit: Unit::Ns,
            points: vec![point(1.0, 50e3), point(8.0, 60e3), point(32.0, 500e3)],
        };
        let knee = Finding::new("knee", "it climbs".into(), Some(7.9996));
        assert_eq!(
            line_with_knee(&series, &[knee]),
            "per-block latency by threads: ▁▁█ 50.0 µs at 1 → 500 µs at 32 · knee at 8 threads"
        );
        assert!(!line(&series).contains("knee"));
    }
}
