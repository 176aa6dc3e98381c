//! The in-process lock table of a `locks` run (mutrace's columns): per pthread lock or
//! condition variable of a launched program, how often it was taken, how often its owner
//! changed and it had to wait, and how long it was waited for and held, with the call sites
//! of its first acquisition and of its longest hold. `diagnose::locks` writes the rows as the
//! result's [`LOCK_TABLE`] artifact (JSON); the renderers read them with [`held_rows`].
//! Depends on `model` types, serde and serde_json only.

use serde::{Deserialize, Serialize};

use super::{Artifact, ExperimentResult};

/// The name of the artifact that holds the table.
pub const LOCK_TABLE: &str = "lock table";

/// One lock (or condition variable) of one process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeldRow {
    /// `mutex`, `rwlock`, `spinlock` or `condvar`.
    pub kind: String,
    /// The process and the lock's address, `pid:0xADDR`.
    pub lock: String,
    /// Call site of the first acquisition.
    pub site: String,
    /// Acquisitions (a condition variable: its waits).
    pub locked: u64,
    /// Acquisitions by another thread than the one before.
    pub owner_changes: u64,
    /// Acquisitions that had to wait (a condition variable: signals and broadcasts).
    pub contended: u64,
    /// Time spent waiting in the contended acquisitions (condition variable: in its waits),
    /// ns.
    pub wait_ns: u64,
    /// The longest of those waits, ns.
    pub wait_max_ns: u64,
    /// Time held, acquisition to release, ns (none for a condition variable).
    pub hold_ns: u64,
    /// The longest hold, ns.
    pub hold_max_ns: u64,
    /// Call site of the acquisition of the longest hold.
    pub longest_hold_site: String,
}

impl HeldRow {
    /// Mean hold per acquisition, ns (0 without acquisitions).
    pub fn hold_mean_ns(&self) -> f64 {
        self.hold_ns as f64 / self.locked.max(1) as f64
    }
}

/// The rows as the [`LOCK_TABLE`] artifact; `None` if they cannot be encoded.
pub fn held_artifact(rows: &[HeldRow]) -> Option<Artifact> {
    let content = serde_json::to_string(rows).ok()?;
    Some(Artifact {
        name: LOCK_TABLE.into(),
        media_type: "application/json".into(),
        content,
    })
}

/// The key of a lock in both of a run's views, `PID:0xADDR` (the in-process table's
/// [`HeldRow::lock`], and the futex view's word: a mutex's futex word is its first field).
pub fn lock_key(pid: u32, addr: u64) -> String {
    format!("{pid}:{addr:#x}")
}

/// The table of a `locks` result, if it has one.
pub fn held_rows(r: &ExperimentResult) -> Option<Vec<HeldRow>> {
    r.artifact_json(LOCK_TABLE)
}
