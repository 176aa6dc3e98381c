//! What the HTML template shows of one experiment, as plain strings: about, methodology,
//! estimates, the metric and series tables (the cells of the terminal and markdown tables),
//! charts, artifacts, findings, or why it was skipped or failed.
//!
//! Pure: built from an [`ExperimentResult`]. Fields named `*_html` are already escaped (prose
//! through [`rich`], charts by `charts`); the template escapes every other string.

use super::artifacts::{self, FlameView, TextView};
use super::rich::rich;
use crate::model::CacheInfo;
use crate::model::units;
use crate::model::{ExperimentResult, Status};
use crate::report::charts::{self, Chart};
use crate::report::format;

/// One table row: its cells and whether the measurement is noisy.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Cells in header order.
    pub cells: Vec<String>,
    /// Flag the row (CV or CI width above the noise threshold).
    pub noisy: bool,
}

impl Row {
    /// A row that is not flagged.
    pub fn plain(cells: Vec<String>) -> Row {
        Row {
            cells,
            noisy: false,
        }
    }
}

/// A table with headers.
#[derive(Debug, Clone, PartialEq)]
pub struct TableView {
    /// Caption (empty for the metrics table).
    pub caption: String,
    /// Column headers.
    pub headers: Vec<String>,
    /// Rows.
    pub rows: Vec<Row>,
}

impl TableView {
    /// A table of `headers` and `rows` none of which is flagged (the diagnoses' tables).
    pub fn plain(
        caption: impl Into<String>,
        headers: impl IntoIterator<Item = impl Into<String>>,
        rows: impl IntoIterator<Item = Vec<String>>,
    ) -> TableView {
        TableView {
            caption: caption.into(),
            headers: headers.into_iter().map(Into::into).collect(),
            rows: rows.into_iter().map(Row::plain).collect(),
        }
    }
}

/// A finding: key and text.
#[derive(Debug, Clone, PartialEq)]
pub struct FindingView {
    /// Stable key.
    pub key: String,
    /// Text for people, as HTML.
    pub text_html: String,
}

/// One experiment's section.
#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentView {
    /// Experiment id.
    pub id: String,
    /// HTML id of the section.
    pub anchor: String,
    /// Title.
    pub title: String,
    /// `ok`, `skipped` or `failed`.
    pub status: &'static str,
    /// How long it took, for people (empty when not recorded).
    pub elapsed: String,
    /// What it measures, as HTML.
    pub measures_html: String,
    /// The methodology, as HTML.
    pub methodology_html: String,
    /// Where the method comes from.
    pub references: Vec<String>,
    /// Estimate lines (with the measured/estimated ratio), as HTML.
    pub estimates_html: Vec<String>,
    /// Metrics table, if any metric.
    pub metrics: Option<TableView>,
    /// One table per series.
    pub series: Vec<TableView>,
    /// Charts.
    pub charts: Vec<Chart>,
    /// Flame graphs.
    pub flames: Vec<FlameView>,
    /// Other artifacts.
    pub texts: Vec<TextView>,
    /// Findings.
    pub findings: Vec<FindingView>,
    /// Skip reason and hint, as HTML.
    pub skip_html: Option<(String, String)>,
    /// Failure, as HTML.
    pub error_html: Option<String>,
}

/// An HTML id from an experiment id: letters, digits, `-` and `_` kept, the rest `-`.
pub fn anchor(id: &str) -> String {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    format!("exp-{safe}")
}

/// The view of `r`; `caches` annotate latency charts with the sysfs sizes. `bars` draws the
/// metrics as bar charts (a bench); a diagnosis shows them as key figures instead.
pub fn experiment(r: &ExperimentResult, caches: &[CacheInfo], bars: bool) -> ExperimentView {
    let ok = r.status == Status::Ok;
    let skip = (r.status == Status::Skipped).then(|| {
        r.skip.as_ref().map_or_else(
            || ("no reason recorded".to_string(), String::new()),
            |s| (rich(&s.reason), rich(&s.hint)),
        )
    });
    let error = (r.status == Status::Failed)
        .then(|| rich(r.error.as_deref().unwrap_or("no error recorded")));
    ExperimentView {
        id: r.id.clone(),
        anchor: anchor(&r.id),
        title: r.about.title.clone(),
        status: r.status.as_str(),
        elapsed: elapsed(r.elapsed_ns),
        measures_html: rich(&r.about.measures),
        methodology_html: rich(&r.about.methodology),
        references: r.about.references.clone(),
        estimates_html: r
            .estimates
            .iter()
            .map(|e| rich(&format::estimate_line(e, &r.metrics)))
            .collect(),
        metrics: metrics_table(r),
        series: if ok { series_tables(r) } else { Vec::new() },
        charts: if ok && bars {
            charts::for_result(r, caches)
        } else if ok {
            charts::curves(r, caches)
        } else {
            Vec::new()
        },
        flames: artifacts::flames(&r.id, &r.artifacts),
        texts: artifacts::texts(&r.artifacts),
        findings: r
            .findings
            .iter()
            .map(|f| FindingView {
                key: f.key.clone(),
                text_html: rich(&f.text),
            })
            .collect(),
        skip_html: skip,
        error_html: error,
    }
}

fn elapsed(ns: u64) -> String {
    if ns == 0 {
        String::new()
    } else {
        units::duration_ns(ns as f64)
    }
}

fn metrics_table(r: &ExperimentResult) -> Option<TableView> {
    if r.metrics.is_empty() {
        return None;
    }
    let (headers, rows) = format::metric_table(&r.metrics);
    Some(TableView {
        caption: format::machine_line(r).unwrap_or_default(),
        headers,
        rows: rows
            .into_iter()
            .zip(&r.metrics)
            .map(|(cells, m)| Row {
                cells,
                noisy: format::metric_is_noisy(m),
            })
            .collect(),
    })
}

fn series_tables(r: &ExperimentResult) -> Vec<TableView> {
    r.series
        .iter()
        .map(|s| {
            let (headers, rows) = format::series_table(s);
            TableView {
                caption: format!("{} by {} ({} points)", s.name, s.x_label, s.points.len()),
                headers,
                rows: (rows.into_iter().zip(&s.points))
                    .map(|(cells, p)| Row {
                        cells,
                        noisy: format::is_noisy(&p.summary),
                    })
                    .collect(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::sample_run;

    #[test]
    fn anchors_are_safe_ids() {
        assert_eq!(anchor("mem.latency"), "exp-mem-latency");
        assert_eq!(anchor("a b\"<c>"), "exp-a-b--c-");
    }

    #[test]
    fn fixture_views_carry_tables_charts_and_reasons() {
        let run = sample_run();
        let views: Vec<ExperimentView> = run
            .results
            .iter()
            .map(|r| experiment(r, &run.host.caches, true))
            .collect();
        let syscall = &views[0];
        assert_eq!(syscall.status, "ok");
        assert_eq!(syscall.metrics.as_ref().map(|t| t.rows.len()), Some(3));
        assert!(syscall.metrics.as_ref().is_some_and(|t| t.rows[2].noisy));
        assert_eq!(syscall.estimates_html.len(), 1);
        assert!(syscall.methodology_html.contains("<code>iters</code>"));
        assert_eq!(syscall.charts.len(), 1);
        assert_eq!(views[1].series.len(), 1);
        assert_eq!(views[1].charts.len(), 1);
        let skipped = &views[2];
        assert!(
            skipped
                .skip_html
                .as_ref()
                .is_some_and(|(r, _)| r.contains("O_DIRECT"))
        );
        assert!(skipped.charts.is_empty());
        let error = views[3].error_html.as_deref().unwrap_or_default();
        assert!(error.contains("<code>ulimit -n</code>"), "{error}");
    }
}
