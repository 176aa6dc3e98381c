//! What the two stack-sampling diagnoses share — `profile` (the CPU clock) and `offcpu`
//! (where threads block) — one submodule per step:
//! - [`cpu_clock`]: `perf_event_open` on the software CPU clock with the user registers and
//!   a stack copy, and the MMAP2/COMM/FORK side-band records that let us symbolise after the
//!   process is gone; the one opener of a sampling event with its ring (smaller rings when
//!   locked memory is short) and the hint for its errors;
//! - [`session`]: the one sampled session: start a command paused before `execve` (so the
//!   events exist before it runs) or attach to every thread of a pid, drain the rings until
//!   it ends, `--duration` passes or Ctrl-C; a diagnosis adds its own events as an
//!   [`session::Extra`];
//! - [`aggregate`]: symbolised stacks from raw samples; [`stacks`] and [`callgraph`] (pure):
//!   flat profile, gprof-style call graph, folded stacks, truncated-stack accounting;
//!   [`threads`]: the per-thread stacks with source lines the exports read;
//!   [`flame`]: the SVG of either kind (CPU samples, or blocked time in blue);
//! - [`results`]: a finished profile as the command receives it, the seam through which the
//!   command hands `profile`'s on-CPU part to `offcpu` (`profile --both`), and the
//!   one-value metric both store.
//!
//! Depends on `model`, the floor (`records`, `maps`, `symbolize`, `unwind`, `proc`,
//! `session`, `target`, `flame`) and `sysmeter-sys`; never on a diagnosis; never prints.

pub mod aggregate;
pub mod callgraph;
pub mod cpu_clock;
pub mod flame;
pub mod results;
pub mod session;
pub mod sources;
pub mod stacks;
pub mod threads;

/// Why a sampled profile (on-CPU, off-CPU or both) could not be done.
#[derive(Debug, thiserror::Error)]
pub enum SampledError {
    /// `perf_event_open` refused.
    #[error("cannot open a CPU-clock sampling event for {what}: {cause}; {hint}")]
    PerfOpen {
        /// What the event was for (`pid 123 on CPU 0`).
        what: String,
        /// The system error.
        cause: std::io::Error,
        /// How to fix it.
        hint: String,
    },
    /// The command could not be started.
    #[error("cannot start {command}: {cause}; check the command name, PATH and permissions")]
    Launch {
        /// The program.
        command: String,
        /// The system error.
        cause: std::io::Error,
    },
    /// The pid to attach to does not exist or has no threads left.
    #[error(
        "process {pid} does not exist (no /proc/{pid}/task); give the pid of a running process"
    )]
    NoSuchPid {
        /// The pid.
        pid: i32,
    },
    /// Waiting for the command failed.
    #[error("cannot wait for pid {pid}: {cause}; it may have been reaped by someone else")]
    Wait {
        /// The child.
        pid: i32,
        /// The system error.
        cause: std::io::Error,
    },
    /// The flame graph could not be drawn.
    #[error("cannot draw the flame graph: {0}; the folded stacks are still available (--folded)")]
    Flame(String),
}
