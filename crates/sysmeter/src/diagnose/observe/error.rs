//! Why a session could not observe its target, in one type shared by every tracer
//! (`trace`, `calls`, and the paths of `run`): a command that cannot be started (exit codes
//! 127 and 126, as a shell), a process that cannot be attached to (usage errors, exit 2), the
//! kernel's event sources refused, or a system call that failed. Also the check of an attach
//! target and the program resolver's answer as one of these errors.
//!
//! Depends on `host::procfs` and [`super::target`].

use std::io;
use std::path::PathBuf;

use super::target::{Unresolved, resolve_program as resolve};

/// Why a session could not observe its target: the target cannot be launched or attached
/// to, the kernel's event sources are refused, or a system call failed.
#[derive(Debug, thiserror::Error)]
pub enum ObserveError {
    /// The command is not in PATH, or its path does not exist (exit code 127, as a shell).
    #[error(
        "cannot run `{0}`: command not found (no such file here or in PATH); check the name \
         or give its path"
    )]
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
    /// The process has exited and waits for its parent to reap it.
    #[error(
        "PID {pid} has already exited (a zombie until its parent, PID {parent}, reaps it); \
         there is nothing left to observe: give the PID of a live process"
    )]
    Exited {
        /// Target.
        pid: i32,
        /// The parent that has not reaped it.
        parent: i32,
    },
    /// A kernel thread: no user space to observe.
    #[error(
        "PID {0} is a kernel thread, which has no program to observe; give the PID of a user \
         process (`ps -ef` shows kernel threads in [brackets])"
    )]
    KernelThread(i32),
    /// Another user's process, and we are not privileged.
    #[error(
        "PID {pid} belongs to user id {owner} and sysmeter runs as user id {mine}; run \
         sysmeter as that user or as root"
    )]
    NotYours {
        /// Target.
        pid: i32,
        /// Its effective user id.
        owner: u32,
        /// Ours.
        mine: u32,
    },
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
    /// `--backend NAME` asked for a backend that cannot run here (the one sentence of
    /// `observe::backend`, with the backend to use instead).
    #[error(transparent)]
    BackendUnavailable(#[from] super::backend::Unavailable),
    /// A system call of the tracer failed.
    #[error("{what} failed: {error}")]
    Io {
        /// What was attempted.
        what: String,
        /// The error (part of the message, so not a `source`).
        error: io::Error,
    },
}

impl ObserveError {
    /// Whether the user gave something that cannot be traced (exit code 2) rather than the
    /// measurement failing (exit code 1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ObserveError::NoProcess(_)
                | ObserveError::SelfTrace(_)
                | ObserveError::Exited { .. }
                | ObserveError::KernelThread(_)
                | ObserveError::NotYours { .. }
                | ObserveError::AlreadyTraced { .. }
                | ObserveError::AttachRefused { .. }
        )
    }

    /// The exit code a shell would give when the command cannot be started (127 not found,
    /// 126 not executable), like `sysmeter run`.
    pub fn exit_code(&self) -> Option<u8> {
        self.unresolved().map(|u| u.exit_code())
    }

    /// The launch failure this error is, if it is one.
    fn unresolved(&self) -> Option<Unresolved> {
        match self {
            ObserveError::CommandNotFound(_) => Some(Unresolved::NotFound),
            ObserveError::NotExecutable(name) => Some(Unresolved::NotExecutable(name.into())),
            _ => None,
        }
    }

    /// The refusal to attach to `pid`, with the hint that fits who we are.
    pub fn refused(pid: i32, error: io::Error) -> ObserveError {
        let root = std::fs::read_to_string("/proc/self/status")
            .is_ok_and(|t| crate::host::procfs::parse_status(&t).is_root());
        let hint = if root {
            "the kernel refuses even root here (kernel threads, the init process of some \
             namespaces, or a security module); pick another process"
        } else {
            "run sysmeter as the process's owner or as root (with Yama, \
             `sysctl kernel.yama.ptrace_scope=0` allows same-user attaching)"
        };
        ObserveError::AttachRefused {
            pid,
            error,
            hint: hint.into(),
        }
    }

    /// Maps an I/O error of `what` into [`ObserveError::Io`].
    pub fn io(what: impl Into<String>) -> impl FnOnce(io::Error) -> ObserveError {
        let what = what.into();
        move |error| ObserveError::Io { what, error }
    }
}

/// The file to execute for command `name`, from the one resolver
/// ([`resolve`]), as an error of the session when there is none.
pub fn resolve_program(name: &std::ffi::OsStr) -> Result<PathBuf, ObserveError> {
    let text = || name.to_string_lossy().into_owned();
    resolve(name).map_err(|e| match e {
        Unresolved::NotFound => ObserveError::CommandNotFound(text()),
        Unresolved::NotExecutable(_) => ObserveError::NotExecutable(text()),
    })
}

/// Checks that `pid` can be attached to by a ptrace tracer: it can be observed at all
/// ([`super::attachable::check_observable`]) and has no other tracer.
pub fn check_target(pid: i32) -> Result<(), ObserveError> {
    super::attachable::check_observable(pid)?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|_| ObserveError::NoProcess(pid))?;
    let tracer = status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .and_then(|t| t.trim().parse::<i32>().ok());
    match tracer {
        Some(tracer) if tracer != 0 => Err(ObserveError::AlreadyTraced { pid, tracer }),
        _ => Ok(()),
    }
}
