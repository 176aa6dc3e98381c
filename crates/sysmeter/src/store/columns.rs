//! Reading rows back, the same for both backends: the `SELECT`s of a run's results and
//! metrics, and one reader per table (and per row of the fleet's queries) that takes a row's columns by position in the order
//! those `SELECT`s (and the backends' `runs` query) list them. A backend only says how one
//! column of its rows is read ([`Get`]).
//!
//! Plain values only; the conversion to the model is `rows::Decoder`'s.

use super::fleet::{HostRow, ValueRow};
use super::read::RunListing;
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

/// Declares [`Columns`] and its blanket impl from one list of the column types.
macro_rules! columns_trait {
    ($($t:ty),+) => {
        /// A row whose columns can be read as every type the three tables use.
        pub(super) trait Columns<E>: $(Get<$t, E> +)+ {}

        impl<E, R> Columns<E> for R where R: $(Get<$t, E> +)+ {}
    };
}

columns_trait!(
    i64,
    Option<i64>,
    bool,
    String,
    Option<String>,
    f64,
    Option<f64>,
    Vec<u8>,
    Option<Vec<u8>>
);

/// Reads a row's columns one after the other from column 0, so a reader lists its fields in
/// the column order of its `SELECT` without numbering them ([`by_position!`]).
struct Cursor<'r, R> {
    row: &'r R,
    next: usize,
}

impl<R> Cursor<'_, R> {
    /// The next column.
    fn take<T, E>(&mut self) -> Result<T, E>
    where
        R: Get<T, E>,
    {
        self.next += 1;
        self.row.at(self.next - 1)
    }

    /// The next `N` columns, as one array.
    fn take_array<T: Copy + Default, E, const N: usize>(&mut self) -> Result<[T; N], E>
    where
        R: Get<T, E>,
    {
        let mut values = [T::default(); N];
        for slot in &mut values {
            *slot = self.take()?;
        }
        Ok(values)
    }
}

/// `Ok($Row { .. })` with its fields read from `$row` in the order listed, one column each
/// (a field written `name[..]` is an array and takes as many columns as it has), then the
/// fields after `;` set to the values given. A column that does not read returns its error.
macro_rules! by_position {
    ($row:expr => $Row:ident {
        $($field:ident $([$many:tt])?),+ $(; $($other:ident: $value:expr),+)?
    }) => {{
        let mut cursor = Cursor { row: $row, next: 0 };
        Ok($Row {
            $($field: by_position!(@take cursor $([$many])?)?,)+
            $($($other: $value,)+)?
        })
    }};
    (@take $cursor:ident) => { $cursor.take() };
    (@take $cursor:ident [$many:tt]) => { $cursor.take_array() };
}

/// A `runs` row: id, schema, kind, started_ns, finished_ns, interrupted, tool_version,
/// hostname, host_json, config_json.
pub(super) fn run_row<E>(row: &impl Columns<E>) -> Result<RunRow, E> {
    by_position!(row => RunRow {
        id, schema, kind, started_ns, finished_ns, interrupted, tool_version, hostname,
        host_json, config_json
    })
}

/// A `results` row of [`RESULTS_SELECT`], without its metrics.
pub(super) fn result_row<E>(row: &impl Columns<E>) -> Result<ResultRow, E> {
    by_position!(row => ResultRow {
        seq, exp_id, status, elapsed_ns, about_json, estimates_json, series_json,
        findings_json, skip_json, error, artifacts_json, machine_json, summary;
        medians: None, metrics: Vec::new()
    })
}

/// A `metrics` row of [`METRICS_SELECT`] (`stats` are its 11 columns min to ci_hi).
pub(super) fn metric_row<E>(row: &impl Columns<E>) -> Result<MetricRow, E> {
    by_position!(row => MetricRow {
        seq, idx, name, unit, n, stats[..], outliers, cycles_json, subtracted_overhead_ns,
        ops_per_sample, note, samples, extra_json
    })
}

/// A row of either backend's run listing (id, kind, started_ns, finished_ns, interrupted,
/// hostname, tool_version, then the counts of results, ok, skipped and failed); a count that
/// does not fit `usize` is the error `out_of_range(column, value)`.
pub(super) fn listing_row<E, F: From<E>>(
    row: &impl Columns<E>,
    out_of_range: impl Fn(usize, i64) -> F,
) -> Result<RunListing, F> {
    let count = |i: usize| -> Result<usize, F> {
        let v: i64 = row.at(i)?;
        usize::try_from(v).map_err(|_| out_of_range(i, v))
    };
    by_position!(row => RunListing {
        id, kind, started_ns, finished_ns, interrupted, hostname, tool_version;
        experiments: count(7)?, ok: count(8)?, skipped: count(9)?, failed: count(10)?
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
