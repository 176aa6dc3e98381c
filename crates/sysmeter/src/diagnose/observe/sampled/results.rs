//! What a sampled diagnosis hands back, and the seam between the two of them.
//!
//! [`Profile`] is a finished profile as `commands::profile` receives it, from `profile`
//! (on-CPU), `offcpu` (off-CPU) or both. With `--both` one session samples the CPU clock and
//! records where threads block; `offcpu` runs it, and the command hands it `profile`'s
//! on-CPU part as an [`OnCpu`] (calibrated before the session, built from its CPU-clock
//! samples after it), so neither diagnosis names the other — as `observe::lookups` lets
//! `run` use `trace`'s tracer. [`single`] is the one-value metric both results store.

use super::SampledError;
use super::aggregate::{Analysis, analyse_each};
use super::session::Recording;
use super::threads;
use crate::model::{About, ExperimentResult, Metric, Summary, Unit};

/// A finished profile: the results to store and render, and how the target ended.
#[derive(Debug, Clone)]
pub struct Profile {
    /// `profile` (summary, findings, artifacts) and `profile.flat` (one metric per
    /// function), then with an off-CPU profile `offcpu` and `offcpu.stacks`.
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

/// The on-CPU results of a session's CPU-clock samples, drawn.
#[derive(Debug, Clone)]
pub struct Drawn {
    /// `profile` and `profile.flat`.
    pub results: Vec<ExperimentResult>,
    /// Folded stacks.
    pub folded: String,
    /// The flame graph SVG.
    pub flamegraph: String,
}

/// `profile`'s on-CPU part of an off-CPU session (`--both`), already calibrated.
pub trait OnCpu: Send + Sync {
    /// Builds the on-CPU results from the session's CPU-clock samples.
    /// The first result also gets the per-thread stacks (`thread stacks`), which need every
    /// sample: a live window keeps only their sum, so `draw` alone has none.
    fn build(self: Box<Self>, recording: &Recording) -> Result<Drawn, SampledError> {
        let raw = &recording.data.raw;
        let (analysis, each) = analyse_each(raw, &recording.maps_at_start);
        let mut drawn = self.draw(recording, &analysis)?;
        if let Some(main) = drawn.results.first_mut() {
            let per_thread = threads::on_cpu(raw, &analysis, &each);
            main.artifacts.push(per_thread.artifact());
        }
        Ok(drawn)
    }
    /// Builds the on-CPU results from samples already named (`analysis`; `live` names each
    /// second's samples as they come and draws any window of them): `recording` says how
    /// the session went.
    fn draw(&self, recording: &Recording, analysis: &Analysis) -> Result<Drawn, SampledError>;
}

/// A result of its own that is one table of `metrics` per stack or function (`profile.flat`,
/// `offcpu.stacks`), made from the session that took `elapsed_ns`.
pub fn table(id: &str, about: About, metrics: Vec<Metric>, elapsed_ns: u64) -> ExperimentResult {
    ExperimentResult {
        metrics,
        elapsed_ns,
        ..ExperimentResult::new(id, about)
    }
}

/// A metric holding one value (counts and totals have no distribution).
pub fn single(name: &str, unit: Unit, value: f64, note: Option<String>) -> Metric {
    Metric {
        note,
        samples: vec![value],
        ..Metric::new(
            name,
            unit,
            Summary {
                n: 1,
                min: value,
                p5: value,
                median: value,
                mean: value,
                p95: value,
                p99: value,
                max: value,
                stddev: 0.0,
                cv: 0.0,
                ci95: (value, value),
                outliers: 0,
            },
        )
    }
}
