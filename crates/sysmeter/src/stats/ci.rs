//! Confidence intervals of the median: the bootstrap percentile interval reported in every
//! [`Summary`](crate::model::Summary), and the cheap distribution-free order-statistic
//! interval the harness uses as its stopping rule.
//!
//! Pure: no OS access; randomness only from a seeded `fastrand::Rng`.

use super::sampling::{beta, uniform_open};
use super::{StatsError, quantile_sorted, sorted_copy, validate};

/// Bootstrap 95% CI of the median by the percentile method: `resamples` resamples with
/// replacement, the 2.5% and 97.5% quantiles of their medians. Deterministic for a given
/// `seed`. For n = 1 (or `resamples == 0`) the interval is `(median, median)`.
///
/// Cost is one sort plus O(1) per resample, independent of n: after sorting, the median of a
/// resample is the value at the median *rank* of n uniform random indices, and that rank's
/// distribution is known exactly (see `resampled_median`), so it is drawn directly instead
/// of materialising n random indices and selecting from them. The result has exactly the
/// distribution of the classic resample-then-select bootstrap (a unit test checks that).
pub fn bootstrap_median_ci(
    samples: &[f64],
    resamples: usize,
    seed: u64,
) -> Result<(f64, f64), StatsError> {
    validate(samples)?;
    Ok(bootstrap_sorted(&sorted_copy(samples), resamples, seed))
}

/// [`bootstrap_median_ci`] on non-empty, finite, sorted data.
pub(crate) fn bootstrap_sorted(sorted: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    if sorted.len() == 1 || resamples == 0 {
        let m = quantile_sorted(sorted, 0.5);
        return (m, m);
    }
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut medians: Vec<f64> = (0..resamples)
        .map(|_| resampled_median(sorted, &mut rng))
        .collect();
    medians.sort_unstable_by(f64::total_cmp);
    (
        quantile_sorted(&medians, 0.025),
        quantile_sorted(&medians, 0.975),
    )
}

/// Median of one bootstrap resample of sorted data, drawn exactly in O(1).
///
/// A resample picks indices `⌊n·U_i⌋` for n independent uniforms `U_i`. Because the data are
/// sorted and `⌊n·u⌋` is monotone, the resample's r-th smallest value is
/// `sorted[⌊n·U_(r)⌋]`, where `U_(r)`, the r-th order statistic of n uniforms, is
/// Beta(r, n−r+1). For even n the next order statistic is `U_(r)` plus `(1−U_(r))` times the
/// minimum of the n−r uniforms above it, whose inverse CDF is `1 − V^(1/(n−r))`.
pub(crate) fn resampled_median(sorted: &[f64], rng: &mut fastrand::Rng) -> f64 {
    let n = sorted.len();
    let at = |u: f64| sorted[((u * n as f64) as usize).min(n - 1)];
    if n % 2 == 1 {
        let r = n / 2 + 1;
        return at(beta(rng, r as f64, (n - r + 1) as f64));
    }
    let r = n / 2;
    let u_low = beta(rng, r as f64, (n - r + 1) as f64);
    let gap = 1.0 - uniform_open(rng).powf(1.0 / (n - r) as f64);
    let u_high = u_low + (1.0 - u_low) * gap;
    let (low, high) = (at(u_low), at(u_high));
    low + (high - low) / 2.0
}

/// Distribution-free 95% CI of the median from order statistics: 1-based ranks
/// `⌊n/2 − 0.98·√n⌋` and `⌈n/2 + 1 + 0.98·√n⌉` (that is n/2 ∓ 1.96·√n/2), clamped to
/// 1..=n. Costs one sort and no resampling, which is why the harness uses it to decide when
/// to stop sampling. For n = 1 it is `(x, x)`; for small n it is wide (the extremes).
pub fn median_ci_distribution_free(samples: &[f64]) -> Result<(f64, f64), StatsError> {
    validate(samples)?;
    let sorted = sorted_copy(samples);
    let n = sorted.len() as f64;
    let half = 0.98 * n.sqrt();
    let rank = |r: f64| r.clamp(1.0, n) as usize - 1;
    let lo = rank((n / 2.0 - half).floor());
    let hi = rank((n / 2.0 + 1.0 + half).ceil());
    Ok((sorted[lo], sorted[hi]))
}
