//! Unit tests of `stats` on data whose statistics are known exactly or analytically.

use super::ci::resampled_median;
use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// Seeded normal sample by Box–Muller, independent of the code under test.
fn normal_sample(n: usize, mu: f64, sigma: f64, seed: u64) -> Vec<f64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n)
        .map(|_| {
            let u1 = 1.0 - rng.f64();
            let u2 = rng.f64();
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            mu + sigma * z
        })
        .collect()
}

#[test]
fn constant_data_has_no_spread() {
    let c = 0.1;
    let s = summarize(&[c; 57], 7).unwrap();
    assert_eq!(s.n, 57);
    for v in [s.min, s.p5, s.median, s.mean, s.p95, s.p99, s.max] {
        assert_eq!(v, c);
    }
    assert_eq!((s.stddev, s.cv, s.outliers), (0.0, 0.0, 0));
    assert_eq!(s.ci95, (c, c));
    assert_eq!(median_ci_distribution_free(&[c; 57]).unwrap(), (c, c));
}

#[test]
fn quantiles_of_1_to_100_match_type_7() {
    let data: Vec<f64> = (1..=100).map(f64::from).collect();
    let s = summarize(&data, 1).unwrap();
    assert!(close(s.p5, 5.95, 1e-9), "p5 {}", s.p5);
    assert_eq!(s.median, 50.5);
    assert!(close(s.p95, 95.05, 1e-9), "p95 {}", s.p95);
    assert!(close(s.p99, 99.01, 1e-9), "p99 {}", s.p99);
    assert_eq!((s.min, s.max, s.mean), (1.0, 100.0, 50.5));
    // Sample stddev of 1..=100 is sqrt(100·101/12) = 29.0114...
    assert!(close(s.stddev, (100.0f64 * 101.0 / 12.0).sqrt(), 1e-9));
    assert!(close(s.cv, s.stddev / 50.5, 1e-12));
    assert_eq!(s.outliers, 0);
    assert_eq!(quantile_sorted(&data, 0.0), 1.0);
    assert_eq!(quantile_sorted(&data, 1.0), 100.0);
    assert!(quantile_sorted(&[], 0.5).is_nan());
}

#[test]
fn single_sample() {
    let s = summarize(&[3.25], 0).unwrap();
    assert_eq!(
        (s.n, s.median, s.min, s.max, s.p99),
        (1, 3.25, 3.25, 3.25, 3.25)
    );
    assert_eq!((s.stddev, s.cv, s.ci95), (0.0, 0.0, (3.25, 3.25)));
    assert_eq!(median_ci_distribution_free(&[3.25]).unwrap(), (3.25, 3.25));
}

#[test]
fn normal_sample_matches_theory() {
    let (mu, sigma) = (100.0, 10.0);
    let data = normal_sample(200_000, mu, sigma, 42);
    let s = summarize(&data, 42).unwrap();
    assert!(close(s.median, mu, 0.1), "median {}", s.median);
    assert!(close(s.mean, mu, 0.1), "mean {}", s.mean);
    assert!(close(s.stddev, sigma, 0.1), "stddev {}", s.stddev);
    assert!(close(s.p95, mu + 1.645 * sigma, 0.2), "p95 {}", s.p95);
    assert!(close(s.p5, mu - 1.645 * sigma, 0.2), "p5 {}", s.p5);
    assert!(close(s.p99, mu + 2.326 * sigma, 0.3), "p99 {}", s.p99);
    // Modified z > 3.5 means |x − μ| > ~3.5σ: about 0.047% of a normal sample.
    let expected = 0.000465 * data.len() as f64;
    assert!(
        (s.outliers as f64 - expected).abs() < 0.5 * expected,
        "{}",
        s.outliers
    );
    // Asymptotic standard error of the median: 1.2533·σ/√n ≈ 0.028, so the CI is ~0.11 wide.
    let width = s.ci95.1 - s.ci95.0;
    assert!(width > 0.07 && width < 0.16, "ci width {width}");
}

#[test]
fn heavy_tail_is_counted_not_followed() {
    let mut data = vec![10.0; 1000];
    data.extend([1000.0; 20]);
    let s = summarize(&data, 3).unwrap();
    assert_eq!(s.median, 10.0);
    assert!(s.mean > 29.0, "mean {}", s.mean);
    // MAD is 0 here (most values equal): the mean-absolute-deviation fallback counts the tail.
    assert_eq!(s.outliers, 20);
    assert_eq!(mad_outliers(&data), 20);
    // With jitter MAD is non-zero and the plain modified z-score counts it.
    let jittered: Vec<f64> = (0..1000).map(|i| 10.0 + (i % 10) as f64 * 0.1).collect();
    let mut tailed = jittered.clone();
    tailed.extend([1000.0; 20]);
    let s = summarize(&tailed, 3).unwrap();
    assert!(close(s.median, 10.5, 1e-9), "median {}", s.median);
    assert_eq!(s.outliers, 20);
    assert_eq!(mad_outliers(&tailed), 20);
    assert!(s.mean > 29.0 && s.cv > 1.0);
    assert_eq!(mad_outliers(&[]), 0);
}

#[test]
fn bootstrap_ci_is_deterministic_contains_median_and_narrows() {
    let small = normal_sample(100, 50.0, 5.0, 9);
    let large = normal_sample(10_000, 50.0, 5.0, 9);
    let a = bootstrap_median_ci(&small, 1000, 11).unwrap();
    assert_eq!(a, bootstrap_median_ci(&small, 1000, 11).unwrap());
    assert_ne!(a, bootstrap_median_ci(&small, 1000, 12).unwrap());
    let m = median(&small).unwrap();
    assert!(a.0 <= m && m <= a.1, "{a:?} vs {m}");
    let b = bootstrap_median_ci(&large, 1000, 11).unwrap();
    let ml = median(&large).unwrap();
    assert!(b.0 <= ml && ml <= b.1);
    assert!(b.1 - b.0 < (a.1 - a.0) / 4.0, "{a:?} vs {b:?}");
    assert_eq!(summarize(&small, 11).unwrap().ci95, a);
}

/// The O(1) resampled median must have the distribution of the classic bootstrap: compare
/// how often each order statistic is the resample's median, for odd and even n.
#[test]
fn exact_resampled_median_matches_naive_resampling() {
    for n in [7usize, 8] {
        let sorted: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let trials = 40_000;
        let (mut fast, mut naive) = (vec![0usize; 2 * n], vec![0usize; 2 * n]);
        let mut rng = fastrand::Rng::with_seed(5);
        let mut buf = vec![0.0; n];
        for _ in 0..trials {
            fast[(resampled_median(&sorted, &mut rng) * 2.0) as usize] += 1;
            buf.iter_mut().for_each(|v| *v = sorted[rng.usize(0..n)]);
            naive[(median(&buf).unwrap() * 2.0) as usize] += 1;
        }
        for (f, g) in fast.iter().zip(&naive) {
            let (pf, pg) = (*f as f64 / trials as f64, *g as f64 / trials as f64);
            assert!((pf - pg).abs() < 0.015, "n={n}: {fast:?} vs {naive:?}");
        }
    }
}

#[test]
fn distribution_free_ci_uses_order_statistics() {
    let data: Vec<f64> = (1..=100).rev().map(f64::from).collect();
    // Ranks ⌊50 − 9.8⌋ = 40 and ⌈51 + 9.8⌉ = 61.
    assert_eq!(median_ci_distribution_free(&data).unwrap(), (40.0, 61.0));
    // Tiny n clamps to the extremes.
    assert_eq!(
        median_ci_distribution_free(&[3.0, 1.0, 2.0]).unwrap(),
        (1.0, 3.0)
    );
}

#[test]
fn invalid_input_is_rejected() {
    assert_eq!(summarize(&[], 0), Err(StatsError::Empty));
    assert_eq!(median(&[]), Err(StatsError::Empty));
    assert_eq!(
        summarize(&[1.0, f64::NAN], 0),
        Err(StatsError::NonFinite { index: 1 })
    );
    assert_eq!(
        bootstrap_median_ci(&[f64::INFINITY], 10, 0),
        Err(StatsError::NonFinite { index: 0 })
    );
    assert_eq!(
        median_ci_distribution_free(&[1.0, 2.0, f64::NEG_INFINITY]),
        Err(StatsError::NonFinite { index: 2 })
    );
    assert!(
        StatsError::NonFinite { index: 4 }
            .to_string()
            .contains("sample 4")
    );
}

#[test]
fn median_handles_odd_and_even_n() {
    assert_eq!(median(&[5.0, 1.0, 3.0]).unwrap(), 3.0);
    assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]).unwrap(), 2.5);
    assert_eq!(median(&[-2.0, -4.0]).unwrap(), -3.0);
}

#[test]
fn ratio_and_relative_width() {
    assert_eq!(ratio(9.0, 3.0), Some(3.0));
    assert_eq!(ratio(1.0, 0.0), None);
    assert_eq!(ratio(1.0, -2.0), None);
    assert_eq!(ratio(f64::NAN, 2.0), None);
    assert_eq!(ratio(1.0, f64::INFINITY), None);
    assert_eq!(relative_ci_width(9.0, 11.0, 10.0), 0.2);
    assert_eq!(relative_ci_width(-11.0, -9.0, -10.0), 0.2);
    assert_eq!(relative_ci_width(5.0, 5.0, 0.0), 0.0);
    assert_eq!(relative_ci_width(-1.0, 1.0, 0.0), f64::INFINITY);
}

#[test]
fn negative_mean_gives_positive_cv() {
    let s = summarize(&[-1.0, -2.0, -3.0], 0).unwrap();
    assert!(s.cv > 0.0);
}

#[test]
fn outlier_rules_at_the_edges() {
    // MAD is 0: the mean absolute deviation (0.2) scales the score, so 6 scores 4 > 3.5.
    assert_eq!(mad_outliers(&[5.0, 5.0, 5.0, 5.0, 6.0]), 1);
    assert_eq!(mad_outliers(&[5.0; 9]), 0);
    // Normal spread: 1..=9 has MAD 2, so 100 scores 0.6745·95/2 ≈ 32 and 9 stays below 3.5.
    let mut data: Vec<f64> = (1..=9).map(f64::from).collect();
    data.push(100.0);
    assert_eq!(mad_outliers(&data), 1);
}

#[test]
fn zero_resamples_gives_the_degenerate_interval() {
    assert_eq!(
        bootstrap_median_ci(&[1.0, 2.0, 3.0], 0, 1).unwrap(),
        (2.0, 2.0)
    );
}
