//! `sysmeter profile`: a sampling CPU profile of a command or a running process.
//!
//! The pipeline, one submodule per step:
//! - [`sampling`] and `observe::records`: `perf_event_open` on the software CPU clock (works
//!   in VMs without hardware counters) with the user registers and a stack copy (unwound by
//!   `observe::unwind` at every drain), and the MMAP2/COMM/FORK side-band records that let
//!   us symbolise after the process is gone;
//! - [`session`]: start a command paused before `execve` (so the events exist before it runs)
//!   or attach to every thread of a pid, read the ring buffers until it ends, `--duration`
//!   passes or Ctrl-C;
//! - [`maps`] (pure): which file and file offset an address meant in a process at a time,
//!   across exec, fork and late `dlopen`;
//! - [`symbolize`]: blazesym on the ELF files (and `/proc/kallsyms` for the kernel);
//! - [`aggregate`]: symbolised stacks from raw samples; [`stacks`] and [`callgraph`] (pure):
//!   flat profile, gprof-style call graph, folded stacks, truncated-stack accounting;
//!   [`flame`]: the SVG via inferno;
//! - [`overhead`]: measures what one sample costs the sampled program;
//! - [`result`] and [`findings`]: the [`ExperimentResult`]s (metrics, findings, artifacts)
//!   stored and rendered.
//!
//! User stacks are unwound with the binaries' DWARF CFI (frame pointers where there is
//! none), so code built without frame pointers has whole stacks; stacks that still end early
//! are counted and what stopped them is named (docs/profiling.md).
//! Depends on `model`, `host` (the CPU-list parser) and `sysmeter-sys` (launching, clocks);
//! never prints.

pub mod aggregate;
pub mod callgraph;
pub mod findings;
pub mod flame;
pub mod offcpu;
pub mod overhead;
pub mod result;
pub mod sampling;
pub mod session;
pub mod stacks;

pub use crate::diagnose::observe::target::Target;
use std::time::Duration;

use crate::diagnose::observe::backend::Reason;
use crate::model::ExperimentResult;

/// Why profiling could not be done.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
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

/// Settings of one profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Samples per second of CPU time per thread (`-F`).
    pub frequency: u64,
    /// Stop sampling after this long (`--duration`); `None`: until the target ends (or
    /// Ctrl-C).
    pub duration: Option<Duration>,
    /// Functions listed in the call graph at most.
    pub call_graph_entries: usize,
    /// Share of samples (0..1) a function needs in its total to get a call-graph entry.
    pub call_graph_min_share: f64,
    /// Rows of the flat profile stored as metrics at most.
    pub flat_rows: usize,
    /// Sample the CPU clock (off for `--off-cpu` alone).
    pub on_cpu: bool,
    /// Record where threads block (`--off-cpu`, `--both`).
    pub off_cpu: bool,
    /// How: in-kernel aggregation or perf rings (`--backend`, resolved).
    pub off_backend: offcpu::Backend,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            frequency: 999,
            duration: None,
            call_graph_entries: 30,
            call_graph_min_share: 0.01,
            flat_rows: 50,
            on_cpu: true,
            off_cpu: false,
            off_backend: offcpu::Backend::Perf,
        }
    }
}

/// A finished profile: the results to store and render, and how the target ended.
#[derive(Debug, Clone)]
pub struct Profile {
    /// `profile` (summary, findings, artifacts) and `profile.flat` (one metric per function).
    pub results: Vec<ExperimentResult>,
    /// Exit status of a launched command (`None` for `-p`, or when it was still running).
    pub exit: Option<sysmeter_sys::process::exit::Exit>,
    /// Ctrl-C stopped the profile.
    pub interrupted: bool,
    /// Folded stacks (`a;b;c N` lines).
    pub folded: String,
    /// The flame graph SVG.
    pub flamegraph: String,
    /// With `--both`: the off-CPU folded stacks and flame graph (the fields above are then
    /// the on-CPU ones; with `--off-cpu` alone they are the off-CPU ones).
    pub off_cpu: Option<(String, String)>,
}

/// Whether this process may sample a child with `perf_event_open`: `Err` says why not and
/// how to fix it (tests use it to skip).
pub fn perf_available() -> Result<(), Reason> {
    sampling::probe().map_err(|e| Reason(e.to_string()))
}

/// Profiles `target` with `settings`, calling `progress(samples, elapsed)` now and then while
/// sampling (for a live counter on a terminal).
pub fn profile(
    target: &Target,
    settings: &Settings,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Profile, ProfileError> {
    if settings.off_cpu {
        return offcpu::profile(target, settings, progress);
    }
    let calibration = overhead::calibrate()?;
    let recording = session::record(target, settings, progress)?;
    let analysis = aggregate::analyse(&recording.raw, &recording.maps_at_start);
    let flamegraph = flame::render(&analysis.stacks, &flame_title(target))?;
    let results = result::build(&recording, &analysis, &calibration, settings, &flamegraph);
    Ok(Profile {
        results,
        exit: recording.exit.map(|(exit, _)| exit),
        interrupted: recording.interrupted,
        folded: analysis.stacks.folded(),
        flamegraph,
        off_cpu: None,
    })
}

/// The flame graph's title: the command line or the pid.
fn flame_title(target: &Target) -> String {
    format!("sysmeter profile: {}", target.describe())
}
