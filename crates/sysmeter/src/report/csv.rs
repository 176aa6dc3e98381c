//! CSV output: one row per metric and one per series point, raw numbers (ns, bytes) at full
//! precision, for spreadsheets and scripts. Skipped and failed experiments (and an ok one
//! with nothing measured) get one row with the status and empty numbers.
//!
//! Pure: never formats numbers for people (that is `format`'s job).

use super::ReportError;
use crate::model::{ExperimentResult, Metric, RunRecord, Series, SeriesPoint, Summary};

/// Column names, in order. `within_run_ci_lo`/`_hi` are the within-run 95% CI of the median
/// (this run's samples); `run_to_run_*` the interval the next run's median should fall in on
/// this machine (`model::interval`; empty where a metric has none), appended last so the
/// older columns keep their places.
pub(super) const HEADER: [&str; 30] = [
    "run_id",
    "experiment",
    "status",
    "metric",
    "unit",
    "n",
    "min",
    "p5",
    "median",
    "mean",
    "p95",
    "p99",
    "max",
    "stddev",
    "cv",
    "within_run_ci_lo",
    "within_run_ci_hi",
    "outliers",
    "cycles_median",
    "subtracted_overhead_ns",
    "x",
    "core_cycles_median",
    "round_median",
    "round_cv",
    "machine_core_ghz",
    "machine_stable",
    "run_to_run_lo",
    "run_to_run_hi",
    "run_to_run_basis",
    "run_to_run_runs",
];

/// The whole run as CSV with a header row.
pub(super) fn render(run: &RunRecord) -> Result<String, ReportError> {
    let csv_err = |source| ReportError::Csv {
        run: run.id.clone(),
        source,
    };
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    writer.write_record(HEADER).map_err(csv_err)?;
    for result in &run.results {
        for row in rows(run, result) {
            writer.write_record(&row).map_err(csv_err)?;
        }
    }
    let finish_err = |detail: String| ReportError::CsvFinish {
        run: run.id.clone(),
        detail,
    };
    let bytes = writer
        .into_inner()
        .map_err(|e| finish_err(e.error().to_string()))?;
    String::from_utf8(bytes).map_err(|e| finish_err(e.to_string()))
}

/// All rows of one experiment.
fn rows(run: &RunRecord, result: &ExperimentResult) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = result
        .metrics
        .iter()
        .map(|m| metric_row(run, result, m))
        .collect();
    for series in &result.series {
        rows.extend(
            series
                .points
                .iter()
                .map(|p| point_row(run, result, series, p)),
        );
    }
    if rows.is_empty() {
        let mut row = prefix(run, result, "", "");
        row.resize(HEADER.len(), String::new());
        rows.push(row);
    }
    rows
}

fn prefix(run: &RunRecord, result: &ExperimentResult, metric: &str, unit: &str) -> Vec<String> {
    [
        run.id.as_str(),
        result.id.as_str(),
        result.status.as_str(),
        metric,
        unit,
    ]
    .map(str::to_string)
    .to_vec()
}

/// The statistics columns, `n` through `outliers`.
fn stats(s: &Summary) -> Vec<String> {
    let mut cells = vec![s.n.to_string()];
    cells.extend(
        [
            s.min, s.p5, s.median, s.mean, s.p95, s.p99, s.max, s.stddev, s.cv, s.ci95.0, s.ci95.1,
        ]
        .map(|v| v.to_string()),
    );
    cells.push(s.outliers.to_string());
    cells
}

fn cycles(c: Option<&Summary>) -> String {
    c.map(|c| c.median.to_string()).unwrap_or_default()
}

fn metric_row(run: &RunRecord, result: &ExperimentResult, m: &Metric) -> Vec<String> {
    let mut row = prefix(run, result, &m.name, m.unit.as_str());
    row.extend(stats(&m.summary));
    row.push(cycles(m.cycles.as_ref()));
    row.push(m.subtracted_overhead_ns.to_string());
    row.push(String::new());
    row.push(cycles(m.core_cycles.as_ref()));
    let rounds = m.rounds.as_ref();
    row.push(rounds.map(|r| r.median.to_string()).unwrap_or_default());
    row.push(rounds.map(|r| r.cv.to_string()).unwrap_or_default());
    row.extend(machine(result));
    row.extend(run_to_run(m));
    row
}

/// `run_to_run_lo`, `_hi`, `_basis` and `_runs` of a metric that has the interval.
fn run_to_run(m: &Metric) -> [String; 4] {
    match &m.run_to_run {
        Some(i) => [
            i.lo.to_string(),
            i.hi.to_string(),
            i.basis.as_str().to_string(),
            i.runs.to_string(),
        ],
        None => Default::default(),
    }
}

/// `machine_core_ghz` and `machine_stable` of an experiment measured with the probe.
fn machine(result: &ExperimentResult) -> [String; 2] {
    match &result.machine {
        Some(m) => [m.core_ghz().to_string(), m.stable.to_string()],
        None => [String::new(), String::new()],
    }
}

fn point_row(
    run: &RunRecord,
    result: &ExperimentResult,
    series: &Series,
    p: &SeriesPoint,
) -> Vec<String> {
    let mut row = prefix(run, result, &series.name, series.y_unit.as_str());
    row.extend(stats(&p.summary));
    row.push(cycles(p.cycles.as_ref()));
    row.push(String::new());
    row.push(p.x.to_string());
    row.extend([String::new(), String::new(), String::new()]);
    row.extend(machine(result));
    row.resize(HEADER.len(), String::new());
    row
}
