//! Running a trace: choose the backend (and say why), check an attach target, decide the
//! CPU placement, then hand over to the launch or attach path of that backend. Each path
//! calibrates the overhead first, then traces until the target ends, Ctrl-C, or
//! `--duration`, and returns an [`Outcome`] for the record.

mod ptrace_paths;
mod tracepoint_paths;

use crate::diagnose::observe::error::check_target;
pub(crate) use crate::diagnose::observe::proc::{each_thread, online_cpus};
pub(crate) use crate::diagnose::observe::session::StopWhen;
use crate::diagnose::observe::session::{StillRunning, Stopped, Watch, exit_code};
use crate::diagnose::observe::witness::IoCalls;

use sysmeter_sys::process::wait::reap;
use sysmeter_sys::ptrace::TracedChild;

use super::calibrate::Overhead;
use super::kernel::{self, KernelTrace};
use super::ptrace::{Session, SessionStats};
use super::summary::Collector;
use super::tracepoint::{self, Ids};
use super::{Backend, Target, TraceConfig, TraceError, TraceObserver};
use crate::diagnose::observe::backend;

/// Everything a trace produced, before it becomes a result.
#[derive(Debug)]
pub(super) struct Outcome {
    /// The tallies.
    pub collector: Collector,
    /// The measured overhead.
    pub overhead: Overhead,
    /// The backend used.
    pub backend: Backend,
    /// Why that backend.
    pub why: String,
    /// Whether a seccomp filter limited the stops to the selected calls.
    pub seccomp: bool,
    /// Extra facts for the findings (mounted tracefs, detach problems…).
    pub notes: Vec<String>,
    /// How tracing ended: why, the launched command's fate, the records the tracepoint
    /// rings lost, and the wall and own CPU time from the start of the trace (calibration
    /// included) to its end.
    pub session: Stopped,
    /// The CPU the tracer was pinned to.
    pub pinned_cpu: Option<usize>,
    /// ptrace session counters.
    pub stats: Option<SessionStats>,
    /// The kernel's own count of the target's read and write calls while it was traced
    /// (the tracepoint backend's witness, `observe::witness`; empty with ptrace).
    pub io: IoCalls,
}

/// A launched command that outlived a ptrace session.
#[derive(Debug)]
pub(super) enum PendingKind {
    /// Detached from ptrace; still our child.
    Detached(TracedChild),
    /// Still traced because of its seccomp filter (without a tracer the selected calls
    /// would fail with ENOSYS); followed silently to the end.
    Silent(Box<Session>, TracedChild),
}

impl StillRunning for PendingKind {
    fn wait(self: Box<Self>) -> Result<i32, TraceError> {
        let fail = TraceError::io("waiting for the traced command");
        match *self {
            PendingKind::Detached(mut child) => {
                child.release();
                exit_code(reap(child.pid(), true)).map_err(fail)
            }
            PendingKind::Silent(mut session, mut child) => {
                let mut idle = Collector::new(None, 0.0);
                session.run(&mut idle, &mut |_| false).map_err(fail)?;
                child.reaped();
                Ok(session.exit_code.unwrap_or(0))
            }
        }
    }
}

/// What the chosen backend's availability check opened or found.
enum Checked {
    /// The in-kernel programs, loaded and attached.
    Kernel(KernelTrace),
    /// The tracepoint ids and field offsets.
    Tracepoint(Ids),
    /// Nothing to hand on (ptrace).
    Nothing,
}

/// Picks the backend: `(backend, why, what its check found, note)`. `auto` takes the
/// in-kernel programs where they load, else tracepoints where they are permitted, else
/// ptrace; only a backend asked for by name makes its absence an error.
fn choose(cfg: &TraceConfig) -> Result<(Backend, String, Checked, Option<String>), TraceError> {
    let chosen = backend::choose(cfg.backend, kernel::available)?;
    let because = chosen.because;
    if let Some(k) = chosen.checked {
        return Ok((Backend::Bpf, because, Checked::Kernel(k), None));
    }
    if chosen.backend == Backend::Ptrace {
        return Ok((Backend::Ptrace, because, Checked::Nothing, None));
    }
    match tracepoint::probe(true) {
        Ok((ids, note)) => Ok((Backend::Tracepoint, because, Checked::Tracepoint(ids), note)),
        Err(u) if cfg.backend == backend::Request::Auto => {
            let why = format!("{because}; tracepoint: {u}");
            Ok((Backend::Ptrace, why, Checked::Nothing, None))
        }
        Err(u) => Err(TraceError::TracepointsUnavailable {
            reason: u.reason,
            fix: u.fix,
        }),
    }
}

/// The sentence telling that tracing of PID `pid` has begun.
pub(super) fn attached_text(pid: i32, threads: usize, backend: &str) -> String {
    format!(
        "tracing PID {pid} ({threads} thread(s)) with {backend}; Ctrl-C stops tracing and \
         detaches, leaving it running"
    )
}

/// The CPU thread `pid` last ran on (field 39 of /proc/PID/stat).
pub(super) fn last_cpu(pid: i32) -> Option<usize> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = text.rsplit_once(") ")?;
    // Fields after the command start at field 3 (state).
    rest.split_whitespace().nth(39 - 3)?.parse().ok()
}

/// Runs the trace `cfg` describes.
pub(super) fn run(
    cfg: &TraceConfig,
    observer: &mut dyn TraceObserver,
) -> Result<Outcome, TraceError> {
    if let Target::Attach(pid) = cfg.target {
        check_target(pid)?;
    }
    let watch = Watch::start();
    let (_, why, checked, note) = choose(cfg)?;
    let mut out = match (checked, &cfg.target) {
        (Checked::Kernel(k), Target::Launch(argv)) => kernel::launch(cfg, argv, Some(k))?,
        (Checked::Kernel(k), Target::Attach(pid)) => kernel::attach(cfg, *pid, Some(k), observer)?,
        (Checked::Tracepoint(ids), Target::Launch(argv)) => {
            tracepoint_paths::launch(cfg, argv, ids)?
        }
        (Checked::Tracepoint(ids), Target::Attach(pid)) => {
            tracepoint_paths::attach(cfg, *pid, ids, observer)?
        }
        (Checked::Nothing, Target::Launch(argv)) => ptrace_paths::launch(cfg, argv)?,
        (Checked::Nothing, Target::Attach(pid)) => ptrace_paths::attach(cfg, *pid, observer)?,
    };
    out.why = why;
    out.notes.extend(note);
    out.session.watched = watch.read();
    Ok(out)
}
