//! Reading runs back: the newest-first listing for `history`, run references (`latest`,
//! `latest~N`, an id or a unique id prefix) and the exact reconstruction of a
//! [`RunRecord`] with its results, metrics and raw samples.
//!
//! Only row → model conversion lives here; no formatting for people.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use super::rows::{Decoder, RawMetric, RawResult, uint};
use super::{Store, StoreError, sql_error};
use crate::model::{ExperimentResult, Metric, RunRecord};

/// One line of `sysmeter history`: a run and how its experiments turned out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunListing {
    /// Run id.
    pub id: String,
    /// What produced it (`bench`, `run`, ...).
    pub kind: String,
    /// Start, ns since the Unix epoch.
    pub started_ns: i64,
    /// End, ns since the Unix epoch; `None` if the run never finished.
    pub finished_ns: Option<i64>,
    /// Stopped by Ctrl-C.
    pub interrupted: bool,
    /// Machine it ran on.
    pub hostname: String,
    /// Experiment results stored.
    pub experiments: usize,
    /// Of which measured.
    pub ok: usize,
    /// Of which skipped.
    pub skipped: usize,
    /// Of which failed.
    pub failed: usize,
    /// sysmeter version that measured it.
    pub tool_version: String,
}

impl Store {
    /// The `limit` most recent runs, newest first.
    pub fn list_runs(&self, limit: usize) -> Result<Vec<RunListing>, StoreError> {
        let fail = |e| sql_error(&self.path, "list the runs", e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.id, r.kind, r.started_ns, r.finished_ns, r.interrupted, r.hostname,
                        r.tool_version, count(x.seq),
                        coalesce(sum(x.status = 'ok'), 0),
                        coalesce(sum(x.status = 'skipped'), 0),
                        coalesce(sum(x.status = 'failed'), 0)
                 FROM runs r LEFT JOIN results x ON x.run_id = r.id
                 GROUP BY r.id
                 ORDER BY r.started_ns DESC, r.id DESC
                 LIMIT ?1",
            )
            .map_err(fail)?;
        // SQLite's LIMIT is an i64; anything larger means "all".
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map([limit], |row| {
                Ok(RunListing {
                    id: row.get(0)?,
                    kind: row.get(1)?,
                    started_ns: row.get(2)?,
                    finished_ns: row.get(3)?,
                    interrupted: row.get(4)?,
                    hostname: row.get(5)?,
                    tool_version: row.get(6)?,
                    experiments: uint(row, 7)?,
                    ok: uint(row, 8)?,
                    skipped: uint(row, 9)?,
                    failed: uint(row, 10)?,
                })
            })
            .map_err(fail)?;
        rows.collect::<Result<_, _>>().map_err(fail)
    }

    /// Loads the run named by `reference`: a run id, a unique prefix of one, `latest`, or
    /// `latest~N` (N runs before the latest). Results come back in the order they were
    /// stored, each with its metrics and raw samples, equal to what was written.
    pub fn load_run(&self, reference: &str) -> Result<RunRecord, StoreError> {
        let id = self.resolve(reference)?;
        let mut run = self.load_run_row(&id)?;
        let mut metrics = self.load_metrics(&id)?;
        run.results = self.load_results(&id, &mut metrics)?;
        Ok(run)
    }

    /// Turns a run reference into the id of a stored run.
    fn resolve(&self, reference: &str) -> Result<String, StoreError> {
        let not_found = || StoreError::RunNotFound {
            reference: reference.to_string(),
            path: self.path.clone(),
        };
        let fail = |e| sql_error(&self.path, &format!("look up run '{reference}'"), e);
        if let Some(back) = latest_offset(reference)? {
            return self
                .conn
                .query_row(
                    "SELECT id FROM runs ORDER BY started_ns DESC, id DESC LIMIT 1 OFFSET ?1",
                    [back],
                    |row| row.get(0),
                )
                .optional()
                .map_err(fail)?
                .ok_or_else(not_found);
        }
        // Compared with substr rather than LIKE, whose `_` and `%` are wildcards and which
        // ignores case. An exact id wins even when it is also a prefix of another id.
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id FROM runs WHERE substr(id, 1, length(?1)) = ?1
                 ORDER BY id = ?1 DESC, id LIMIT 6",
            )
            .map_err(fail)?;
        let matches = stmt
            .query_map([reference], |row| row.get::<_, String>(0))
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        match matches.as_slice() {
            [] => Err(not_found()),
            [only] => Ok(only.clone()),
            [first, ..] if first == reference => Ok(first.clone()),
            _ => Err(StoreError::AmbiguousRun {
                reference: reference.to_string(),
                path: self.path.clone(),
                matches,
            }),
        }
    }

    /// The run row, with an empty `results`.
    fn load_run_row(&self, id: &str) -> Result<RunRecord, StoreError> {
        let raw = self
            .conn
            .query_row(
                "SELECT schema, kind, started_ns, finished_ns, interrupted, tool_version,
                        host_json, config_json
                 FROM runs WHERE id = ?1",
                [id],
                |row| {
                    Ok((
                        row.get::<_, u32>(0)?,
                        row.get::<_, String>(1)?,
                        (row.get(2)?, row.get(3)?, row.get(4)?),
                        row.get::<_, String>(5)?,
                        (row.get::<_, String>(6)?, row.get::<_, String>(7)?),
                    ))
                },
            )
            .map_err(|e| sql_error(&self.path, &format!("read run {id}"), e))?;
        let (schema, kind, (started_ns, finished_ns, interrupted), tool_version, json) = raw;
        let d = Decoder { store: self, id };
        Ok(RunRecord {
            schema,
            id: id.to_string(),
            kind: d.word("kind", kind)?,
            started_ns,
            finished_ns,
            interrupted,
            tool_version,
            host: d.json("host_json", &json.0)?,
            config: d.json("config_json", &json.1)?,
            results: Vec::new(),
        })
    }

    /// All metrics of a run, grouped by result `seq`, each group in `idx` order.
    fn load_metrics(&self, id: &str) -> Result<BTreeMap<usize, Vec<Metric>>, StoreError> {
        let fail = |e| sql_error(&self.path, &format!("read the metrics of run {id}"), e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT seq, name, unit, n, min, p5, median, mean, p95, p99, max, stddev, cv,
                        ci_lo, ci_hi, outliers, cycles_json, subtracted_overhead_ns,
                        ops_per_sample, note, samples
                 FROM metrics WHERE run_id = ?1 ORDER BY seq, idx",
            )
            .map_err(fail)?;
        let rows = stmt
            .query_map([id], RawMetric::from_row)
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        let d = Decoder { store: self, id };
        let mut by_seq: BTreeMap<usize, Vec<Metric>> = BTreeMap::new();
        for raw in rows {
            let seq = raw.seq;
            by_seq.entry(seq).or_default().push(raw.decode(&d)?);
        }
        Ok(by_seq)
    }

    /// The results of a run in `seq` order, taking each one's metrics out of `metrics`.
    fn load_results(
        &self,
        id: &str,
        metrics: &mut BTreeMap<usize, Vec<Metric>>,
    ) -> Result<Vec<ExperimentResult>, StoreError> {
        let fail = |e| sql_error(&self.path, &format!("read the results of run {id}"), e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT seq, exp_id, status, elapsed_ns, about_json, estimates_json,
                        series_json, findings_json, skip_json, error, artifacts_json
                 FROM results WHERE run_id = ?1 ORDER BY seq",
            )
            .map_err(fail)?;
        let rows = stmt
            .query_map(params![id], RawResult::from_row)
            .map_err(fail)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(fail)?;
        let d = Decoder { store: self, id };
        rows.into_iter()
            .map(|raw| {
                let own = metrics.remove(&raw.seq).unwrap_or_default();
                raw.decode(&d, own)
            })
            .collect()
    }
}

/// `Some(N)` for `latest` (0) and `latest~N`, `None` for anything that is not `latest…`.
fn latest_offset(reference: &str) -> Result<Option<i64>, StoreError> {
    let Some(rest) = reference.strip_prefix("latest") else {
        return Ok(None);
    };
    if rest.is_empty() {
        return Ok(Some(0));
    }
    rest.strip_prefix('~')
        .and_then(|n| n.parse::<u32>().ok())
        .map(|n| Some(i64::from(n)))
        .ok_or_else(|| StoreError::BadReference {
            reference: reference.to_string(),
        })
}
