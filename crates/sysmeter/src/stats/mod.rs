//! Statistics of raw samples: the summary every metric carries (quantiles, mean, spread), the
//! 95% confidence interval of the median, MAD-based outlier counts and small helpers (ratios,
//! relative CI width) used by the harness's stopping rule and by findings.
//!
//! Pure: functions of their arguments only, no OS access, no clock, no global RNG (every
//! random choice comes from a caller-supplied seed so results are reproducible). Depends on
//! nothing but `model` (for [`Summary`]), `fastrand` and `thiserror`.

mod ci;
pub mod compare;
mod degenerate;
pub mod diff;
pub mod fit;
pub mod fleet;
pub mod hierarchy;
pub mod normalise;
mod outliers;
pub mod run_to_run;
mod sampling;

#[cfg(test)]
mod tests;

pub use ci::{bootstrap_median_ci, median_ci_distribution_free};
pub use degenerate::degenerate;
pub use outliers::mad_outliers;

use crate::model::Summary;

/// Number of bootstrap resamples [`summarize`] uses for the CI of the median.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;

/// Why a sample set cannot be summarised.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// No samples at all.
    #[error("cannot compute statistics of an empty sample set (no samples were taken)")]
    Empty,
    /// A sample is NaN or infinite.
    #[error(
        "sample {index} is not a finite number (NaN or infinity); the measurement produced \
         an invalid value"
    )]
    NonFinite {
        /// Position of the first offending sample.
        index: usize,
    },
}

/// Checks that `samples` is non-empty and all finite.
pub(crate) fn validate(samples: &[f64]) -> Result<(), StatsError> {
    if samples.is_empty() {
        return Err(StatsError::Empty);
    }
    match samples.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(StatsError::NonFinite { index }),
        None => Ok(()),
    }
}

/// Returns a sorted copy of `samples` (total order; callers validate finiteness first).
pub(crate) fn sorted_copy(samples: &[f64]) -> Vec<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    sorted
}

/// Full descriptive statistics of `samples`: n, min, p5, median, mean, p95, p99, max, sample
/// stddev (n−1; 0 for n = 1), CV, bootstrap 95% CI of the median ([`BOOTSTRAP_RESAMPLES`]
/// resamples, deterministic for a given `seed`) and the MAD outlier count.
///
/// The CV is `stddev / |mean|` (0 when the mean is 0): the absolute value keeps it a measure
/// of spread when overhead subtraction leaves a slightly negative mean.
pub fn summarize(samples: &[f64], seed: u64) -> Result<Summary, StatsError> {
    validate(samples)?;
    let sorted = sorted_copy(samples);
    let (mean, stddev) = mean_stddev(&sorted);
    let cv = if mean == 0.0 {
        0.0
    } else {
        stddev / mean.abs()
    };
    let ci95 = ci::bootstrap_sorted(&sorted, BOOTSTRAP_RESAMPLES, seed);
    let median = quantile_sorted(&sorted, 0.5);
    Ok(Summary {
        n: sorted.len(),
        min: sorted[0],
        p5: quantile_sorted(&sorted, 0.05),
        median,
        mean,
        p95: quantile_sorted(&sorted, 0.95),
        p99: quantile_sorted(&sorted, 0.99),
        max: sorted[sorted.len() - 1],
        stddev,
        cv,
        ci95,
        outliers: outliers::mad_outliers_sorted(&sorted, median),
    })
}

/// Mean and sample standard deviation by Welford's update, which is numerically stable and
/// returns a constant input's value exactly (a plain sum / n need not).
fn mean_stddev(samples: &[f64]) -> (f64, f64) {
    let mut mean = 0.0;
    let mut m2 = 0.0;
    for (i, &x) in samples.iter().enumerate() {
        let delta = x - mean;
        mean += delta / (i + 1) as f64;
        m2 += delta * (x - mean);
    }
    let n = samples.len();
    let stddev = if n > 1 {
        (m2 / (n - 1) as f64).max(0.0).sqrt()
    } else {
        0.0
    };
    (mean, stddev)
}

/// Quantile `q` (clamped to 0..=1) of already **sorted** data by linear interpolation between
/// order statistics (R type 7, numpy's default): `h = (n−1)·q`, interpolate between elements
/// `⌊h⌋` and `⌊h⌋+1`. Returns NaN for empty input.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let h = (n - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let frac = h - lo as f64;
    match sorted.get(lo + 1) {
        // Skip the arithmetic when frac is 0 so exact order statistics stay exact.
        Some(&next) if frac > 0.0 => sorted[lo] + frac * (next - sorted[lo]),
        _ => sorted[lo.min(n - 1)],
    }
}

/// Median of unsorted `samples` (average of the two middle values for even n).
pub fn median(samples: &[f64]) -> Result<f64, StatsError> {
    validate(samples)?;
    let mut work = samples.to_vec();
    Ok(median_in_place(&mut work))
}

/// Median of a non-empty buffer, reordering it: O(n) selection instead of a full sort.
pub(crate) fn median_in_place(work: &mut [f64]) -> f64 {
    let n = work.len();
    let k = n / 2;
    let (left, upper, _) = work.select_nth_unstable_by(k, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        return upper;
    }
    // For even n the lower middle value is the largest element left of position k.
    let lower = left.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    lower + (upper - lower) / 2.0
}

/// Sample coefficient of variation (n − 1 in the variance) of `values`: their spread
/// relative to the size of their mean. NaN for fewer than two values or a zero mean.
pub fn cv(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 || mean == 0.0 {
        return f64::NAN;
    }
    let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    var.sqrt() / mean.abs()
}

/// Relative width of a confidence interval: `(hi − lo) / |median|`; 0 when `hi == lo`,
/// infinity when the median is 0 and the interval is not empty.
pub fn relative_ci_width(lo: f64, hi: f64, median: f64) -> f64 {
    if hi == lo {
        0.0
    } else if median == 0.0 {
        f64::INFINITY
    } else {
        (hi - lo) / median.abs()
    }
}

/// `a / b` for findings such as "process switch = 9× thread switch"; `None` when `b ≤ 0` or
/// either value is not finite, so a ratio is never shown for meaningless inputs.
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    if !a.is_finite() || !b.is_finite() || b <= 0.0 {
        return None;
    }
    Some(a / b)
}
