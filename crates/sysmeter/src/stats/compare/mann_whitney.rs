//! The Mann-Whitney U test (Wilcoxon rank-sum): does one sample set tend to have larger
//! values than the other? Two-sided p-value, exact for small tie-free samples, otherwise the
//! normal approximation with tie and continuity corrections (the same conventions as SciPy's
//! `mannwhitneyu`, whose documented values the unit tests reproduce).
//!
//! Pure: functions of their arguments only; no dependencies beyond `statrs`' `erfc`.

/// Largest size of either sample for which the exact distribution of U is used (when there
/// are no ties). The exact null distribution costs O(n_a · n_a · n_b) integer additions, a
/// few hundred thousand at 50, and counts stay far below `i128::MAX` (C(100, 50) ≈ 1e29).
pub const EXACT_MAX: usize = 50;

/// Result of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MannWhitney {
    /// U statistic of the first sample (the number of pairs (a, b) with a > b, ties counting
    /// one half).
    pub u: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Whether `p_value` comes from the exact null distribution (else the normal
    /// approximation).
    pub exact: bool,
}

/// Two-sided Mann-Whitney U test of `a` against `b`. Both must be non-empty and finite
/// (callers validate); the p-value is clamped to [0, 1].
pub fn mann_whitney(a: &[f64], b: &[f64]) -> MannWhitney {
    let (n1, n2) = (a.len(), b.len());
    let (rank_sum_a, tie_counts) = rank_sum_of_first(a, b);
    let u1 = rank_sum_a - (n1 * (n1 + 1)) as f64 / 2.0;
    // The two-sided test looks at the larger of U1 and U2 = n1·n2 − U1.
    let u_max = u1.max((n1 * n2) as f64 - u1);
    let has_ties = tie_counts.iter().any(|&t| t > 1);
    let (p, exact) = if !has_ties && n1 <= EXACT_MAX && n2 <= EXACT_MAX {
        (2.0 * exact_upper_tail(u_max as u64, n1, n2), true)
    } else {
        (2.0 * normal_upper_tail(u_max, n1, n2, &tie_counts), false)
    };
    MannWhitney {
        u: u1,
        p_value: p.clamp(0.0, 1.0),
        exact,
    }
}

/// Sum of the mid-ranks (1-based, ties get the average rank) of `a`'s values in the pooled
/// sample, and the size of every group of tied values.
fn rank_sum_of_first(a: &[f64], b: &[f64]) -> (f64, Vec<usize>) {
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&x| (x, true))
        .chain(b.iter().map(|&x| (x, false)))
        .collect();
    pooled.sort_unstable_by(|x, y| x.0.total_cmp(&y.0));
    let mut rank_sum = 0.0;
    let mut ties = Vec::new();
    let mut start = 0;
    while start < pooled.len() {
        let mut end = start + 1;
        while end < pooled.len() && pooled[end].0 == pooled[start].0 {
            end += 1;
        }
        // Positions start..end hold equal values: each gets the mean of ranks start+1..=end.
        let mid_rank = (start + 1 + end) as f64 / 2.0;
        let from_a = pooled[start..end].iter().filter(|p| p.1).count();
        rank_sum += mid_rank * from_a as f64;
        ties.push(end - start);
        start = end;
    }
    (rank_sum, ties)
}

/// P(U ≥ u) under the null hypothesis by the normal approximation: mean n1·n2/2, variance
/// n1·n2/12 · ((n+1) − Σ(t³−t)/(n(n−1))) for tie groups of size t, continuity correction ½.
pub(crate) fn normal_upper_tail(u: f64, n1: usize, n2: usize, tie_counts: &[usize]) -> f64 {
    let (n1, n2) = (n1 as f64, n2 as f64);
    let n = n1 + n2;
    let tie_term: f64 = tie_counts
        .iter()
        .map(|&t| {
            let t = t as f64;
            t * t * t - t
        })
        .sum();
    let correction = if n > 1.0 {
        tie_term / (n * (n - 1.0))
    } else {
        0.0
    };
    let variance = n1 * n2 / 12.0 * ((n + 1.0) - correction);
    if variance <= 0.0 {
        // Every value equal: nothing distinguishes the samples.
        return 0.5;
    }
    let z = (u - n1 * n2 / 2.0 - 0.5) / variance.sqrt();
    // 1 − Φ(z) = erfc(z/√2)/2, accurate far into the tail (unlike 1 − cdf).
    0.5 * statrs::function::erf::erfc(z / std::f64::consts::SQRT_2)
}

/// P(U ≥ u) under the null hypothesis, exactly: the number of arrangements of n1 + n2 distinct
/// values giving each U is the coefficient of q^U in the Gaussian binomial [n1+n2 choose n1]_q.
pub(crate) fn exact_upper_tail(u: u64, n1: usize, n2: usize) -> f64 {
    let counts = u_distribution(n1, n2);
    let total: i128 = counts.iter().sum();
    let upper: i128 = counts.iter().skip(u as usize).sum();
    upper as f64 / total as f64
}

/// Coefficients of [n1+n2 choose n1]_q = Π_{i=1..n1} (1 − q^(n2+i)) / (1 − q^i), built one
/// factor at a time so every intermediate polynomial is itself a Gaussian binomial (with
/// non-negative coefficients no larger than C(n1+n2, n1)).
fn u_distribution(n1: usize, n2: usize) -> Vec<i128> {
    let degree = n1 * n2;
    let mut c = vec![0i128; degree + 1];
    c[0] = 1;
    for i in 1..=n1 {
        // Multiply by (1 − q^(n2+i)): from the top down so each term uses the old values.
        let k = n2 + i;
        for j in (k..=degree).rev() {
            c[j] -= c[j - k];
        }
        // Divide by (1 − q^i): the inverse of the step above, from the bottom up.
        for j in i..=degree {
            c[j] += c[j - i];
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    // SciPy's documentation example (and values statrs checks against SciPy).
    const MALE: [f64; 5] = [19.0, 22.0, 16.0, 29.0, 24.0];
    const FEMALE: [f64; 4] = [20.0, 11.0, 17.0, 12.0];

    #[test]
    fn scipy_example_exact() {
        let r = mann_whitney(&MALE, &FEMALE);
        assert_eq!(r.u, 17.0);
        assert!(r.exact);
        assert!(close(r.p_value, 0.1111111111111111), "{}", r.p_value);
        let r = mann_whitney(&FEMALE, &MALE);
        assert_eq!(r.u, 3.0);
        assert!(close(r.p_value, 0.1111111111111111), "{}", r.p_value);
    }

    #[test]
    fn scipy_example_asymptotic() {
        let (_, ties) = rank_sum_of_first(&MALE, &FEMALE);
        let p = 2.0 * normal_upper_tail(17.0, 5, 4, &ties);
        assert!(close(p, 0.11134688653314041), "{p}");
    }

    #[test]
    fn scipy_exact_with_unequal_sizes() {
        let x = [5.0, 2.0, 7.0, 8.0, 9.0, 3.0, 11.0, 12.0];
        let y = [1.0, 6.0, 10.0, 4.0];
        let r = mann_whitney(&x, &y);
        assert_eq!(r.u, 21.0);
        assert!(close(r.p_value, 0.46060606060606063), "{}", r.p_value);
    }

    #[test]
    fn ties_use_the_corrected_normal_approximation() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let r = mann_whitney(&a, &b);
        assert!(!r.exact);
        assert_eq!(r.u, 0.5);
        assert!(close(r.p_value, 0.010411098147110422), "{}", r.p_value);
        // SciPy: all values equal gives p = 1.
        assert_eq!(mann_whitney(&[1.0, 1.0], &[1.0, 1.0, 1.0]).p_value, 1.0);
    }

    #[test]
    fn larger_samples_match_scipy_asymptotic() {
        let a = [19.0, 22.0, 16.0, 29.0, 24.0, 28.0, 7.0, 10.0, 30.0];
        let b = [20.0, 11.0, 17.0, 12.0, 5.0, 31.0, 18.0, 2.0, 34.0];
        let (_, ties) = rank_sum_of_first(&a, &b);
        let p = 2.0 * normal_upper_tail(49.0, 9, 9, &ties);
        assert!(close(p, 0.47992869214595724), "{p}");
        // The exact value for the same data is close to the approximation.
        let r = mann_whitney(&a, &b);
        assert!(r.exact && (r.p_value - p).abs() < 0.02, "{}", r.p_value);
    }

    #[test]
    fn exact_distribution_is_symmetric_and_sums_to_binomial() {
        let c = u_distribution(6, 9);
        assert_eq!(c.len(), 55);
        assert_eq!(c.iter().sum::<i128>(), 5005); // C(15, 6)
        assert!(c.iter().all(|&x| x > 0));
        for j in 0..c.len() {
            assert_eq!(c[j], c[c.len() - 1 - j]);
        }
        // m = n = 3: U = 0 happens in 1 of 20 arrangements.
        assert!(close(exact_upper_tail(9, 3, 3), 1.0 / 20.0));
        assert!(close(exact_upper_tail(0, 3, 3), 1.0));
        // Largest supported size: C(100, 50).
        let big = u_distribution(EXACT_MAX, EXACT_MAX);
        let total: i128 = big.iter().sum();
        assert_eq!(total, 100_891_344_545_564_193_334_812_497_256);
    }

    #[test]
    fn separated_samples_are_significant_and_one_each_is_not() {
        let a: Vec<f64> = (0..60).map(f64::from).collect();
        let b: Vec<f64> = (100..160).map(f64::from).collect();
        let r = mann_whitney(&a, &b);
        assert!(!r.exact && r.p_value < 1e-15, "{}", r.p_value);
        assert_eq!(r.u, 0.0);
        let r = mann_whitney(&[1.0], &[2.0]);
        assert!(r.exact);
        assert_eq!(r.p_value, 1.0);
    }
}
