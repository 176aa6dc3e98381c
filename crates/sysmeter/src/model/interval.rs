//! The run-to-run interval of a metric (`Metric::run_to_run`): where the next run's median
//! of the metric should land on this machine, as opposed to the within-run 95% CI of the
//! median (`Summary::ci95`), which only says how well this run's samples pin down this run's
//! median. It is computed when a run is rendered (`stats::run_to_run`, from the stored runs
//! of the same host, profile and version, or from the run's own rounds), never stored.
//!
//! Plain data and its sentence for people; depends on nothing but `units` and serde.

use serde::{Deserialize, Serialize};

use super::Unit;
use super::units::range;

/// What a run-to-run interval was computed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IntervalBasis {
    /// The stored runs of the same host, profile and sysmeter version up to this run.
    History,
    /// This run's own rounds (`--rounds N`), for want of a stored history.
    Rounds,
    /// Neither: the interval is the within-run CI, and covers this run only.
    ThisRun,
}

impl IntervalBasis {
    /// The name used in JSON and CSV: `history`, `rounds`, `this_run`.
    pub fn as_str(self) -> &'static str {
        match self {
            IntervalBasis::History => "history",
            IntervalBasis::Rounds => "rounds",
            IntervalBasis::ThisRun => "this_run",
        }
    }
}

/// A 95% prediction interval for the median of the next run of a metric on this machine
/// (see docs/methodology.md, "Two intervals").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunToRun {
    /// What it was computed from.
    pub basis: IntervalBasis,
    /// How many per-run values it was computed from: stored runs (this one included),
    /// rounds, or 1 for this run only.
    pub runs: usize,
    /// Low end, in the metric's unit.
    pub lo: f64,
    /// High end, in the metric's unit.
    pub hi: f64,
    /// Sample standard deviation of ln(per-run value): about the run-to-run CV; 0 for this
    /// run only.
    pub sd_log: f64,
}

impl RunToRun {
    /// The interval in words: `this machine, run to run: 98.7–104.2 ns over 8 runs`,
    /// `this run's 5 rounds: …`, or `this run only (no stored runs or rounds): …`.
    pub fn words(&self, unit: Unit) -> String {
        format!("{}: {}", self.label(), range(self.lo, self.hi, unit))
            + &match self.basis {
                IntervalBasis::History => format!(" over {} runs", self.runs),
                IntervalBasis::Rounds => format!(" over {} rounds", self.runs),
                IntervalBasis::ThisRun => String::new(),
            }
    }

    /// What the interval is, without its numbers.
    pub fn label(&self) -> &'static str {
        match self.basis {
            IntervalBasis::History => "this machine, run to run",
            IntervalBasis::Rounds => "this run's rounds, run to run",
            IntervalBasis::ThisRun => "this run only (no stored runs or rounds)",
        }
    }

    /// The table cell: `98.7–104.2 ns (8 runs)`, `… (5 rounds)`, `this run only`.
    pub fn cell(&self, unit: Unit) -> String {
        match self.basis {
            IntervalBasis::History => {
                format!("{} ({} runs)", range(self.lo, self.hi, unit), self.runs)
            }
            IntervalBasis::Rounds => {
                format!("{} ({} rounds)", range(self.lo, self.hi, unit), self.runs)
            }
            IntervalBasis::ThisRun => "this run only".to_string(),
        }
    }
}
