//! Measurement profiles: `--quick`, default and `--thorough` scale the sampling budgets.

use std::time::Duration;

/// Budgets for the sampling loop of every metric.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// `quick`, `default` or `thorough`.
    pub name: &'static str,
    /// Never fewer samples than this (unless one op takes longer than the hard cap).
    pub min_samples: usize,
    /// Never more samples than this.
    pub max_samples: usize,
    /// Stop sampling a metric once this much time was spent on it (and `min_samples` taken).
    pub budget: Duration,
    /// Aim for samples this long (raised to the calibrated minimum interval).
    pub sample_target: Duration,
    /// Run the workload this long before sampling.
    pub warmup: Duration,
    /// Stop when the 95% CI of the median is narrower than this fraction of the median.
    pub target_ci: f64,
    /// How long to count TSC ticks against CLOCK_MONOTONIC.
    pub tsc_window: Duration,
    /// Interleaved passes over the experiments when `--rounds` is not given.
    pub rounds: usize,
    /// Time a run may spend measuring again the experiments during which the machine did
    /// not hold still (only with a single round: rounds already spread the drift). An
    /// experiment is measured again once, and only when its first attempt took no longer
    /// than what is left of this budget; zero never measures again.
    pub remeasure_budget: Duration,
    /// Wall time the whole default set may take, all rounds together: what the experiments
    /// whose work grows with the machine's sizes divide among themselves
    /// ([`crate::harness::Experiment::time_share`]); 30 s by default, a third of it quick.
    pub run_budget: Duration,
}

impl Profile {
    /// Smoke-test budgets: the whole default set in at most 10 s (a third of the
    /// default's 30 s), in 2 rounds.
    pub fn quick() -> Profile {
        Profile {
            name: "quick",
            min_samples: 5,
            max_samples: 200,
            // A metric's sampling budget over both rounds (20 ms) is a sixth of the
            // default's 125 ms: with 40 ms in each of 3 rounds, the experiments bounded by
            // their metrics' budgets took as long as in the default (12 s of a 19-22 s quick
            // run, 2-vCPU guest at load 10), where their 2% shares allow 4.4 s.
            budget: Duration::from_millis(10),
            sample_target: Duration::from_micros(200),
            warmup: Duration::from_millis(1),
            target_ci: 0.05,
            tsc_window: Duration::from_millis(20),
            // Two short interleaved passes: a quick run is what CI compares, and only the
            // spread between passes tells `compare` how much a median moves from one process
            // to the next (10 pairs of identical quick runs: 52% of metric verdicts "changed"
            // with 1 round, 2.7% with 3). A third pass does not fit the 10 s.
            rounds: 2,
            remeasure_budget: Duration::ZERO,
            run_budget: Duration::from_secs(10),
        }
    }

    /// The default: the whole default set in about 30 s on 2 CPUs (docs/methodology.md).
    pub fn default_profile() -> Profile {
        Profile {
            name: "default",
            min_samples: 21,
            max_samples: 2000,
            budget: Duration::from_millis(125),
            sample_target: Duration::from_micros(1000),
            warmup: Duration::from_millis(10),
            target_ci: 0.02,
            tsc_window: Duration::from_millis(100),
            rounds: 1,
            // On a host whose neighbours keep it moving, a second attempt moved again in 40
            // of 57 cases (five default runs, 2-vCPU KVM guest with 6-20% steal): a budget
            // keeps the short experiments' second chance without doubling the run.
            remeasure_budget: Duration::from_secs(1),
            run_budget: Duration::from_secs(30),
        }
    }

    /// More samples and longer budgets for publication-quality numbers.
    pub fn thorough() -> Profile {
        Profile {
            name: "thorough",
            min_samples: 51,
            max_samples: 20000,
            budget: Duration::from_millis(2000),
            sample_target: Duration::from_millis(2),
            warmup: Duration::from_millis(50),
            target_ci: 0.01,
            tsc_window: Duration::from_millis(500),
            rounds: 3,
            remeasure_budget: Duration::from_secs(3600),
            run_budget: Duration::from_secs(600),
        }
    }

    /// Look a profile up by name.
    pub fn by_name(name: &str) -> Option<Profile> {
        match name {
            "quick" => Some(Profile::quick()),
            "default" => Some(Profile::default_profile()),
            "thorough" => Some(Profile::thorough()),
            _ => None,
        }
    }
}
