//! Retention (`sysmeter prune --keep N`): which runs lie beyond each host's latest N of each
//! kind, and deleting a run with everything it holds. The statement is shared by both
//! backends (window functions: SQLite 3.25 and later, any PostgreSQL) and documented in
//! docs/fleet.md for a scheduled `psql` job.

use super::write::Writes;
use super::{Store, StoreError, on_backend, on_backend_mut};

/// Host and id of every run older than its host's latest `$1` runs of its kind, oldest
/// first.
pub const BEYOND_SQL: &str = "SELECT hostname, id FROM (
    SELECT hostname, id, started_ns,
           row_number() OVER (PARTITION BY hostname, kind
                              ORDER BY started_ns DESC, id DESC) AS age
    FROM runs
) ranked
WHERE age > $1
ORDER BY started_ns, id";

impl Store {
    /// (host, run id) of every run beyond its host's latest `keep` of its kind.
    pub fn runs_beyond(&self, keep: usize) -> Result<Vec<(String, String)>, StoreError> {
        let keep = i64::try_from(keep).unwrap_or(i64::MAX);
        on_backend!(self, b => b.runs_beyond(keep))
    }

    /// Deletes run `id` with its results and metrics, in one transaction.
    pub fn delete_run(&mut self, id: &str) -> Result<(), StoreError> {
        on_backend_mut!(self, b => b.delete_run(id))
    }
}
