//! Reading rows back, the same for both backends: the `SELECT`s of a run's results and
//! metrics, and one reader per table (and per row of the fleet's queries) that takes a row's columns by position in the order
//! those `SELECT`s (and the backends' `runs` query) list them. A backend only says how one
//! column of its rows is read ([`Get`]).
//!
//! Plain values only; the conversion to the model is `rows::Decoder`'s.

use super::fleet::{HostRow, ValueRow};
use super::rows::{MetricRow, ResultRow, RunRow};

/// The results of run `$1`, in the column order of [`result_row`].
pub(super) const RESULTS_SELECT: &str =
    "SELECT seq, exp_id, status, elapsed_ns, about_json, estimates_json,
            series_json, findings_json, skip_json, error, artifacts_json,
            machine_json, summary
     FROM results WHERE run_id = $1 ORDER BY seq";

/// The metrics of run `$1`, in the column order of [`metric_row`].
pub(super) const METRICS_SELECT: &str =
    "SELECT seq, idx, name, unit, n, min, p5, median, mean, p95, p99, max, stddev,
            cv, ci_lo, ci_hi, outliers, cycles_json, subtracted_overhead_ns,
            ops_per_sample, note, samples, extra_json
     FROM metrics WHERE run_id = $1 ORDER BY seq, idx";

/// Column `i` of a backend's row as a `T`, or the backend's error `E`.
pub(super) trait Get<T, E> {
    /// The column at position `i` (from 0).
    fn at(&self, i: usize) -> Result<T, E>;
}

/// A row whose columns can be read as every type the three tables use.
pub(super) trait Columns<E>:
    Get<i64, E>
    + Get<Option<i64>, E>
    + Get<bool, E>
    + Get<String, E>
    + Get<Option<String>, E>
    + Get<f64, E>
    + Get<Option<f64>, E>
    + Get<Vec<u8>, E>
    + Get<Option<Vec<u8>>, E>
{
}

impl<E, R> Columns<E> for R where
    R: Get<i64, E>
        + Get<Option<i64>, E>
        + Get<bool, E>
        + Get<String, E>
        + Get<Option<String>, E>
        + Get<f64, E>
        + Get<Option<f64>, E>
        + Get<Vec<u8>, E>
        + Get<Option<Vec<u8>>, E>
{
}

/// A `runs` row: id, schema, kind, started_ns, finished_ns, interrupted, tool_version,
/// hostname, host_json, config_json.
pub(super) fn run_row<E>(row: &impl Columns<E>) -> Result<RunRow, E> {
    Ok(RunRow {
        id: row.at(0)?,
        schema: row.at(1)?,
        kind: row.at(2)?,
        started_ns: row.at(3)?,
        finished_ns: row.at(4)?,
        interrupted: row.at(5)?,
        tool_version: row.at(6)?,
        hostname: row.at(7)?,
        host_json: row.at(8)?,
        config_json: row.at(9)?,
    })
}

/// A `results` row of [`RESULTS_SELECT`], without its metrics.
pub(super) fn result_row<E>(row: &impl Columns<E>) -> Result<ResultRow, E> {
    Ok(ResultRow {
        seq: row.at(0)?,
        exp_id: row.at(1)?,
        status: row.at(2)?,
        elapsed_ns: row.at(3)?,
        about_json: row.at(4)?,
        estimates_json: row.at(5)?,
        series_json: row.at(6)?,
        findings_json: row.at(7)?,
        skip_json: row.at(8)?,
        error: row.at(9)?,
        artifacts_json: row.at(10)?,
        machine_json: row.at(11)?,
        summary: row.at(12)?,
        medians: None,
        metrics: Vec::new(),
    })
}

/// A `metrics` row of [`METRICS_SELECT`].
pub(super) fn metric_row<E>(row: &impl Columns<E>) -> Result<MetricRow, E> {
    let mut stats = [None; 11];
    for (i, slot) in stats.iter_mut().enumerate() {
        *slot = row.at(5 + i)?;
    }
    Ok(MetricRow {
        seq: row.at(0)?,
        idx: row.at(1)?,
        name: row.at(2)?,
        unit: row.at(3)?,
        n: row.at(4)?,
        stats,
        outliers: row.at(16)?,
        cycles_json: row.at(17)?,
        subtracted_overhead_ns: row.at(18)?,
        ops_per_sample: row.at(19)?,
        note: row.at(20)?,
        samples: row.at(21)?,
        extra_json: row.at(22)?,
    })
}

/// A row of the fleet's `HOSTS_SQL`, in its column order.
pub(super) fn host_row<E>(row: &impl Columns<E>) -> Result<HostRow, E> {
    Ok((row.at(0)?, row.at(1)?, row.at(2)?, row.at(3)?))
}

/// A row of the fleet's `VALUES_SQL`, in its column order.
pub(super) fn value_row<E>(row: &impl Columns<E>) -> Result<ValueRow, E> {
    Ok((row.at(0)?, row.at(1)?, row.at(2)?, row.at(3)?, row.at(4)?))
}
