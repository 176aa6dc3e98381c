//! Many metrics tested at once. `compare` of two runs tests every metric they share — 33 for
//! `bench --quick --only cpu.call,cpu.ops,os.syscall`, over a hundred for a default bench —
//! and at α = 0.05 each unchanged metric is called changed one time in twenty by chance
//! alone: more than one false alarm per comparison of two identical runs. So the p-values of
//! one comparison are adjusted for their number with the Benjamini–Hochberg step-up
//! procedure before they are held against α: it bounds the expected share of false
//! discoveries among the metrics called changed by α (for independent or positively
//! correlated tests, as metrics of one machine are), and when several metrics really
//! changed (a whole experiment slower) it keeps most of the power that a per-metric α has,
//! where Bonferroni would not.
//!
//! Measured on the development machine (40 pairs of identical
//! `bench --quick --only cpu.call,cpu.ops,os.syscall` runs, 1320 metric comparisons, compared
//! again with the per-metric rule and with this one; power from a 10% slowdown injected into
//! every `cpu.ops` time metric of B): false alarms 37 → 5, slowdowns found 279 → 229 of 560.
//! docs/compare.md has the table and the scripts.
//!
//! The raw comparisons form one family and the normalised ones another (each metric is
//! judged on one of its two, `metric::settle`); the CIs are not adjusted (they describe each
//! metric's own uncertainty, and `--fail-above` still needs the verdict `slower`).
//!
//! Pure. Depends on the rest of `stats::compare`.

use super::metric::settle;
use super::{CompareOptions, MetricComparison, SampleComparison};

/// Benjamini–Hochberg adjusted p-values, in the order given: for the i-th smallest of m,
/// `min over j ≥ i of p₍ⱼ₎ · m / j`, capped at 1. NaN sorts as 1 (never significant).
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let clean = |x: f64| if x.is_nan() { 1.0 } else { x.clamp(0.0, 1.0) };
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&i, &j| clean(p[i]).total_cmp(&clean(p[j])));
    let mut out = vec![1.0; m];
    let mut running = 1.0f64;
    for (rank, &i) in order.iter().enumerate().rev() {
        let scaled = clean(p[i]) * m as f64 / (rank + 1) as f64;
        running = running.min(scaled);
        out[i] = running.min(1.0);
    }
    out
}

/// Adjust every metric's raw and normalised p-values for the family of `metrics`, judge
/// them again on the adjusted values, and settle the verdicts. A family of one is left as
/// judged alone.
pub fn adjust(metrics: &mut [MetricComparison], opts: &CompareOptions, fail_above: Option<f64>) {
    if metrics.iter().filter(|m| m.comparison.is_some()).count() < 2 {
        return;
    }
    adjust_family(metrics, |m| m.comparison.as_mut(), opts);
    adjust_family(metrics, |m| m.normalised.as_mut(), opts);
    for m in metrics.iter_mut() {
        settle(m, fail_above);
    }
}

/// One family: the comparison `pick` chooses from each metric that has one.
fn adjust_family(
    metrics: &mut [MetricComparison],
    pick: fn(&mut MetricComparison) -> Option<&mut SampleComparison>,
    opts: &CompareOptions,
) {
    let p: Vec<f64> = (metrics.iter_mut())
        .filter_map(|m| pick(m).map(|c| c.p_value()))
        .collect();
    let mut adjusted = benjamini_hochberg(&p).into_iter();
    for m in metrics.iter_mut() {
        let direction = m.direction;
        // Only metrics that have the comparison take an adjusted value, in order.
        if let Some(c) = pick(m) {
            let q = adjusted.next().unwrap_or(1.0);
            c.judge_adjusted(q, direction, opts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benjamini_hochberg_matches_the_textbook_example() {
        // m = 5: p·m/rank = 0.005, 0.025, 0.0333, 0.05, 0.5; then the running minimum from
        // the largest down (0.04·5/4 = 0.05 < 0.5·5/5 stays 0.05 for rank 4).
        let q = benjamini_hochberg(&[0.04, 0.001, 0.5, 0.01, 0.02]);
        let want = [0.05, 0.005, 0.5, 0.025, 0.0333];
        for (got, want) in q.iter().zip(want) {
            assert!((got - want).abs() < 1e-3, "{q:?}");
        }
    }

    #[test]
    fn adjusted_values_never_fall_below_the_raw_ones_and_keep_their_order() {
        let p = [0.3, 0.0, 0.049, 0.049, 1.0, f64::NAN, 0.002];
        let q = benjamini_hochberg(&p);
        for (i, (&pi, &qi)) in p.iter().zip(&q).enumerate() {
            assert!(
                qi <= 1.0 && (pi.is_nan() || qi >= pi),
                "{i}: {p:?} -> {q:?}"
            );
            for (j, &pj) in p.iter().enumerate() {
                if pi < pj {
                    assert!(qi <= q[j], "{i} {j}: {q:?}");
                }
            }
        }
        assert_eq!(q[5], 1.0);
        assert!(benjamini_hochberg(&[]).is_empty());
        assert_eq!(benjamini_hochberg(&[0.03]), vec![0.03]);
    }
}
