//! The typed rows of an `alloc` result: per allocation site (a call stack), its
//! allocations, bytes, what was still live at exit (leaks), the temporary allocations and
//! the anonymous maps among them. `diagnose::alloc` writes them as the result's
//! [`ALLOC_SITES`] artifact (a JSON array, biggest bytes first), which the store keeps like
//! every artifact; renderers read them with [`sites`] and never parse a metric or note.
//! Depends on `model` types, serde and serde_json only.

use serde::{Deserialize, Serialize};

use super::ExperimentResult;

/// The result id of `alloc`.
pub const ALLOC_ID: &str = "alloc";
/// The name of the artifact that holds the typed rows.
pub const ALLOC_SITES: &str = "alloc sites";

/// The metric of the peak of live bytes.
pub const PEAK_LIVE: &str = "peak live";
/// The metric of when the peak was reached, ns after the start.
pub const PEAK_AFTER: &str = "peak reached after";
/// The series of the live heap over time (seconds since start).
pub const LIVE_HEAP: &str = "live heap";

/// The peak of live bytes of `r` and when it was reached (ns after the start), if it has
/// them.
pub fn peak(r: &ExperimentResult) -> Option<(f64, Option<f64>)> {
    let metric = |name: &str| {
        (r.metrics.iter())
            .find(|m| m.name == name)
            .map(|m| m.summary.median)
    };
    metric(PEAK_LIVE).map(|bytes| (bytes, metric(PEAK_AFTER)))
}

/// One allocation site.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AllocSite {
    /// Rank by bytes allocated, from 1.
    pub rank: usize,
    /// The code that asked for the memory: `function (file:line)`.
    pub site: String,
    /// The whole stack, innermost first.
    pub stack: Vec<String>,
    /// Allocations made there.
    pub allocations: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Blocks still live at the end (leaks when the program exited; with `-p`, live when
    /// observation stopped).
    pub leaked: u64,
    /// Their bytes.
    pub leaked_bytes: u64,
    /// Freed by the allocating thread before its next allocation.
    pub temporary: u64,
    /// Anonymous maps among the allocations.
    pub mmaps: u64,
}

impl AllocSite {
    /// Bytes per allocation.
    pub fn mean_size(&self) -> f64 {
        self.bytes as f64 / self.allocations.max(1) as f64
    }
}

/// The rows of `r` (empty when it has none).
pub fn sites(r: &ExperimentResult) -> Vec<AllocSite> {
    r.artifact_json(ALLOC_SITES).unwrap_or_default()
}
