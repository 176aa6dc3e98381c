//! Outlier counting by the MAD-based modified z-score (Iglewicz & Hoaglin, 1993).
//!
//! Pure: no OS access, no randomness.

use super::{median_in_place, quantile_sorted, sorted_copy};

/// Modified z-score above which a sample counts as an outlier.
pub(crate) const OUTLIER_Z: f64 = 3.5;

/// Number of samples whose modified z-score `|0.6745·(x − median) / MAD|` exceeds 3.5, where
/// MAD is the median absolute deviation from the median.
///
/// When MAD is 0 (more than half of the samples equal the median, common with a coarse
/// timer) the score is undefined; then the mean absolute deviation stands in for it, scaled
/// to the same normal-consistent units: `|x − median| / (1.253314·MeanAD)` (the usual
/// fallback, e.g. IBM SPSS). So 1000 × 10.0 plus 20 × 1000.0 counts 20 outliers, and only
/// constant data gives 0 with nothing to scale by. Empty input returns 0.
pub fn mad_outliers(samples: &[f64]) -> usize {
    if samples.is_empty() {
        return 0;
    }
    let sorted = sorted_copy(samples);
    mad_outliers_sorted(&sorted, quantile_sorted(&sorted, 0.5))
}

/// [`mad_outliers`] on non-empty sorted data whose median is known.
pub(crate) fn mad_outliers_sorted(sorted: &[f64], median: f64) -> usize {
    let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
    let mean_ad = deviations.iter().sum::<f64>() / deviations.len() as f64;
    let mad = median_in_place(&mut deviations);
    // Divisor that turns |x − median| into the modified z-score.
    let scale = if mad > 0.0 {
        mad / 0.6745
    } else {
        1.253314 * mean_ad
    };
    if scale == 0.0 || !scale.is_finite() {
        return 0;
    }
    sorted
        .iter()
        .filter(|&&x| (x - median).abs() / scale > OUTLIER_Z)
        .count()
}
