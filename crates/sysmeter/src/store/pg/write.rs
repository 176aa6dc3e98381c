//! PostgreSQL statements that write: the run row, one result with all its metrics, the end of
//! a run.
//!
//! Replacing a result (`bench` with several rounds stores an experiment again after each
//! round) deletes the old one, whose metrics follow by the foreign key's cascade, and inserts
//! the new one in one transaction.
//!
//! A result and its metrics go in ONE statement (the result inserted in a WITH clause, the
//! metrics from column arrays through `unnest`): a single statement is its own transaction,
//! so the result is stored whole or not at all, and it costs one round trip to the server
//! whatever the number of metrics — a fleet database is often far away.

use postgres::Client;
use postgres::error::SqlState;
use postgres::types::ToSql;

use std::path::Path;

use super::Pg;
use crate::store::StoreError;
use crate::store::rows::{MetricRow, ResultRow};
use crate::store::write::{Param, Writes};

/// The result row ($1–$13, and $36–$39 added by schema 4) and the metrics, one array per
/// column ($14–$35; none for a result stored as its summary).
const INSERT_RESULT: &str = "
WITH result AS (
    INSERT INTO results (run_id, seq, exp_id, status, elapsed_ns, about_json, estimates_json,
                         series_json, findings_json, skip_json, error, artifacts_json,
                         machine_json, summary, metric_names, metric_units, medians)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $36, $37, $38, $39)
)
INSERT INTO metrics (run_id, seq, idx, name, unit, n, min, p5, median, mean, p95, p99, max,
                     stddev, cv, ci_lo, ci_hi, outliers, cycles_json, subtracted_overhead_ns,
                     ops_per_sample, note, samples, extra_json)
SELECT $1, $2, m.*
FROM unnest($14::bigint[], $15::text[], $16::text[], $17::bigint[],
            $18::float8[], $19::float8[], $20::float8[], $21::float8[], $22::float8[],
            $23::float8[], $24::float8[], $25::float8[], $26::float8[], $27::float8[],
            $28::float8[], $29::bigint[], $30::text[], $31::float8[], $32::bigint[],
            $33::text[], $34::bytea[], $35::text[]) AS m";

impl Writes for Pg {
    const JSON_PARAM: &'static str = "::text::jsonb";

    type Error = postgres::Error;

    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> Result<usize, postgres::Error> {
        let params: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| *p as _).collect();
        let changed = self.client.get_mut().execute(sql, &params)?;
        Ok(usize::try_from(changed).unwrap_or(usize::MAX))
    }

    fn failed(&self, action: &str, e: postgres::Error) -> StoreError {
        self.error(action, &e)
    }

    fn location(&self) -> &Path {
        &self.location
    }

    fn add_result(&mut self, run_id: &str, r: &ResultRow, replace: bool) -> Result<(), StoreError> {
        let columns = MetricColumns::of(&r.metrics);
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![
            &run_id,
            &r.seq,
            &r.exp_id,
            &r.status,
            &r.elapsed_ns,
            &r.about_json,
            &r.estimates_json,
            &r.series_json,
            &r.findings_json,
            &r.skip_json,
            &r.error,
            &r.artifacts_json,
            &r.machine_json,
        ];
        columns.push_params(&mut params);
        let (names, units, medians) = match &r.medians {
            Some((n, u, m)) => (Some(n), Some(u), Some(m)),
            None => (None, None, None),
        };
        params.extend([&r.summary as &(dyn ToSql + Sync), &names, &units, &medians]);
        let client = self.client.get_mut();
        let outcome = match replace {
            false => client.execute(INSERT_RESULT, &params).map(drop),
            true => replace_result(client, run_id, r.seq, &params),
        };
        match outcome {
            Ok(_) => Ok(()),
            Err(e) if e.code() == Some(&SqlState::FOREIGN_KEY_VIOLATION) => {
                Err(StoreError::RunNotFound {
                    reference: run_id.to_string(),
                    path: self.location.clone(),
                })
            }
            Err(e) => {
                let action = format!("store result {} ({}) of run {run_id}", r.seq, r.exp_id);
                Err(self.error(&action, &e))
            }
        }
    }

    /// Its results and metrics go with it (`ON DELETE CASCADE`).
    fn delete_run(&mut self, run_id: &str) -> Result<(), StoreError> {
        match self.execute("DELETE FROM runs WHERE id = $1", &[&run_id]) {
            Ok(_) => Ok(()),
            Err(e) => Err(self.failed(&format!("delete run {run_id}"), e)),
        }
    }
}

/// Deletes result `seq` of `run_id` and inserts the new one ([`INSERT_RESULT`] with
/// `params`) in one transaction.
fn replace_result(
    client: &mut Client,
    run_id: &str,
    seq: i64,
    params: &[&(dyn ToSql + Sync)],
) -> Result<(), postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute(
        "DELETE FROM results WHERE run_id = $1 AND seq = $2",
        &[&run_id, &seq],
    )?;
    tx.execute(INSERT_RESULT, params)?;
    tx.commit()
}

/// The metrics of one result turned column-wise, for `unnest`.
struct MetricColumns<'a> {
    idx: Vec<i64>,
    name: Vec<&'a str>,
    unit: Vec<&'a str>,
    n: Vec<i64>,
    stats: Vec<Vec<Option<f64>>>,
    outliers: Vec<i64>,
    cycles_json: Vec<Option<&'a str>>,
    subtracted_overhead_ns: Vec<Option<f64>>,
    ops_per_sample: Vec<i64>,
    note: Vec<Option<&'a str>>,
    samples: Vec<&'a [u8]>,
    extra_json: Vec<Option<&'a str>>,
}

impl<'a> MetricColumns<'a> {
    fn of(metrics: &'a [MetricRow]) -> MetricColumns<'a> {
        let column = |f: fn(&'a MetricRow) -> i64| metrics.iter().map(f).collect();
        MetricColumns {
            idx: column(|m| m.idx),
            name: metrics.iter().map(|m| m.name.as_str()).collect(),
            unit: metrics.iter().map(|m| m.unit.as_str()).collect(),
            n: column(|m| m.n),
            stats: (0..11)
                .map(|i| metrics.iter().map(|m| m.stats[i]).collect())
                .collect(),
            outliers: column(|m| m.outliers),
            cycles_json: metrics.iter().map(|m| m.cycles_json.as_deref()).collect(),
            subtracted_overhead_ns: metrics.iter().map(|m| m.subtracted_overhead_ns).collect(),
            ops_per_sample: column(|m| m.ops_per_sample),
            note: metrics.iter().map(|m| m.note.as_deref()).collect(),
            samples: metrics.iter().map(|m| m.samples.as_slice()).collect(),
            extra_json: metrics.iter().map(|m| m.extra_json.as_deref()).collect(),
        }
    }

    /// Appends the 22 arrays in the column order of [`INSERT_RESULT`].
    fn push_params<'p>(&'p self, params: &mut Vec<&'p (dyn ToSql + Sync)>) {
        params.extend([
            &self.idx as &(dyn ToSql + Sync),
            &self.name,
            &self.unit,
            &self.n,
        ]);
        params.extend(self.stats.iter().map(|s| s as &(dyn ToSql + Sync)));
        params.extend([
            &self.outliers as &(dyn ToSql + Sync),
            &self.cycles_json,
            &self.subtracted_overhead_ns,
            &self.ops_per_sample,
            &self.note,
            &self.samples,
            &self.extra_json,
        ]);
    }
}
