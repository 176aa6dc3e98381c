//! Writing runs: the run row first, then each experiment's result in its own transaction as
//! soon as it finishes, then the end time. Each call commits, so whatever happens to the
//! process afterwards, the results written so far are on disk.
//!
//! Only model → row conversion lives here; no formatting for people.

use std::path::Path;

use rusqlite::{Transaction, TransactionBehavior, params};
use serde::Serialize;

use super::rows::{int, samples_to_blob};
use super::{Store, StoreError, sql_error};
use crate::model::{ExperimentResult, Metric, RunRecord};

impl Store {
    /// Inserts the run row for `run` (its `results` are ignored; add them with
    /// [`Store::add_result`]). Fails if a run with the same id is already stored.
    pub fn begin_run(&mut self, run: &RunRecord) -> Result<(), StoreError> {
        let host_json = encode(&self.path, &run.id, "host", &run.host)?;
        let config_json = encode(&self.path, &run.id, "config", &run.config)?;
        self.conn
            .execute(
                "INSERT INTO runs (id, schema, kind, started_ns, finished_ns, interrupted,
                                   tool_version, hostname, host_json, config_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    run.id,
                    run.schema,
                    run.kind.as_str(),
                    run.started_ns,
                    run.finished_ns,
                    run.interrupted,
                    run.tool_version,
                    run.host.hostname,
                    host_json,
                    config_json,
                ],
            )
            .map_err(|e| sql_error(&self.path, &format!("store run {}", run.id), e))?;
        Ok(())
    }

    /// Stores experiment result number `seq` of run `run_id` with all its metrics and raw
    /// samples in one transaction: after it returns, the result survives any crash.
    pub fn add_result(
        &mut self,
        run_id: &str,
        seq: usize,
        r: &ExperimentResult,
    ) -> Result<(), StoreError> {
        let Store { conn, path } = self;
        let action = format!("store result {seq} ({}) of run {run_id}", r.id);
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
        insert_result(&tx, path, run_id, seq, r)?.map_err(fail)?;
        for (idx, metric) in r.metrics.iter().enumerate() {
            insert_metric(&tx, path, run_id, seq, idx, metric)?.map_err(fail)?;
        }
        tx.commit().map_err(fail)
    }

    /// Records the end of run `run_id`: when it finished (`None` if it did not get that far)
    /// and whether Ctrl-C interrupted it.
    pub fn finish_run(
        &mut self,
        run_id: &str,
        finished_ns: Option<i64>,
        interrupted: bool,
    ) -> Result<(), StoreError> {
        let changed = self
            .conn
            .execute(
                "UPDATE runs SET finished_ns = ?1, interrupted = ?2 WHERE id = ?3",
                params![finished_ns, interrupted, run_id],
            )
            .map_err(|e| sql_error(&self.path, &format!("finish run {run_id}"), e))?;
        if changed == 0 {
            return Err(StoreError::RunNotFound {
                reference: run_id.to_string(),
                path: self.path.clone(),
            });
        }
        Ok(())
    }
}

/// Inserts the `results` row. The outer `Result` is an encoding failure, the inner one the
/// statement's, so the caller can classify SQL errors in one place.
fn insert_result(
    tx: &Transaction<'_>,
    path: &Path,
    run_id: &str,
    seq: usize,
    r: &ExperimentResult,
) -> Result<rusqlite::Result<usize>, StoreError> {
    let about = encode(path, run_id, "about", &r.about)?;
    let estimates = encode(path, run_id, "estimates", &r.estimates)?;
    let series = encode(path, run_id, "series", &r.series)?;
    let findings = encode(path, run_id, "findings", &r.findings)?;
    let artifacts = encode(path, run_id, "artifacts", &r.artifacts)?;
    let skip = r
        .skip
        .as_ref()
        .map(|s| encode(path, run_id, "skip", s))
        .transpose()?;
    let exec = || {
        tx.execute(
            "INSERT INTO results (run_id, seq, exp_id, status, elapsed_ns, about_json,
                              estimates_json, series_json, findings_json, skip_json, error,
                              artifacts_json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                run_id,
                int(seq)?,
                r.id,
                r.status.as_str(),
                int(r.elapsed_ns)?,
                about,
                estimates,
                series,
                findings,
                skip,
                r.error,
                artifacts,
            ],
        )
    };
    Ok(exec())
}

/// Inserts one `metrics` row (summary as columns, cycles as JSON, samples as a BLOB).
fn insert_metric(
    tx: &Transaction<'_>,
    path: &Path,
    run_id: &str,
    seq: usize,
    idx: usize,
    m: &Metric,
) -> Result<rusqlite::Result<usize>, StoreError> {
    let cycles = m
        .cycles
        .as_ref()
        .map(|c| encode(path, run_id, &format!("cycles of metric {}", m.name), c))
        .transpose()?;
    let s = &m.summary;
    let exec = || {
        tx.execute(
            "INSERT INTO metrics (run_id, seq, idx, name, unit, n, min, p5, median, mean, p95, p99,
                              max, stddev, cv, ci_lo, ci_hi, outliers, cycles_json,
                              subtracted_overhead_ns, ops_per_sample, note, samples)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21, ?22, ?23)",
            params![
                run_id,
                int(seq)?,
                int(idx)?,
                m.name,
                m.unit.as_str(),
                int(s.n)?,
                s.min,
                s.p5,
                s.median,
                s.mean,
                s.p95,
                s.p99,
                s.max,
                s.stddev,
                s.cv,
                s.ci95.0,
                s.ci95.1,
                int(s.outliers)?,
                cycles,
                m.subtracted_overhead_ns,
                int(m.ops_per_sample)?,
                m.note,
                samples_to_blob(&m.samples),
            ],
        )
    };
    Ok(exec())
}

/// Serialises a model value for a JSON column.
fn encode<T: Serialize + ?Sized>(
    path: &Path,
    run_id: &str,
    field: &str,
    value: &T,
) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|cause| StoreError::Encode {
        run_id: run_id.to_string(),
        field: field.to_string(),
        cause,
        path: path.to_path_buf(),
    })
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
