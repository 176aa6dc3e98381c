//! Reading runs back, whatever the backend: the newest-first listing for `history` (every
//! machine's runs or one machine's), run references (`latest`, `latest~N`, the latest of a
//! kind `latest:KIND` and `latest:KIND~N`, an id or a unique id prefix) and the exact reconstruction of a [`RunRecord`] with its results, metrics and
//! raw samples.
//!
//! Only the meaning of references and the assembly of rows into the model live here; the
//! queries are in `sqlite/read.rs` and `pg/read.rs`. No formatting for people.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::retention::{dated_sql, ended_sql, newest_sql};
use super::rows::{Decoder, MetricRow, ResultRow, RunRow};
use super::{Store, StoreError, on_backend};
use crate::model::{RunKind, RunRecord};

/// One line of `sysmeter history`: a run and how its experiments turned out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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

impl RunListing {
    /// How the run ended, for people: `complete`, `interrupted`, or — no end time and no
    /// Ctrl-C: the process died (SIGKILL, OOM, power) or is still running —
    /// [`crate::model::INCOMPLETE`].
    pub fn state(&self) -> &'static str {
        match (self.finished_ns, self.interrupted) {
            (_, true) => "interrupted",
            (None, false) => crate::model::INCOMPLETE,
            (Some(_), false) => "complete",
        }
    }
}

/// Everything stored for one run, as rows, read in one snapshot.
pub(super) struct RunRows {
    pub run: RunRow,
    pub results: Vec<ResultRow>,
    pub metrics: Vec<MetricRow>,
}

/// What a backend does to read runs, each in its own SQL.
pub(super) trait Reads {
    /// The `limit` most recent runs (of `hostname` if given), newest first.
    fn list_runs(&self, limit: i64, hostname: Option<&str>) -> Result<Vec<RunListing>, StoreError>;

    /// The id `back` runs before the newest (of `hostname` if given), counting only runs
    /// that ended (finished or interrupted): one whose process died is incomplete, and one
    /// still running is not done yet; both stay reachable by id.
    /// `kind`: only runs of that kind count (`latest:profile`).
    fn latest(
        &self,
        back: i64,
        hostname: Option<&str>,
        kind: Option<&str>,
    ) -> Result<Option<String>, StoreError>;

    /// Up to [`PREFIX_MATCHES`] ids starting with `prefix`, the exact id first.
    fn ids_with_prefix(&self, prefix: &str) -> Result<Vec<String>, StoreError>;

    /// The run row, its results and its metrics from one snapshot, so a result committed
    /// meanwhile by a running bench is either wholly in or wholly out.
    fn load_rows(&self, id: &str) -> Result<RunRows, StoreError>;
}

impl Store {
    /// The `limit` most recent runs of every machine, newest first.
    pub fn list_runs(&self, limit: usize) -> Result<Vec<RunListing>, StoreError> {
        self.list_host_runs(limit, None)
    }

    /// The `limit` most recent runs of machine `hostname` (`None`: of every machine),
    /// newest first.
    pub fn list_host_runs(
        &self,
        limit: usize,
        hostname: Option<&str>,
    ) -> Result<Vec<RunListing>, StoreError> {
        // Both databases take an i64 limit; anything larger means "all".
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        on_backend!(self, b => b.list_runs(limit, hostname))
    }

    /// Loads the run named by `reference`: a run id, a unique prefix of one, `latest`,
    /// `latest~N` (N runs before the latest), or `latest:KIND` / `latest:KIND~N` (counting
    /// only runs of that kind, e.g. `latest:profile`; only runs of the home host count when one is
    /// set, see [`Store::set_home_host`]). Results come back in the order they were stored,
    /// each with its metrics and raw samples, equal to what was written.
    pub fn load_run(&self, reference: &str) -> Result<RunRecord, StoreError> {
        let id = self.resolve(reference)?;
        let rows = on_backend!(self, b => b.load_rows(&id))?;
        let d = Decoder {
            db: self.path(),
            id: &id,
        };
        let mut by_seq: BTreeMap<i64, Vec<MetricRow>> = BTreeMap::new();
        for m in rows.metrics {
            by_seq.entry(m.seq).or_default().push(m);
        }
        let results = rows
            .results
            .into_iter()
            .map(|mut r| {
                r.metrics = by_seq.remove(&r.seq).unwrap_or_default();
                d.result(r)
            })
            .collect::<Result<_, _>>()?;
        d.run(rows.run, results)
    }

    /// Turns a run reference into the id of a stored run.
    fn resolve(&self, reference: &str) -> Result<String, StoreError> {
        let not_found = || match &self.home_host {
            Some(host) if latest_ref(reference).ok().flatten().is_some() => {
                StoreError::NoRunOfHost {
                    reference: reference.to_string(),
                    hostname: host.clone(),
                    path: self.path().to_path_buf(),
                }
            }
            _ => StoreError::RunNotFound {
                reference: reference.to_string(),
                path: self.path().to_path_buf(),
            },
        };
        if reference.trim().is_empty() {
            return Err(StoreError::BadReference {
                reference: reference.to_string(),
            });
        }
        if let Some(latest) = latest_ref(reference)? {
            let (host, kind) = (self.home_host.as_deref(), latest.kind.map(RunKind::as_str));
            let id = on_backend!(self, b => b.latest(latest.back, host, kind))?;
            return id.ok_or_else(not_found);
        }
        // Backends return at most a few ids starting with the reference, the exact id
        // first: an exact id wins even when it is also a prefix of another id.
        let matches = on_backend!(self, b => b.ids_with_prefix(reference))?;
        match matches.as_slice() {
            [] => Err(not_found()),
            [only] => Ok(only.clone()),
            [first, ..] if first == reference => Ok(first.clone()),
            _ => Err(StoreError::AmbiguousRun {
                reference: reference.to_string(),
                path: self.path().to_path_buf(),
                matches,
            }),
        }
    }
}

/// How many ids [`Store::resolve`] asks for when matching a prefix (enough to show a few in
/// the "ambiguous" message).
pub(super) const PREFIX_MATCHES: i64 = 6;

/// The id of a host's (`$1`, any host when NULL) run of a kind (`$2`, any when NULL) that is
/// `$3` back from the latest, by the one rule of `store/retention.rs` (runs that ended, with
/// a possible date, the last received first), in both dialects (the casts give PostgreSQL
/// the NULL parameters' type; SQLite numbers `$n` by first appearance, so they appear in
/// order).
pub(super) const LATEST_SQL: &str = concat!(
    "SELECT id FROM runs
     WHERE (CAST($1 AS TEXT) IS NULL OR hostname = $1)
       AND (CAST($2 AS TEXT) IS NULL OR kind = $2)
       AND ",
    ended_sql!(),
    " AND ",
    dated_sql!(),
    "
     ORDER BY ",
    newest_sql!(),
    " LIMIT 1 OFFSET $3"
);

/// A `latest` reference: `latest`, `latest~N`, `latest:KIND` or `latest:KIND~N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Latest {
    /// How many runs before the newest (0 for `latest`).
    back: i64,
    /// Only runs of this kind count (`latest:profile`).
    kind: Option<RunKind>,
}

/// The `latest` reference `reference` is, `None` for anything that is not `latest…`; an
/// unknown kind or a bad count is a bad reference.
fn latest_ref(reference: &str) -> Result<Option<Latest>, StoreError> {
    let Some(rest) = reference.strip_prefix("latest") else {
        return Ok(None);
    };
    let bad = || StoreError::BadReference {
        reference: reference.to_string(),
    };
    let (kind, count) = match rest.strip_prefix(':') {
        Some(named) => {
            let (name, count) = named
                .split_once('~')
                .map_or((named, None), |(n, c)| (n, Some(c)));
            (Some(RunKind::from_name(name).ok_or_else(bad)?), count)
        }
        None if rest.is_empty() => (None, None),
        None => (None, Some(rest.strip_prefix('~').ok_or_else(bad)?)),
    };
    let back = match count {
        None => 0,
        Some(n) => i64::from(n.parse::<u32>().map_err(|_| bad())?),
    };
    Ok(Some(Latest { back, kind }))
}
