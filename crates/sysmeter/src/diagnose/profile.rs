//! `sysmeter profile`: a sampling CPU profile of a command or a running process.
//!
//! The sampling itself is the floor's (`observe::sampled`, which `offcpu` shares): CPU-clock
//! events with the user registers and a stack copy, the session until the target ends,
//! symbolised stacks, the flat profile, call graph and flame graph. What is `profile`'s own,
//! one submodule per step:
//! - [`overhead`]: measures what one sample costs the sampled program;
//! - [`result`] and [`findings`]: the [`ExperimentResult`]s (metrics, findings, artifacts)
//!   stored and rendered, and the run record of every profile (`--off-cpu` and `--both`
//!   included);
//! - [`on_cpu`]: this profile as the on-CPU part of `offcpu`'s session (`--both`), handed
//!   over by the command through the floor's `OnCpu` seam.
//!
//! User stacks are unwound with the binaries' DWARF CFI (frame pointers where there is
//! none), so code built without frame pointers has whole stacks; stacks that still end early
//! are counted and what stopped them is named (docs/profiling.md).
//! Depends on `model`, `observe` and `sysmeter-sys` (clocks); never prints.

pub mod findings;
pub mod overhead;
pub mod result;

use std::time::Duration;

use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::sampled::aggregate::Analysis;
use crate::diagnose::observe::sampled::results::{Drawn, OnCpu, Profile};
use crate::diagnose::observe::sampled::session::{self, Recording, Sampling};
use crate::diagnose::observe::sampled::{SampledError, cpu_clock, flame};
use crate::diagnose::observe::target::Target;
use crate::model::ExperimentResult;

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
    /// Where threads block is recorded too, by `offcpu` (`--off-cpu`, `--both`): named in
    /// the run's configuration.
    pub off_cpu: bool,
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
        }
    }
}

impl Settings {
    /// What the sampled session is asked to do.
    pub fn sampling(&self) -> Sampling {
        Sampling {
            frequency: self.frequency,
            duration: self.duration,
            on_cpu: self.on_cpu,
        }
    }
}

/// Whether this process may sample a child with `perf_event_open`: `Err` says why not and
/// how to fix it (tests use it to skip).
pub fn perf_available() -> Result<(), Reason> {
    cpu_clock::probe().map_err(|e| Reason(e.to_string()))
}

/// Profiles `target` on-CPU with `settings`, calling `progress(samples, elapsed)` now and
/// then while sampling (for a live counter on a terminal).
pub fn profile(
    target: &Target,
    settings: &Settings,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Profile, SampledError> {
    let part = OnCpuPart::calibrated(target, settings)?;
    let recording = session::record(target, &settings.sampling(), progress)?;
    let drawn = Box::new(part).build(&recording)?;
    Ok(Profile {
        results: drawn.results,
        exit: recording.exit.map(|(exit, _)| exit),
        interrupted: recording.interrupted(),
        folded: drawn.folded,
        flamegraph: drawn.flamegraph,
        off_cpu: None,
    })
}

/// The on-CPU part of an off-CPU session (`profile --both`), calibrated now.
pub fn on_cpu(target: &Target, settings: &Settings) -> Result<Box<dyn OnCpu>, SampledError> {
    Ok(Box::new(OnCpuPart::calibrated(target, settings)?))
}

/// A profile's calibration and what its results need, until the session has samples.
struct OnCpuPart {
    calibration: overhead::Calibration,
    settings: Settings,
    title: String,
}

impl OnCpuPart {
    fn calibrated(target: &Target, settings: &Settings) -> Result<OnCpuPart, SampledError> {
        Ok(OnCpuPart {
            calibration: overhead::calibrate()?,
            settings: settings.clone(),
            title: format!("sysmeter profile: {}", target.describe()),
        })
    }
}

impl OnCpu for OnCpuPart {
    fn draw(&self, recording: &Recording, analysis: &Analysis) -> Result<Drawn, SampledError> {
        let flamegraph = flame::render(&analysis.stacks, &self.title)?;
        let results: Vec<ExperimentResult> = result::build(
            recording,
            analysis,
            &self.calibration,
            &self.settings,
            &flamegraph,
        );
        Ok(Drawn {
            results,
            folded: analysis.stacks.folded(),
            flamegraph,
        })
    }
}
