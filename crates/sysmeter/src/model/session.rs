//! How a diagnosis session ended, the same for every diagnosis and embedded in its result
//! (`ExperimentResult::session`, docs/json-schema.md): why observing stopped, the launched
//! command's exit state, the wall time observed and sysmeter's own CPU time in it, the
//! records lost on the way, and whether the mechanism was blinded (a BPF program that
//! returns 0 on its tracepoint hid the events from perf; `diagnose/observe/witness.rs`).
//! Built by `diagnose::observe::session::end`.
//!
//! Pure data. Depends on nothing.

use serde::{Deserialize, Serialize};

/// The end of one diagnosis session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionEnd {
    /// Why observing stopped: `finished` (the command or process ended), `interrupted`
    /// (Ctrl-C) or `duration` (`--duration` passed).
    pub ended: String,
    /// The launched command's exit code (128 + signal when killed); absent when a process was
    /// attached to (`-p`) or the command outlived the session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Wall time observed, ns.
    pub wall_ns: u64,
    /// sysmeter's own CPU time while observing, ns (what reading the events cost it).
    pub own_cpu_ns: u64,
    /// Records or events lost on the way (full rings, full maps).
    #[serde(default)]
    pub lost: u64,
    /// The tracepoint hidden from the mechanism (`syscalls:sys_enter_futex`), when another
    /// BPF program blinded it; the result's first finding says by what.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blinded: Option<String>,
}
