//! Timelines in the terminal: series sampled over time (x = "seconds since start", as
//! `sysmeter run` records them) are shown side by side in one table, one row per interval
//! like vmstat, instead of one table per series. Columns that are zero throughout are left
//! out and named below the table; long runs are shown as at most [`MAX_ROWS`] rows, each
//! the mean of consecutive intervals (the JSON output keeps every sample).
//!
//! Pure: series in, text out. Depends on `model` and `model::units`.

use crate::model::units;

use crate::model::Series;

/// The x label that marks a timeline.
pub const TIME_AXIS: &str = "seconds since start";
/// Most rows of a timeline table.
pub const MAX_ROWS: usize = 60;

/// Whether `series` form one timeline: at least two series, all over time, with the same
/// x values.
pub fn is_timeline(series: &[Series]) -> bool {
    let Some(first) = series.first() else {
        return false;
    };
    series.len() >= 2
        && series.iter().all(|s| {
            s.x_label == TIME_AXIS
                && s.points.len() == first.points.len()
                && s.points.iter().zip(&first.points).all(|(a, b)| a.x == b.x)
        })
}

/// Mean of `values[range]`.
fn mean(values: &[f64]) -> f64 {
    values.iter().sum::<f64>() / values.len().max(1) as f64
}

/// The timeline as table lines (call only when [`is_timeline`] holds).
pub fn render(series: &[Series]) -> Vec<String> {
    let (shown, zero): (Vec<&Series>, Vec<&Series>) = series
        .iter()
        .partition(|s| s.points.iter().any(|p| p.summary.median != 0.0));
    let n = series.first().map_or(0, |s| s.points.len());
    let bucket = n.div_ceil(MAX_ROWS).max(1);
    let mut header = vec!["t (s)".to_string()];
    header.extend(shown.iter().map(|s| s.name.clone()));
    let mut table = super::table::styled(header, 0..=shown.len());
    let xs: Vec<f64> = series
        .first()
        .map(|s| s.points.iter().map(|p| p.x).collect())
        .unwrap_or_default();
    for (row, chunk) in xs.chunks(bucket).enumerate() {
        let start = row * bucket;
        let end = start + chunk.len();
        let mut cells = vec![format!("{:.2}", chunk.last().copied().unwrap_or(0.0))];
        for s in &shown {
            let ys: Vec<f64> = s.points[start..end]
                .iter()
                .map(|p| p.summary.median)
                .collect();
            cells.push(units::value(mean(&ys), s.y_unit));
        }
        table.add_row(cells);
    }
    let mut lines = vec![format!("timeline ({n} samples):"), table.to_string()];
    if bucket > 1 {
        lines.push(format!(
            "each row is the mean of {bucket} intervals; --format json has every sample"
        ));
    }
    if !zero.is_empty() {
        let names: Vec<&str> = zero.iter().map(|s| s.name.as_str()).collect();
        lines.push(format!("zero throughout: {}", names.join(", ")));
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SeriesPoint, Summary, Unit};

    fn series(name: &str, ys: &[f64]) -> Series {
        Series {
            name: name.to_string(),
            x_label: TIME_AXIS.to_string(),
            x_unit: Unit::Count,
            y_unit: Unit::Count,
            points: ys
                .iter()
                .enumerate()
                .map(|(i, &y)| SeriesPoint {
                    x: (i + 1) as f64 * 0.1,
                    summary: Summary {
                        median: y,
                        ..Summary::default()
                    },
                    cycles: None,
                })
                .collect(),
        }
    }

    #[test]
    fn timelines_are_one_table_without_all_zero_columns() {
        let s = vec![
            series("cpu %", &[10.0, 20.0]),
            series("steal %", &[0.0, 0.0]),
        ];
        assert!(is_timeline(&s));
        let text = render(&s).join("\n");
        assert!(text.contains("cpu %"), "{text}");
        assert!(text.contains("0.20"), "{text}");
        assert!(text.contains("zero throughout: steal %"), "{text}");
        assert!(!text.contains("│ steal"), "{text}");
    }

    #[test]
    fn long_timelines_are_averaged_into_at_most_max_rows() {
        let ys: Vec<f64> = (0..130).map(|i| i as f64).collect();
        let s = vec![series("a", &ys), series("b", &ys)];
        let lines = render(&s);
        let rows = lines[1].lines().filter(|l| l.starts_with('│')).count();
        assert_eq!(rows, 1 + 130_usize.div_ceil(3), "header + rows");
        assert!(lines[2].contains("mean of 3 intervals"));
    }

    #[test]
    fn other_curves_are_not_timelines() {
        let mut s = vec![series("a", &[1.0]), series("b", &[1.0])];
        s[1].x_label = "working set".to_string();
        assert!(!is_timeline(&s));
        assert!(!is_timeline(&s[..1]));
    }
}
