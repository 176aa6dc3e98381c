//! The seam between `run` and the tracer that counts a launched command's path lookups.
//! `run` may not import `trace` (a diagnosis imports only this floor), so the command hands
//! it a [`StartLookups`] — `trace`'s tracepoint tracer — and receives a [`LookupSummary`]:
//! plain metric rows, findings and an artifact, already worded by the tracer that knows what
//! it measured.

use crate::diagnose::observe::backend::Reason;
use crate::model::{Artifact, Finding, Unit};

/// The key of the finding that counts the trace records lost (its value: how many), which
/// `run` also records as its session's `lost`.
pub const LOOKUPS_LOST: &str = "lookup_records_lost";

/// One metric row: name, unit, value, note.
pub type LookupRow = (&'static str, Unit, f64, String);

/// What a lookup tracer found, ready for a record.
#[derive(Debug, Clone, Default)]
pub struct LookupSummary {
    /// The metrics (calls, failures, time, share of the system time).
    pub rows: Vec<LookupRow>,
    /// What the numbers mean, and what could not be seen.
    pub findings: Vec<Finding>,
    /// The most looked-up paths, when paths were read.
    pub artifact: Option<Artifact>,
}

/// A lookup trace running on a launched command.
pub trait LookupTracer {
    /// Stops tracing (after the command exited) and words what was found, given the
    /// command's system time in ns (for its share).
    fn finish(self: Box<Self>, system_ns: u64) -> LookupSummary;
}

/// Opens a lookup trace on the gated child `pid` before its exec; `paths` also reads the
/// looked-up paths (uprobes). `Err` says in one line why nothing can be traced.
pub type StartLookups = fn(pid: i32, paths: bool) -> Result<Box<dyn LookupTracer>, Reason>;
