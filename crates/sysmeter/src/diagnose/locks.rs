//! `sysmeter locks`: lock contention of a command or a running process, like `mutrace`, from
//! the kernel's side. A contended lock is one a thread had to sleep on, and every sleeping
//! lock on Linux — glibc's mutexes, rwlocks, condition variables and semaphores, Rust's
//! `std::sync`, any other futex user — sleeps in the `futex` system call. So the futex
//! tracepoints see every contended acquisition and nothing else: an uncontended lock never
//! enters the kernel and costs nothing to observe.
//!
//! The pipeline, one submodule per step:
//! - [`events`] and [`parse`]: `syscalls:sys_{enter,exit}_futex` through perf_event_open,
//!   with call chains and a copy of the top of the user stack;
//! - [`bpf`], [`bpf_maps`]: the in-kernel backend (`--backend bpf`), whose maps become the
//!   same waits, so everything after pairing is shared; [`source`] drives either backend;
//! - [`session`]: launch gated or attach, drain until the end, `--duration` or Ctrl-C;
//! - [`waits`] (pure): waits (exit − entry of a waiting operation) and their wakers;
//! - [`unwind`] and [`sites`]: the stacks (with the frames frameless glibc hides), the call
//!   site with `file:line`, the kind of wait;
//! - [`live`]: the waits so far, read between drains (a snapshot);
//! - [`result`]: per lock (futex word) and per call site: contended acquisitions, total and
//!   longest wait, the threads, where the lock was released; the findings.
//!
//! Depends on `model`, `stats`, `host`, the profiler's maps/symbols and `sysmeter-sys`;
//! never prints.

pub mod bpf;
pub mod bpf_maps;
pub mod events;
pub mod held;
pub mod live;
pub mod parse;
pub mod result;
pub mod session;
pub mod sites;
pub mod source;
pub mod unwind;
pub mod waits;

use std::time::Duration;

use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::target::Target;
use crate::model::ExperimentResult;

/// Why `locks` could not run.
#[derive(Debug, thiserror::Error)]
pub enum LocksError {
    /// The futex tracepoints cannot be used here.
    #[error(transparent)]
    Unavailable(#[from] Reason),
    /// `perf_event_open` or its mmap refused.
    #[error(
        "cannot open the futex tracepoints for {what}: {cause}; run as root (or with \
         CAP_PERFMON), and check `perf record -e syscalls:sys_enter_futex` works here"
    )]
    Perf {
        /// What the events were for.
        what: String,
        /// The system error.
        cause: std::io::Error,
    },
    /// The command could not be started.
    #[error("cannot start {command}: {cause}; check the command name, PATH and permissions")]
    Launch {
        /// The program.
        command: String,
        /// The system error.
        cause: std::io::Error,
    },
    /// The pid does not exist.
    #[error("process {pid} does not exist; give the pid of a running process to -p")]
    NoSuchPid {
        /// The pid.
        pid: i32,
    },
    /// Waiting for the command failed.
    #[error("cannot wait for the command: {cause}")]
    Wait {
        /// The system error.
        cause: std::io::Error,
    },
}

/// Settings of one session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Settings {
    /// Stop observing after this long (`--duration`).
    pub duration: Option<Duration>,
    /// Where the waits are measured.
    pub backend: Backend,
}

pub use crate::diagnose::observe::in_kernel::Backend;

/// The backend for `--backend` ([`crate::diagnose::observe::in_kernel::choose`]); the line that
/// says which and why is its `line("locks")`.
pub use crate::diagnose::observe::in_kernel::choose;

/// A finished session.
#[derive(Debug, Clone)]
pub struct Locks {
    /// The `locks` result.
    pub result: ExperimentResult,
    /// Exit status of a launched command.
    pub exit: Option<sysmeter_sys::process::exit::Exit>,
    /// Ctrl-C stopped it.
    pub interrupted: bool,
}

/// Whether the futex tracepoints can be used here: `Err` says why not and how to fix it.
pub fn available() -> Result<(), Reason> {
    let layout = events::layout().map_err(Reason)?;
    let mut rings = events::Rings::new(layout);
    rings
        .add(std::process::id() as i32, &[0], false)
        .map_err(|e| {
            Reason(
                LocksError::Perf {
                    what: "this process".into(),
                    cause: e,
                }
                .to_string(),
            )
        })
}

/// Observes `target`; `attached(text)` is called when the events are open on a running
/// process (scripts and tests wait for it).
pub fn locks(
    target: &Target,
    settings: &Settings,
    attached: &mut dyn FnMut(&str),
) -> Result<Locks, LocksError> {
    let layout = events::layout().map_err(Reason)?;
    let mut recording = session::record(target, layout, settings, attached)?;
    let result = result::build(&mut recording, target);
    Ok(Locks {
        result,
        exit: recording.exit.map(|(e, _)| e),
        interrupted: recording.stop == crate::diagnose::observe::session::Ended::Interrupted,
    })
}
