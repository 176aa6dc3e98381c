//! Which ends of a change's 95% CI can be read as bounds. A bootstrap of a few noisy samples
//! can put an end of the ratio's interval anywhere (`[−100%, +6 701 237%]`): such an end
//! says only that the runs do not bound the change on that side, so pages show it as
//! unbounded — printed as the word, drawn as an open arrow and kept out of a chart's axis
//! range, where it would flatten every other change to zero.
//!
//! The rule: an end is unbounded when it lies more than [`UNBOUNDED_FACTOR`] times from the
//! ratio B/A, below ratio / 10 or above ratio × 10. The stored comparison (and its JSON)
//! keeps the numbers as computed; this is how they are shown.
//!
//! Pure; depends on nothing but `stats::compare`.

use super::SampleComparison;

/// How far from the ratio an end of its CI may lie and still be shown as a bound (10: an end
/// below a tenth or above ten times the ratio is unbounded).
pub const UNBOUNDED_FACTOR: f64 = 10.0;

/// The 95% CI of a change as shown: each end a change (fraction, 0.05 = +5%), or `None`
/// where it is unbounded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShownCi {
    /// The lower end, `None` when unbounded.
    pub lo: Option<f64>,
    /// The upper end, `None` when unbounded.
    pub hi: Option<f64>,
}

impl ShownCi {
    /// The CI of the change for `ratio` and its interval `(lo, hi)` of the ratio.
    pub fn of_ratio(ratio: f64, (lo, hi): (f64, f64)) -> ShownCi {
        let end = |v: f64, bounded: bool| (bounded && v.is_finite()).then_some(v - 1.0);
        ShownCi {
            lo: end(lo, lo * UNBOUNDED_FACTOR >= ratio),
            hi: end(hi, hi <= ratio * UNBOUNDED_FACTOR),
        }
    }

    /// Whether an end is unbounded.
    pub fn is_open(&self) -> bool {
        self.lo.is_none() || self.hi.is_none()
    }
}

impl SampleComparison {
    /// The CI of the change as shown ([`ShownCi`]); `None` without a ratio or its CI.
    pub fn shown_ci(&self) -> Option<ShownCi> {
        Some(ShownCi::of_ratio(self.ratio?, self.ratio_ci95?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_far_from_the_ratio_are_unbounded() {
        // −54% [−60%, −40%]: both ends bound the change.
        let ci = ShownCi::of_ratio(0.46, (0.40, 0.60));
        assert_eq!(ci.lo.map(|v| (v * 100.0).round()), Some(-60.0));
        assert_eq!(ci.hi.map(|v| (v * 100.0).round()), Some(-40.0));
        assert!(!ci.is_open());
        // +20% [−100%, +6 701 237%]: neither end says anything.
        let ci = ShownCi::of_ratio(1.2, (0.0, 67013.37));
        assert_eq!((ci.lo, ci.hi), (None, None));
        // Only the upper end is too far: the lower still bounds the change.
        let ci = ShownCi::of_ratio(2.0, (1.5, 25.0));
        assert!(ci.lo.is_some() && ci.hi.is_none() && ci.is_open());
    }
}
