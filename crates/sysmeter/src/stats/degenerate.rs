//! The check that keeps a degenerate sample set from being read as a result: a metric whose
//! samples are mostly zero, or whose 95% CI of the median spans more than a decade (or reaches
//! 0 for a quantity that is never negative), says that the sampling unit is wrong for it — a
//! window that can hold no event, a counter that rarely moves — not what the operation costs.
//!
//! Pure: a function of the samples and their summary. The harness stores the reason on the
//! metric (`Metric::degenerate`); renderers show the reason instead of the value.

use crate::model::Summary;
use crate::model::units::{percent, sig3};

/// Share of exactly-zero samples above which a sample set is "mostly zero".
pub const MOSTLY_ZERO_SHARE: f64 = 0.5;

/// Ratio of the CI's upper to lower end above which the CI "spans more than a decade".
pub const DECADE: f64 = 10.0;

/// Why `samples` (summarised as `s`) cannot be read as a result, or `None` when they can.
pub fn degenerate(samples: &[f64], s: &Summary) -> Option<String> {
    if samples.is_empty() {
        return None;
    }
    let zeros = samples.iter().filter(|&&x| x == 0.0).count();
    let share = zeros as f64 / samples.len() as f64;
    if share > MOSTLY_ZERO_SHARE {
        return Some(format!(
            "{zeros} of {} samples are 0 ({}): the sampling unit holds no event most of the time",
            samples.len(),
            percent(share)
        ));
    }
    // A signed quantity (a difference) may have a CI around 0: that only says "not
    // significant", and the comparison rules judge it.
    let never_negative = samples.iter().all(|&x| x >= 0.0);
    let (lo, hi) = s.ci95;
    if !never_negative || lo.is_nan() || hi.is_nan() || hi <= 0.0 {
        return None;
    }
    if lo <= 0.0 {
        return Some("the 95% CI of the median reaches 0".to_string());
    }
    (hi / lo > DECADE).then(|| {
        format!(
            "the 95% CI of the median spans {}× (more than a decade)",
            sig3(hi / lo)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summarize;

    fn check(samples: &[f64]) -> Option<String> {
        degenerate(samples, &summarize(samples, 1).unwrap())
    }

    #[test]
    fn mostly_zero_samples_are_flagged() {
        let mut xs = vec![0.0; 7];
        xs.extend([5e8, 6e8, 4e8]);
        let why = check(&xs).expect("flagged");
        assert!(why.contains("7 of 10 samples are 0"), "{why}");
    }

    #[test]
    fn a_ci_reaching_zero_or_wider_than_a_decade_is_flagged() {
        let xs = [0.0, 0.0, 0.0, 3e5, 2e8, 2.3e8, 4.4e8];
        assert!(check(&xs).expect("reaches 0").contains("reaches 0"));
        let wide = [1.0, 2.0, 3.0, 50.0, 100.0, 200.0, 300.0, 400.0];
        let why = check(&wide).expect("wide");
        assert!(why.contains("more than a decade"), "{why}");
    }

    #[test]
    fn ordinary_and_signed_samples_pass() {
        let xs: Vec<f64> = (0..50).map(|i| 40.0 + f64::from(i % 7)).collect();
        assert_eq!(check(&xs), None);
        // A difference around 0 is not degenerate, only not significant.
        let diff: Vec<f64> = (0..50).map(|i| f64::from(i % 11) - 5.0).collect();
        assert_eq!(check(&diff), None);
        // A few zeros among many values are ordinary (a counter that sometimes stays).
        let mut some = vec![0.0; 3];
        some.extend((0..20).map(|i| 10.0 + f64::from(i)));
        assert_eq!(check(&some), None);
    }
}
