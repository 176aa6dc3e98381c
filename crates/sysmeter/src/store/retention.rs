//! Which runs count as a host's latest, and retention (`sysmeter prune --keep N`): the one
//! rule both use, the runs beyond each host's latest N of each kind, and deleting a run with
//! everything it holds. The statements are shared by both backends (window functions:
//! SQLite 3.25 and later, any PostgreSQL) and documented in docs/fleet.md for a scheduled
//! `psql` job.
//!
//! The rule ranks by what the store knows, never by what a record says of itself: the time
//! the store received a run (`runs.received_ns`, schema 6, by the database's clock), not the
//! run's own start, which `import` takes as written. A run that started more than
//! [`FUTURE_SLACK_NS`] after the store received it carries a wrong date (a machine with a
//! wrong clock, or a forged file): it is never `latest`, and retention ranks it after every
//! run with a possible date. Only runs that ended (finished, or stopped by Ctrl-C) are
//! `latest` or among the N kept; a run that never ended (killed, or still running) is kept
//! only while no run of its host and kind that ended was received after it, and then only
//! the latest N of those.

use super::write::Writes;
use super::{Store, StoreError, on_backend, on_backend_mut};

/// How far a run's start may lie after the time the store received it before its date is
/// taken as wrong: one day, beyond any clock skew between a fleet's machines and its server
/// (time zones included).
pub const FUTURE_SLACK_NS: i64 = 86_400_000_000_000;

/// SQL: the run ended (finished, or stopped by Ctrl-C).
macro_rules! ended_sql {
    () => {
        "(finished_ns IS NOT NULL OR interrupted)"
    };
}

/// SQL: the run's date is possible, it started at most a day after the store received it
/// ([`FUTURE_SLACK_NS`]).
macro_rules! dated_sql {
    () => {
        "(started_ns <= received_ns + 86400000000000)"
    };
}

/// SQL: the order of "latest": the last received first; runs received within the same
/// millisecond (the database clock's grain: a script storing several at once) by their start,
/// then by id.
macro_rules! newest_sql {
    () => {
        "received_ns DESC, started_ns DESC, id DESC"
    };
}
pub(super) use {dated_sql, ended_sql, newest_sql};

/// Host, id and whether it ended of every run beyond its host's latest `$1` of its kind
/// (the module's rule), oldest received first.
pub const BEYOND_SQL: &str = concat!(
    "WITH ranked AS (
    SELECT hostname, kind, id, received_ns, ",
    ended_sql!(),
    " AS ended,
           row_number() OVER (PARTITION BY hostname, kind, ",
    ended_sql!(),
    "
                              ORDER BY ",
    dated_sql!(),
    " DESC, ",
    newest_sql!(),
    ") AS age
    FROM runs
)
SELECT hostname, id, ended FROM ranked r
WHERE age > $1
   OR (NOT ended AND EXISTS (SELECT 1 FROM ranked e
                             WHERE e.ended AND e.hostname = r.hostname AND e.kind = r.kind
                               AND e.received_ns > r.received_ns))
ORDER BY received_ns, id"
);

/// A run [`Store::runs_beyond`] would delete.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beyond {
    /// The machine it ran on.
    pub hostname: String,
    /// Its id.
    pub id: String,
    /// Whether it ended (else it never did: killed, or still running).
    pub ended: bool,
}

impl Store {
    /// Every run beyond its host's latest `keep` of its kind, by the module's rule, oldest
    /// received first.
    pub fn runs_beyond(&self, keep: usize) -> Result<Vec<Beyond>, StoreError> {
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        on_backend!(self, b => b.runs_beyond(keep))
    }

    /// Deletes run `id` with its results and metrics, in one transaction.
    pub fn delete_run(&mut self, id: &str) -> Result<(), StoreError> {
        on_backend_mut!(self, b => b.delete_run(id))
    }
}
