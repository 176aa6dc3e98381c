//! The measurement harness: the Experiment contract, per-run calibration, the adaptive
//! sampling loop and the runner that drives a list of experiments.
//!
//! The harness owns timing; an experiment owns only the work (the lmbench idea, with a
//! documented timing model): `ctx.measure(spec, |iters| ...)` runs a workload of exactly
//! `iters` iterations inside one timed interval. What that interval contains besides the work
//! — one timer read pair, and `iters` turns of the harness loop when the workload uses it — is
//! calibrated once per run and subtracted. The harness never prints: progress goes through
//! the [`RunObserver`] callback. Depends on `model`, `stats`, `host` and `sysmeter-sys`.

mod calibrate;
mod ctx;
mod loop_ref;
pub mod machine;
#[cfg(test)]
pub(crate) mod pooled;
mod profile;
mod rounds;
mod runner;
pub mod watched;

pub use calibrate::{calibrate, reference_loop};
pub use ctx::{Ctx, Measured, Spec};
pub use profile::Profile;
pub use runner::{Params, RunObserver, RunOptions, choose_cpu, run_experiments};

use crate::model::about::page::{BESIDE, Page};
use crate::model::{About, Estimate, Finding, HostInfo, Metric};

/// An experiment: one family of related measurements (`os.syscall`, `cpu.timer`, ...).
pub trait Experiment: Sync {
    /// The experiment's page (`experiments/<group>/<name>.md`, [`Page`]): the one source of
    /// its id and of what it says of itself.
    fn page(&self) -> &'static str;
    /// `group.name`: file, CLI, database key and report label; the page's heading.
    fn id(&self) -> &'static str {
        Page::id_of(self.page())
    }
    /// Title, what it measures, methodology (the timing model), references: the page's
    /// sections, unless an experiment fills holes in them.
    fn about(&self) -> About {
        About::from_page(self.page())
    }
    /// Model-based predictions from the machine description; none unless an experiment has a
    /// model to predict from.
    fn estimate(&self, _host: &HostInfo, _tsc_ghz: Option<f64>) -> Vec<Estimate> {
        Vec::new()
    }
    /// Do the measurements through `ctx`.
    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError>;
    /// The findings drawn from the metrics alone, each quoting a metric's figure through
    /// [`Measured::median`] (`out` holds the metrics and nothing else). The harness adds
    /// them after [`Experiment::run`], and with `--rounds N` draws them again from the
    /// pooled metrics, so a finding says what the tables and the glance say, never one
    /// round's figure. An experiment puts here every finding that quotes a metric.
    fn metric_findings(&self, _host: &HostInfo, _out: &mut Measured) {}
    /// Whether the experiment runs work of its own beside the measuring thread — a pipe
    /// peer, a forked child, helper threads on other CPUs, kernel I/O (writeback, readahead,
    /// the network stack): the drift judgment then looks only at the core clock and steal
    /// time, because other tasks on the measuring CPU, run-queue wait and a changed ALU
    /// throughput (a busy SMT sibling) are the experiment itself.
    ///
    /// Declared by the page: a section `## Beside the measuring thread` says what runs there.
    fn shares_measuring_cpu(&self) -> bool {
        Page::parse(self.page()).is_ok_and(|p| p.has(BESIDE))
    }
    /// Whether what the experiment measures depends on the caches it shares with the
    /// *other* CPUs (the last-level cache): work on them evicts its lines, so the drift
    /// judgment also looks at how busy the other CPUs were (`mem.latency`, whose L3 end
    /// moved from 4.5–5 MiB to 2.75–3 MiB while builds ran on the other vCPU).
    fn shares_caches_with_other_cpus(&self) -> bool {
        false
    }
    /// Share of the profile's run budget ([`Profile::run_budget`], per round) this experiment
    /// plans its work for, read through [`Ctx::time_budget`]. An experiment whose work grows
    /// with what a machine reports (cache and memory sizes) sizes it to this budget, so a
    /// host that reports a 480 MiB L3 runs as long as one that reports 32 MiB. The shares of
    /// the whole registry add up to at most 1 (**checked**, `experiments::tests`); the rest
    /// of the run's budget is the experiments bounded by their metrics' sampling budgets.
    fn time_share(&self) -> f64 {
        DEFAULT_TIME_SHARE
    }
}

/// The findings `exp` draws from `metrics` ([`Experiment::metric_findings`]); a metric the
/// pages call not a result (`Metric::degenerate`) is not quoted.
pub(crate) fn metric_findings(
    exp: &dyn Experiment,
    host: &HostInfo,
    metrics: &[Metric],
) -> Vec<Finding> {
    let mut out = Measured {
        metrics: metrics
            .iter()
            .filter(|m| m.degenerate.is_none())
            .cloned()
            .collect(),
        ..Measured::default()
    };
    exp.metric_findings(host, &mut out);
    out.findings
}

/// [`Experiment::time_share`] of an experiment that does not declare one: its metrics'
/// sampling budgets bound it.
pub const DEFAULT_TIME_SHARE: f64 = 0.02;

/// Why an experiment produced no (complete) result.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// Cannot run here; a normal outcome, reported with the reason and the fix.
    #[error("skipped: {reason} ({hint})")]
    Skipped {
        /// What is missing.
        reason: String,
        /// How to make it run.
        hint: String,
    },
    /// Ctrl-C arrived; the partial experiment is discarded.
    #[error("interrupted")]
    Interrupted,
    /// The measurement failed.
    #[error("{0}")]
    Failed(String),
}

impl ExperimentError {
    /// A failure with what was attempted and the OS error.
    pub fn io(what: &str, err: std::io::Error) -> ExperimentError {
        ExperimentError::Failed(format!("{what}: {err}"))
    }
}
