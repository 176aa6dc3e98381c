//! `sysmeter trace`: a system-call summary of a launched command or a running process — per
//! call the count, errors, total and mean time and share of the total, sorted like
//! `strace -c` — across all threads (and with `-f` child processes).
//!
//! Two backends feed one [`summary::Collector`]: ptrace (works unprivileged on one's own
//! processes; with `-e` a seccomp filter makes only the selected calls stop a launched
//! command) and kernel tracepoints (`raw_syscalls` through perf_event_open: no stops, used
//! automatically when permitted). Before tracing, the overhead of the chosen backend is
//! measured ([`calibrate`]) and the part of it inside each call's timed interval is
//! subtracted. The result is one [`ExperimentResult`] (`trace`) with a metric per call.
//!
//! Depends on `model`, `stats`, `host` (procfs parsers) and sysmeter-sys (ptrace, seccomp,
//! forking); never on `store`, `report` or `commands`.

mod calibrate;
pub mod classes;
mod errno;
pub mod lookup_trace;
pub mod lookups;
pub mod names;
mod ptrace;
mod record;
mod run;
pub mod summary;
mod tracepoint;

use std::io;
use std::path::PathBuf;
use std::time::Duration;

pub use calibrate::Overhead;
pub use classes::Selection;
pub(in crate::diagnose) use record::lookups::{paths as path_findings, paths_artifact};
pub use run::Pending;
pub(crate) use run::{StopWhen, check_target, each_thread, online_cpus, process_gone};

pub use crate::diagnose::observe::target::Target;
use crate::diagnose::observe::target::{Unresolved, resolve_program as resolve};

use crate::model::ExperimentResult;

/// Which backend the user asked for (`--backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendChoice {
    /// Tracepoints when permitted, else ptrace.
    Auto,
    /// Always ptrace.
    Ptrace,
    /// Always tracepoints (fails when not permitted).
    Tracepoint,
}

/// The backend that ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// ptrace stops.
    Ptrace,
    /// `raw_syscalls` tracepoints.
    Tracepoint,
}

impl Backend {
    /// Lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Backend::Ptrace => "ptrace",
            Backend::Tracepoint => "tracepoint",
        }
    }
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
    pub backend: BackendChoice,
    /// `--duration`: stop tracing after this long.
    pub duration: Option<Duration>,
    /// Put the ptrace tracer on the tracee's CPU: cross-CPU ptrace stops are very expensive
    /// in virtual machines, where each one wakes the other vCPU (docs/trace.md, Pinning).
    pub pin: bool,
}

/// Why tracing ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The command or process ended.
    Finished,
    /// Ctrl-C (SIGINT/SIGTERM).
    Interrupted,
    /// `--duration` passed.
    Duration,
}

/// What became of a launched command.
#[derive(Debug)]
pub enum CommandState {
    /// Nothing was launched (`-p`).
    NotLaunched,
    /// It exited with this code (128 + signal when killed).
    Exited(i32),
    /// Tracing stopped before it ended; wait for it with [`Pending::wait`].
    StillRunning(Pending),
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

/// Why a trace could not run.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The command is not in PATH, or its path does not exist (exit code 127, as a shell).
    #[error("cannot run `{0}`: no such file here or in PATH; check the name or give its path")]
    CommandNotFound(String),
    /// The command exists but is not an executable file (exit code 126, as a shell).
    #[error("cannot run `{0}`: it is not an executable file; check its permissions (chmod +x)")]
    NotExecutable(String),
    /// No such process.
    #[error("no process with PID {0} exists; check the PID (e.g. `ps -p {0}`)")]
    NoProcess(i32),
    /// The PID is sysmeter itself.
    #[error("PID {0} is sysmeter itself; give the PID of another process")]
    SelfTrace(i32),
    /// Another tracer holds the process.
    #[error("PID {pid} is already traced by PID {tracer} (strace, gdb?); detach that tracer first")]
    AlreadyTraced {
        /// Target.
        pid: i32,
        /// Its tracer.
        tracer: i32,
    },
    /// The kernel refused to attach.
    #[error("cannot trace PID {pid}: {error}; {hint}")]
    AttachRefused {
        /// Target.
        pid: i32,
        /// The kernel's answer (part of the message, so not a `source`).
        error: io::Error,
        /// What to do about it (differs for root).
        hint: String,
    },
    /// `--backend tracepoint` but they cannot be used here.
    #[error("tracepoints unavailable: {reason}; {fix} (or use --backend ptrace)")]
    TracepointsUnavailable {
        /// What is missing.
        reason: String,
        /// How to fix it.
        fix: String,
    },
    /// A system call of the tracer failed.
    #[error("{what} failed: {error}")]
    Io {
        /// What was attempted.
        what: String,
        /// The error (part of the message, so not a `source`).
        error: io::Error,
    },
}

impl TraceError {
    /// Whether the user gave something that cannot be traced (exit code 2) rather than the
    /// measurement failing (exit code 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            TraceError::NoProcess(_)
                | TraceError::SelfTrace(_)
                | TraceError::AlreadyTraced { .. }
                | TraceError::AttachRefused { .. }
        )
    }

    /// The exit code a shell would give when the command cannot be started (127 not found,
    /// 126 not executable), like `sysmeter run`.
    pub fn exit_code(&self) -> Option<u8> {
        match self {
            TraceError::CommandNotFound(_) => Some(127),
            TraceError::NotExecutable(_) => Some(126),
            _ => None,
        }
    }

    /// The refusal to attach to `pid`, with the hint that fits who we are.
    fn refused(pid: i32, error: io::Error) -> TraceError {
        let root = std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|t| crate::host::procfs::parse_status(&t).is_root());
        let hint = if root {
            "the kernel refuses even root here (kernel threads, the init process of some \
             namespaces, or a security module); pick another process"
        } else {
            "run sysmeter as the process's owner or as root (with Yama, \
             `sysctl kernel.yama.ptrace_scope=0` allows same-user attaching)"
        };
        TraceError::AttachRefused {
            pid,
            error,
            hint: hint.into(),
        }
    }

    fn io(what: impl Into<String>) -> impl FnOnce(io::Error) -> TraceError {
        let what = what.into();
        move |error| TraceError::Io { what, error }
    }
}

/// The file to execute for command `name`, from the one resolver
/// ([`crate::diagnose::observe::target::resolve_program`]), as a trace error when there is none.
pub fn resolve_program(name: &std::ffi::OsStr) -> Result<PathBuf, TraceError> {
    let text = || name.to_string_lossy().into_owned();
    resolve(name).map_err(|e| match e {
        Unresolved::NotFound => TraceError::CommandNotFound(text()),
        Unresolved::NotExecutable(_) => TraceError::NotExecutable(text()),
    })
}

/// Told what a trace of a running process (`-p`) is doing, so the command layer can show
/// it (`diagnose` never prints).
pub trait TraceObserver {
    /// Tracing has begun (one sentence saying what and how to stop).
    fn attached(&mut self, text: &str);
    /// Calls counted so far (a few times a second at most).
    fn progress(&mut self, calls: u64);
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
        ended: out.ended,
        command: out.command,
    })
}
