//! SQLite statements that write: the run row, one result with its metrics in one IMMEDIATE
//! transaction (replacing the result stored before under its number, when asked), the end
//! of a run.

use rusqlite::{ToSql, Transaction, TransactionBehavior, params};

use std::path::Path;

use super::{Sqlite, sql_error};
use crate::store::StoreError;
use crate::store::rows::{MetricRow, ResultRow};
use crate::store::write::{Param, Writes};

impl Writes for Sqlite {
    const JSON_PARAM: &'static str = "";

    type Error = rusqlite::Error;

    fn execute(&mut self, sql: &str, params: &[&dyn Param]) -> Result<usize, rusqlite::Error> {
        let params: Vec<&dyn ToSql> = params.iter().map(|p| *p as _).collect();
        self.conn.execute(sql, params.as_slice())
    }

    fn failed(&self, action: &str, e: rusqlite::Error) -> StoreError {
        sql_error(&self.path, action, e)
    }

    fn location(&self) -> &Path {
        &self.path
    }

    fn add_result(&mut self, run_id: &str, r: &ResultRow, replace: bool) -> Result<(), StoreError> {
        let Sqlite { conn, path } = self;
        let action = format!("store result {} ({}) of run {run_id}", r.seq, r.exp_id);
        let fail = |e: rusqlite::Error| {
            if is_foreign_key_violation(&e) {
                StoreError::RunNotFound {
                    reference: run_id.to_string(),
                    path: path.clone(),
                }
            } else {
                sql_error(path, &action, e)
            }
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        if replace {
            delete_result(&tx, run_id, r.seq).map_err(fail)?;
        }
        insert_result(&tx, run_id, r).map_err(fail)?;
        for metric in &r.metrics {
            insert_metric(&tx, run_id, metric).map_err(fail)?;
        }
        tx.commit().map_err(fail)
    }

    /// In one transaction.
    fn delete_run(&mut self, run_id: &str) -> Result<(), StoreError> {
        let Sqlite { conn, path } = self;
        let fail = |e: rusqlite::Error| sql_error(path, &format!("delete run {run_id}"), e);
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        for table in ["metrics", "results", "runs"] {
            let column = if table == "runs" { "id" } else { "run_id" };
            tx.execute(
                &format!("DELETE FROM {table} WHERE {column} = ?1"),
                params![run_id],
            )
            .map_err(fail)?;
        }
        tx.commit().map_err(fail)
    }
}

/// Deletes result `seq` of `run_id` and its metrics (not relying on `foreign_keys` being on).
fn delete_result(tx: &Transaction<'_>, run_id: &str, seq: i64) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM metrics WHERE run_id = ?1 AND seq = ?2",
        params![run_id, seq],
    )?;
    tx.execute(
        "DELETE FROM results WHERE run_id = ?1 AND seq = ?2",
        params![run_id, seq],
    )?;
    Ok(())
}

fn insert_result(tx: &Transaction<'_>, run_id: &str, r: &ResultRow) -> rusqlite::Result<usize> {
    let medians = r.medians.as_ref().map(|(names, units, medians)| {
        (
            serde_json::json!(names),
            serde_json::json!(units),
            serde_json::json!(medians),
        )
    });
    tx.execute(
        "INSERT INTO results (run_id, seq, exp_id, status, elapsed_ns, about_json,
                              estimates_json, series_json, findings_json, skip_json, error,
                              artifacts_json, machine_json, summary, metric_names,
                              metric_units, medians)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
        params![
            run_id,
            r.seq,
            r.exp_id,
            r.status,
            r.elapsed_ns,
            r.about_json,
            r.estimates_json,
            r.series_json,
            r.findings_json,
            r.skip_json,
            r.error,
            r.artifacts_json,
            r.machine_json,
            r.summary,
            // The arrays of a PostgreSQL fleet store, as JSON text (SQLite has no arrays).
            medians.as_ref().map(|m| m.0.to_string()),
            medians.as_ref().map(|m| m.1.to_string()),
            medians.as_ref().map(|m| m.2.to_string()),
        ],
    )
}

/// Inserts one `metrics` row (summary as columns, cycles as JSON, samples as a BLOB). The
/// summary's columns, min to ci_hi, are in the order of `MetricRow::stats`.
fn insert_metric(tx: &Transaction<'_>, run_id: &str, m: &MetricRow) -> rusqlite::Result<usize> {
    let mut values: Vec<&dyn ToSql> = vec![&run_id, &m.seq, &m.idx, &m.name, &m.unit, &m.n];
    values.extend(m.stats.iter().map(|s| s as &dyn ToSql));
    values.extend::<[&dyn ToSql; 7]>([
        &m.outliers,
        &m.cycles_json,
        &m.subtracted_overhead_ns,
        &m.ops_per_sample,
        &m.note,
        &m.samples,
        &m.extra_json,
    ]);
    tx.execute(
        "INSERT INTO metrics (run_id, seq, idx, name, unit, n, min, p5, median, mean, p95, p99,
                              max, stddev, cv, ci_lo, ci_hi, outliers, cycles_json,
                              subtracted_overhead_ns, ops_per_sample, note, samples, extra_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
        values.as_slice(),
    )
}

/// `add_result` for a run that was never begun fails on the foreign key; that is a missing
/// run, not a database problem.
fn is_foreign_key_violation(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY
    )
}
