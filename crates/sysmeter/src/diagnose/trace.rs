//! `sysmeter trace`: a system-call summary of a launched command or a running process — per
//! call the count, errors, total and mean time and share of the total, sorted like
//! `strace -c` — across all threads (and with `-f` child processes).
//!
//! Two backends feed one [`summary::Collector`]: ptrace (works unprivileged on one's own
//! processes; with `-e` a seccomp filter makes only the selected calls stop a launched
//! command) and kernel tracepoints (`raw_syscalls` through perf_event_open: no stops, used
//! automatically when permitted). Before tracing, the overhead of the chosen backend is
//! measured (`calibrate`) and the part of it inside each call's timed interval is
//! subtracted. The result is one [`ExperimentResult`] (`trace`) with a metric per call.
//!
//! Depends on `model`, `stats`, `host` (procfs parsers) and sysmeter-sys (ptrace, seccomp,
//! forking); never on `store`, `report` or `commands`.

mod calibrate;
pub mod classes;
mod errno;
mod kernel;
pub mod lookup_summary;
pub mod lookup_trace;
pub mod lookups;
pub mod names;
mod ptrace;
mod record;
mod run;
pub mod summary;
mod tracepoint;

use std::time::Duration;

pub use crate::diagnose::observe::error::ObserveError as TraceError;
pub use crate::diagnose::observe::session::{
    CommandState, Ended, Observer as TraceObserver, Pending,
};
pub use calibrate::Overhead;
pub use classes::Selection;

pub use crate::diagnose::observe::target::Target;

use crate::diagnose::observe::{self, backend::Backend as _, backend::Request};
use crate::model::ExperimentResult;

observe::backend::backends! {
    /// The backend that runs (`--backend`; `auto` takes the in-kernel programs where they
    /// are permitted, else tracepoints where those are, else ptrace).
    pub enum Backend {
        /// ptrace stops.
        Ptrace = "ptrace", "ptrace (works unprivileged on your own processes)";
        /// `raw_syscalls` tracepoints.
        Tracepoint = "tracepoint",
            "raw_syscalls tracepoints through perf_event_open, every call read from perf \
             rings (no stops; needs privileges)";
        /// BPF programs on `raw_syscalls` aggregating in the kernel.
        Bpf = "bpf",
            "In-kernel aggregation (BPF programs on raw_syscalls, maps read at the end: \
             nothing lost under load; needs root or CAP_BPF + CAP_PERFMON and kernel BTF)";
    }
    auto "The in-kernel backend where it is permitted, else tracepoints, else ptrace":
        Bpf because "in-kernel aggregation: permitted, kernel BTF present; exact at any load",
        else Tracepoint;
}

impl Backend {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        self.name()
    }
}

/// The in-kernel counter of system calls for a live view, where BPF may run here (`None`:
/// it cannot; `kernel::available` says why).
pub fn live_counter() -> Option<Box<dyn crate::diagnose::observe::call_counter::CallCounter>> {
    let k = kernel::available().ok()?;
    Some(Box::new(kernel::Counter(k)))
}

/// A validated `trace` configuration.
#[derive(Debug, Clone)]
pub struct TraceConfig {
    /// Command or process.
    pub target: Target,
    /// `-e`: the calls to count (all when `None`).
    pub selection: Option<Selection>,
    /// `-f`: follow child processes (threads are always followed).
    pub follow_forks: bool,
    /// `--backend`.
    pub backend: Request<Backend>,
    /// `--duration`: stop tracing after this long.
    pub duration: Option<Duration>,
    /// Put the ptrace tracer on the tracee's CPU: cross-CPU ptrace stops are very expensive
    /// in virtual machines, where each one wakes the other vCPU (docs/trace.md, Pinning).
    pub pin: bool,
}

/// The result of a trace.
#[derive(Debug)]
pub struct TraceOutput {
    /// The `trace` experiment result.
    pub result: ExperimentResult,
    /// The CPU the tracer (and a launched tracee) was pinned to.
    pub pinned_cpu: Option<usize>,
    /// Why tracing ended.
    pub ended: Ended,
    /// The launched command's fate.
    pub command: CommandState,
}

/// Traces `cfg.target` to the end (or Ctrl-C, or `--duration`) and summarises its system
/// calls. The caller installs the Ctrl-C flag (`sysmeter_sys::signal`) first.
pub fn trace(
    cfg: &TraceConfig,
    observer: &mut dyn TraceObserver,
) -> Result<TraceOutput, TraceError> {
    let started = std::time::Instant::now();
    let out = run::run(cfg, observer)?;
    let result = record::build(&out, cfg, started.elapsed());
    Ok(TraceOutput {
        result,
        pinned_cpu: out.pinned_cpu,
        ended: out.session.ended,
        command: out.session.command,
    })
}
