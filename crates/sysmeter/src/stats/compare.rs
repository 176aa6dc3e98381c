//! Comparing two sample sets of the same metric (a baseline A and a candidate B): the
//! relative change of the medians with a bootstrap 95% CI of their ratio, a two-sided
//! Mann-Whitney U test, and a verdict (faster / slower / no change) inside a noise threshold.
//! [`runs::compare_runs`] applies it to every metric two runs share.
//!
//! The rules, precisely (they are also the `sysmeter compare --help` text):
//! - ratio = median(B) / median(A); change = ratio − 1. Undefined when median(A) ≤ 0.
//! - CI: percentile bootstrap of the ratio, resampling both raw sample sets
//!   ([`CompareOptions::resamples`] times, seeded, so the output is reproducible).
//! - significant: Mann-Whitney p < α (0.05) **and** the CI of the ratio excludes 1.
//! - many metrics at once (`family`): a comparison of runs tests every metric they share,
//!   so the p-values are adjusted for their number (Benjamini–Hochberg) before they are held
//!   against α; one metric alone is judged on its own p.
//! - verdict: "no change" unless significant and |change| > threshold (default 2%); then
//!   slower/faster by the unit's direction (time: larger is slower; rate: larger is faster;
//!   counts and sizes have no direction and are "higher"/"lower").
//! - regression beyond PCT (for `--fail-above`): verdict slower and the *whole* CI beyond
//!   PCT (time: CI low > 1 + PCT; rate: CI high < 1 − PCT).
//! - the machine moved ([`machine`]): when the machine-state probes of A and B differ by more
//!   than [`MACHINE_THRESHOLD`] and the metric scales with the core clock, the verdict and
//!   `--fail-above` judge the *normalised* comparison (B's values divided by the probe
//!   ratio); a raw change the machine explains is [`Verdict::MachineSlower`] or
//!   [`Verdict::MachineFaster`].
//! - sets of runs ([`sets`]): with more than one run (or `--rounds` round) on a side, the test
//!   is a Welch t-test on the log of the per-run medians, so the between-run noise decides.
//!
//! Pure: no OS access; randomness only from the caller's seed. Depends on `model` (units,
//! run records) and the rest of `stats`.

mod family;
pub mod history;
pub mod machine;
mod mann_whitney;
mod metric;
pub mod runs;
pub mod sets;

#[cfg(test)]
mod machine_tests;
#[cfg(test)]
mod sets_tests;
#[cfg(test)]
mod tests;

pub use machine::{MachineComparison, SideMachine};
pub use mann_whitney::{EXACT_MAX, MannWhitney, mann_whitney};
pub use runs::{
    MetricComparison, RunComparison, RunSide, Sides, Unmatched, compare_runs, compare_sets,
};
pub use sets::{RunNoise, RunsTest, compare_run_medians};

use serde::{Deserialize, Serialize};

use super::ci::resampled_median;
use super::{StatsError, quantile_sorted, sorted_copy, validate};
use crate::model::Unit;

/// Default noise threshold: changes of the median up to 2% are "no change".
pub const DEFAULT_THRESHOLD: f64 = 0.02;
/// Significance level of the Mann-Whitney test.
pub const ALPHA: f64 = 0.05;
/// Bootstrap resamples for the CI of the ratio of medians.
pub const RATIO_RESAMPLES: usize = 2000;
/// How far the machine-state probes of A and B may differ (|speed B/A − 1|) before the
/// verdicts of clock-bound metrics are judged after normalising: 5%, the same limit
/// `bench` uses to flag an experiment whose probe moved (`harness::machine::judge`,
/// `DEFAULT_LIMITS.speed_change`), 40× the probe's step on a quiet machine.
pub const MACHINE_THRESHOLD: f64 = 0.05;
/// How far the throughput probes of A and B may differ (|throughput B/A − 1|) before a
/// clock-bound metric's change in the same direction is put down to the machine: 10%, the
/// limit `bench` uses inside an experiment (`DEFAULT_LIMITS.throughput_change`). The
/// throughput probe (independent adds) halves when the other hardware thread of the core is
/// busy while the clock probe does not move, and a null system call is then 30–40% slower
/// (measured on the development machine: 227 vs 164 ns at 8.7 vs 14.3 adds/ns). The effect
/// is not proportional to the throughput, so it cannot be normalised away; such a change is
/// reported as `machine_busier`/`machine_quieter` and never fails `--fail-above`.
pub const THROUGHPUT_THRESHOLD: f64 = 0.10;
/// How far the shared-cache probes may spread — within one experiment (`bench` then calls
/// it unstable) or between A and B (`compare`) — as highest/lowest: 1.5×. Readings of one
/// quiet minute agree within ≈ 10–20%; a working set that falls out of the shared
/// last-level cache moves them 3–10× (`harness::machine::cache`). A change of a metric of
/// such an experiment in the direction of the probes is reported as
/// `machine_busier`/`machine_quieter`, not judged.
pub const CACHE_SPREAD: f64 = 1.5;

fn default_machine_threshold() -> f64 {
    MACHINE_THRESHOLD
}

/// Settings of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CompareOptions {
    /// Noise threshold as a fraction (0.02 = 2%).
    pub threshold: f64,
    /// Significance level of the Mann-Whitney test (0.05).
    pub alpha: f64,
    /// Bootstrap resamples for the CI of the ratio.
    pub resamples: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// Largest |machine speed B/A − 1| judged on the raw change ([`MACHINE_THRESHOLD`]).
    #[serde(default = "default_machine_threshold")]
    pub machine_threshold: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            threshold: DEFAULT_THRESHOLD,
            alpha: ALPHA,
            resamples: RATIO_RESAMPLES,
            seed: 1,
            machine_threshold: MACHINE_THRESHOLD,
        }
    }
}

/// Which way is better for a metric, from its unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Times: a larger value is slower.
    LowerIsBetter,
    /// Rates: a larger value is faster.
    HigherIsBetter,
    /// Counts and sizes: neither is better.
    Neutral,
}

impl Direction {
    /// The direction of a metric measured in `unit`.
    pub fn of(unit: Unit) -> Direction {
        match unit {
            Unit::Ns => Direction::LowerIsBetter,
            Unit::BytesPerSec => Direction::HigherIsBetter,
            Unit::Bytes | Unit::Count => Direction::Neutral,
        }
    }
}

/// What the comparison concludes about B relative to A.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Significantly better beyond the threshold (less time, or more throughput).
    Faster,
    /// Significantly worse beyond the threshold.
    Slower,
    /// Within the threshold, or not significant.
    NoChange,
    /// A metric without direction grew significantly beyond the threshold.
    Higher,
    /// A metric without direction shrank significantly beyond the threshold.
    Lower,
    /// Slower, but the machine ran slower too: no change after normalising for its speed.
    MachineSlower,
    /// Faster, but the machine ran faster too: no change after normalising for its speed.
    MachineFaster,
    /// Slower, with B's core shared more (its throughput probe lower by more than
    /// [`THROUGHPUT_THRESHOLD`]: a busy SMT sibling) or B's shared cache held more by others
    /// (its shared-cache probe slower by more than [`CACHE_SPREAD`]), which explains a change
    /// of this direction: not judged.
    MachineBusier,
    /// Faster, with B's core or shared cache shared less: not judged.
    MachineQuieter,
}

impl Verdict {
    /// The word shown to people (`no change`, `slower`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::NoChange => "no change",
            Verdict::Higher => "higher",
            Verdict::Lower => "lower",
            Verdict::MachineSlower => "machine slower; no change after normalising",
            Verdict::MachineFaster => "machine faster; no change after normalising",
            Verdict::MachineBusier => "machine busier (core or cache shared more in B); not judged",
            Verdict::MachineQuieter => {
                "machine quieter (core or cache shared more in A); not judged"
            }
        }
    }
}

/// The comparison of two sample sets of one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleComparison {
    /// Number of samples of A.
    pub n_a: usize,
    /// Number of samples of B.
    pub n_b: usize,
    /// Median of A.
    pub median_a: f64,
    /// Median of B.
    pub median_b: f64,
    /// median(B) / median(A); `None` when median(A) ≤ 0 (no meaningful relative change).
    pub ratio: Option<f64>,
    /// Bootstrap 95% CI of the ratio; `None` when the ratio is undefined, or when a
    /// resampled median of A is ≤ 0.
    pub ratio_ci95: Option<(f64, f64)>,
    /// The Mann-Whitney test of B against A.
    pub test: MannWhitney,
    /// The test that decides `significant` when the sides are sets of runs (or rounds): a
    /// Welch t-test on the log of the per-run medians. Absent for a single pair of runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_test: Option<RunsTest>,
    /// The p-value adjusted for every metric of the comparison tested at once
    /// (Benjamini–Hochberg, `family`); absent when this comparison was judged alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p_adjusted: Option<f64>,
    /// p (adjusted, when present) < α and the CI of the ratio excludes 1.
    pub significant: bool,
    /// The verdict.
    pub verdict: Verdict,
}

impl SampleComparison {
    /// Relative change of the median, `ratio − 1` (0.1 = 10% larger in B).
    pub fn change(&self) -> Option<f64> {
        self.ratio.map(|r| r - 1.0)
    }

    /// Whether this is a regression beyond `fraction` (0.05 = 5%) that `--fail-above` fails
    /// on: the verdict is `slower` and the whole CI of the ratio lies beyond it.
    pub fn regressed_beyond(&self, direction: Direction, fraction: f64) -> bool {
        let Some((lo, hi)) = self.ratio_ci95 else {
            return false;
        };
        self.verdict == Verdict::Slower
            && match direction {
                Direction::LowerIsBetter => lo > 1.0 + fraction,
                Direction::HigherIsBetter => hi < 1.0 - fraction,
                Direction::Neutral => false,
            }
    }
}

/// Compares the raw samples `b` (candidate) against `a` (baseline) of a metric whose better
/// direction is `direction`, with the rules of the module documentation.
pub fn compare_samples(
    a: &[f64],
    b: &[f64],
    direction: Direction,
    opts: &CompareOptions,
) -> Result<SampleComparison, StatsError> {
    validate(a)?;
    validate(b)?;
    let (sorted_a, sorted_b) = (sorted_copy(a), sorted_copy(b));
    let median_a = quantile_sorted(&sorted_a, 0.5);
    let median_b = quantile_sorted(&sorted_b, 0.5);
    let ratio_ci95 = match median_a > 0.0 {
        true => ratio_ci(&sorted_a, &sorted_b, opts.resamples, opts.seed),
        false => None,
    };
    let test = mann_whitney(&sorted_b, &sorted_a);
    Ok(judged(
        (a, b),
        (median_a, median_b),
        (ratio_ci95, test, None),
        direction,
        opts,
    ))
}

/// The comparison of `a` and `b` from their medians, the ratio's 95% CI and the tests, shared
/// by [`compare_samples`] and the run-set comparison: significant when the deciding test (the
/// run-level one where there is one, else the samples' rank test) has p below `alpha` and the
/// CI excludes 1; no ratio (a zero baseline) means no CI.
pub(crate) fn judged(
    (a, b): (&[f64], &[f64]),
    (median_a, median_b): (f64, f64),
    (ratio_ci95, test, runs_test): (Option<(f64, f64)>, MannWhitney, Option<RunsTest>),
    direction: Direction,
    opts: &CompareOptions,
) -> SampleComparison {
    let ratio = (median_a > 0.0).then(|| median_b / median_a);
    let ratio_ci95 = ratio.and(ratio_ci95);
    let p = runs_test.as_ref().map_or(test.p_value, |t| t.p_value);
    let excludes_one = ratio_ci95.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0);
    let significant = p < opts.alpha && excludes_one;
    SampleComparison {
        n_a: a.len(),
        n_b: b.len(),
        median_a,
        median_b,
        ratio,
        ratio_ci95,
        test,
        runs_test,
        p_adjusted: None,
        significant,
        verdict: verdict(ratio, significant, direction, opts.threshold),
    }
}

impl SampleComparison {
    /// The test's own p-value: the between-run test's for sets, else Mann-Whitney's.
    pub fn p_value(&self) -> f64 {
        self.runs_test
            .as_ref()
            .map_or(self.test.p_value, |t| t.p_value)
    }

    /// Judge again with the p-value adjusted for the family of metrics tested at once:
    /// `significant` and `verdict` follow the adjusted p, the CI and the ratio are unchanged.
    pub(crate) fn judge_adjusted(
        &mut self,
        p_adjusted: f64,
        direction: Direction,
        opts: &CompareOptions,
    ) {
        let excludes_one = self.ratio_ci95.is_some_and(|(lo, hi)| lo > 1.0 || hi < 1.0);
        self.p_adjusted = Some(p_adjusted);
        self.significant = p_adjusted < opts.alpha && excludes_one;
        self.verdict = verdict(self.ratio, self.significant, direction, opts.threshold);
    }
}

/// The verdict for a ratio of medians (see the module documentation).
pub(crate) fn verdict(
    ratio: Option<f64>,
    significant: bool,
    direction: Direction,
    threshold: f64,
) -> Verdict {
    let Some(change) = ratio.map(|r| r - 1.0) else {
        return Verdict::NoChange;
    };
    if !significant || change.abs() <= threshold {
        return Verdict::NoChange;
    }
    match (direction, change > 0.0) {
        (Direction::LowerIsBetter, true) | (Direction::HigherIsBetter, false) => Verdict::Slower,
        (Direction::LowerIsBetter, false) | (Direction::HigherIsBetter, true) => Verdict::Faster,
        (Direction::Neutral, true) => Verdict::Higher,
        (Direction::Neutral, false) => Verdict::Lower,
    }
}

/// Percentile bootstrap 95% CI of median(B)/median(A) from sorted, non-empty, finite data:
/// each resample draws a median of a resample of A and one of B (exactly, in O(1) each, see
/// `resampled_median`). `None` when a resampled median of A is ≤ 0, where the ratio has no
/// meaning. For `resamples == 0` the interval is the point ratio.
pub fn ratio_ci(
    sorted_a: &[f64],
    sorted_b: &[f64],
    resamples: usize,
    seed: u64,
) -> Option<(f64, f64)> {
    if resamples == 0 {
        let r = quantile_sorted(sorted_b, 0.5) / quantile_sorted(sorted_a, 0.5);
        return Some((r, r));
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let ma = resampled_median(sorted_a, &mut rng);
        let mb = resampled_median(sorted_b, &mut rng);
        if ma <= 0.0 {
            return None;
        }
        ratios.push(mb / ma);
    }
    ratios.sort_unstable_by(f64::total_cmp);
    Some((
        quantile_sorted(&ratios, 0.025),
        quantile_sorted(&ratios, 0.975),
    ))
}
