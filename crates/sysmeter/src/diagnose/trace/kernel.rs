//! The in-kernel backend of `trace` (`--backend bpf`, docs/trace.md and docs/bpf.md): the
//! programs of `crates/sysmeter/bpf/trace.bpf.c` on the raw tracepoints `sys_enter` and
//! `sys_exit` (those under `raw_syscalls`; a raw tracepoint program costs less than a
//! perf-attached one and leaves perf's readers untouched)
//! keep, per (process, thread, call), the count, the total time and a log2 histogram of the
//! durations, and the failures by errno, filtered to the target's processes (children
//! followed through `sched_process_fork`, a launched command from its execve). No record
//! crosses to user space, so no load can make one be lost; only a full map can, and that is
//! counted. A session reads the `counters` array at every drain of the one session loop (the
//! live count) and the maps once at the end (`maps`), which feed the same [`Collector`] the
//! other backends feed, so reports and JSON keep their shape.
//!
//! What this backend does not give: per-call samples (the durations are spread over the
//! histogram's buckets, so quantiles are bucket-accurate; count, total, mean are exact) and
//! the order of calls.

mod calibrate;
mod live;
mod maps;
mod session;

pub(super) use live::Counter;
pub(super) use session::{attach, launch};

use super::summary::Collector;
use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::bpf::{BpfError, Loaded, VALUE_WORDS};
use crate::diagnose::observe::pump::{Handler, Pump};
use crate::diagnose::observe::records::Record;
use maps::{KEY_BYTES, Maps, START_BYTES, slot};

/// The compiled programs (scripts/build-bpf.sh); aligned, or aya refuses the ELF.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../../bpf/trace.bpf.o");

/// Loads and attaches the programs; `Err` is one line saying why they cannot run here.
fn load() -> Result<Loaded, Reason> {
    // Only follow.h's fields and tracepoints: the system-call programs are on raw
    // tracepoints and read their arguments.
    let mut l = Loaded::attached("trace.bpf.o", OBJECT, &[], &[])?;
    for name in ["sys_enter", "sys_exit"] {
        l.attach_raw_tracepoint(name, name)
            .map_err(|e| Reason(e.to_string()))?;
    }
    Ok(l)
}

/// Why the in-kernel backend cannot run here (one line), or the loaded programs, which the
/// session then uses (nothing is a target yet).
pub(super) fn available() -> Result<KernelTrace, Reason> {
    load().map(|loaded| KernelTrace { loaded, base: 0 })
}

/// The loaded and attached programs.
pub(super) struct KernelTrace {
    loaded: Loaded,
    /// The `C_CALLS` counter when the trace began (the calibration loop's calls).
    base: u64,
}

impl std::fmt::Debug for KernelTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KernelTrace")
    }
}

impl KernelTrace {
    /// A launched command, a target from its execve on (before it, sysmeter's gated child).
    pub fn arm(&mut self, pid: i32) -> Result<(), BpfError> {
        self.loaded.insert("armed", pid as u32, 1u8)
    }

    /// A process whose threads are targets from now on.
    pub fn target(&mut self, pid: i32) -> Result<(), BpfError> {
        self.loaded.insert("targets", pid as u32, 1u8)
    }

    /// Process `pid` is a target no more (the calibration loop, once it ended).
    pub fn untarget(&mut self, pid: i32) -> Result<(), BpfError> {
        self.loaded.remove::<u32, u8>("targets", &(pid as u32))
    }

    /// The counters now (empty when they cannot be read).
    fn counters(&mut self) -> Vec<u64> {
        self.loaded.counters("counters").unwrap_or_default()
    }

    /// Every map the result needs.
    fn read(&mut self) -> Result<Maps, BpfError> {
        let l = &mut self.loaded;
        let calls: Vec<([u8; KEY_BYTES], [u64; VALUE_WORDS])> = l.entries("calls")?;
        let errors: Vec<([u8; KEY_BYTES], u64)> = l.entries("errors")?;
        let starts: Vec<(u32, [u8; START_BYTES])> = l.entries("starts")?;
        Ok(Maps {
            calls,
            errors,
            starts,
            counters: l.counters("counters")?,
        })
    }
}

/// What the session loop keeps between drains: the calls the kernel counted so far (the
/// progress line of an attached session and `--duration`'s count).
#[derive(Debug, Default)]
pub(super) struct Progress {
    calls: u64,
}

impl Handler for Progress {
    fn record(&mut self, _: Record<'_>) {}

    fn count(&self) -> u64 {
        self.calls
    }
}

/// No records: each drain reads the counters.
impl Pump<Progress> for KernelTrace {
    fn pump(&mut self, h: &mut Progress, _last: bool) {
        if let Some(&n) = self.counters().get(slot::CALLS) {
            h.calls = n.saturating_sub(self.base);
        }
    }
}

/// Feeds a collector for `selection` with `overhead_ns` from the maps (see
/// [`Maps::feed`]).
fn collect(
    maps: &Maps,
    (selection, overhead_ns): (Option<super::Selection>, f64),
    keep: impl Fn(u32) -> bool,
    unfinished: bool,
) -> (Collector, maps::PerThread) {
    let mut c = Collector::new(selection, overhead_ns);
    let threads = maps.feed(&mut c, keep, unfinished);
    (c, threads)
}
