//! Unit tests of the comparison on synthetic samples with a known shift (and on the fixture
//! run for the matching of whole runs).

use super::*;
use crate::model::RunRecord;
use crate::model::fixture::sample_run;
use crate::stats::summarize;

/// Seeded normal samples (Box–Muller), independent of the code under test.
fn normal(n: usize, mu: f64, sigma: f64, seed: u64) -> Vec<f64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n)
        .map(|_| {
            let z =
                (-2.0 * (1.0 - rng.f64()).ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos();
            mu + sigma * z
        })
        .collect()
}

fn opts() -> CompareOptions {
    CompareOptions::default()
}

/// `a` against `b` with the default options, which every sample here is valid for.
fn compared(a: &[f64], b: &[f64], direction: Direction) -> SampleComparison {
    compare_samples(a, b, direction, &opts()).unwrap()
}

#[test]
fn ten_percent_slower_is_detected_with_its_size() {
    let a = normal(200, 100.0, 3.0, 1);
    let b = normal(200, 110.0, 3.3, 2);
    let c = compared(&a, &b, Direction::LowerIsBetter);
    assert_eq!(c.verdict, Verdict::Slower);
    assert!(c.significant && c.test.p_value < 1e-6, "{c:?}");
    let change = c.change().unwrap();
    assert!((change - 0.10).abs() < 0.01, "{change}");
    let (lo, hi) = c.ratio_ci95.unwrap();
    assert!(lo < 1.0 + change && 1.0 + change < hi, "{lo} {hi}");
    assert!(lo > 1.08 && hi < 1.12, "{lo} {hi}");
    assert!(c.regressed_beyond(Direction::LowerIsBetter, 0.05));
    assert!(!c.regressed_beyond(Direction::LowerIsBetter, 0.12));
    // The same shift of a rate is an improvement.
    let c = compared(&a, &b, Direction::HigherIsBetter);
    assert_eq!(c.verdict, Verdict::Faster);
    assert!(!c.regressed_beyond(Direction::HigherIsBetter, 0.05));
    let c = compared(&a, &b, Direction::Neutral);
    assert_eq!(c.verdict, Verdict::Higher);
}

#[test]
fn a_drop_in_throughput_is_a_regression() {
    let a = normal(150, 10e9, 0.2e9, 3);
    let b = normal(150, 8e9, 0.2e9, 4);
    let c = compared(&a, &b, Direction::HigherIsBetter);
    assert_eq!(c.verdict, Verdict::Slower);
    assert!(c.regressed_beyond(Direction::HigherIsBetter, 0.1));
    assert!(!c.regressed_beyond(Direction::HigherIsBetter, 0.25));
}

#[test]
fn same_distribution_is_no_change_for_many_seeds() {
    let mut significant = 0;
    for seed in 0..40 {
        let a = normal(200, 50.0, 2.5, 1000 + seed);
        let b = normal(200, 50.0, 2.5, 2000 + seed);
        let c = compared(&a, &b, Direction::LowerIsBetter);
        assert_eq!(c.verdict, Verdict::NoChange, "seed {seed}: {c:?}");
        significant += usize::from(c.test.p_value < 0.05);
    }
    // p is uniform under the null: about 2 of 40 below 0.05, hardly ever 8.
    assert!(significant < 8, "{significant} of 40 significant");
}

#[test]
fn a_significant_change_inside_the_threshold_is_no_change() {
    let a = normal(400, 100.0, 0.5, 5);
    let b = normal(400, 101.0, 0.5, 6);
    let c = compared(&a, &b, Direction::LowerIsBetter);
    assert!(c.significant, "{c:?}");
    assert_eq!(c.verdict, Verdict::NoChange);
    let strict = CompareOptions {
        threshold: 0.005,
        ..opts()
    };
    let c = compare_samples(&a, &b, Direction::LowerIsBetter, &strict).unwrap();
    assert_eq!(c.verdict, Verdict::Slower);
}

#[test]
fn a_large_change_that_is_not_significant_is_no_change() {
    // Three samples each: even a 20% shift cannot reach p < 0.05 (exact p ≥ 0.1).
    let c = compared(
        &[10.0, 11.0, 9.0],
        &[12.0, 13.2, 10.8],
        Direction::LowerIsBetter,
    );
    assert!(c.test.exact && c.test.p_value >= 0.1, "{c:?}");
    assert!((c.change().unwrap() - 0.2).abs() < 1e-12);
    assert_eq!(c.verdict, Verdict::NoChange);
    assert!(!c.regressed_beyond(Direction::LowerIsBetter, 0.05));
}

#[test]
fn nonpositive_baseline_has_no_ratio() {
    let c = compared(
        &[-1.0, 0.0, 0.5],
        &[3.0, 4.0, 5.0],
        Direction::LowerIsBetter,
    );
    assert_eq!((c.ratio, c.ratio_ci95), (None, None));
    assert_eq!(c.verdict, Verdict::NoChange);
    // A positive median whose resamples can reach 0 has a ratio but no CI.
    let c = compared(&[0.0, 1.0, 2.0], &[1.0; 3], Direction::LowerIsBetter);
    assert_eq!(c.ratio_ci95, None);
    assert!(compare_samples(&[], &[1.0], Direction::Neutral, &opts()).is_err());
    assert!(compare_samples(&[f64::NAN], &[1.0], Direction::Neutral, &opts()).is_err());
}

#[test]
fn the_bootstrap_is_reproducible_for_a_seed() {
    let a = normal(100, 10.0, 1.0, 7);
    let b = normal(100, 10.5, 1.0, 8);
    let run = |seed| {
        compare_samples(
            &a,
            &b,
            Direction::LowerIsBetter,
            &CompareOptions { seed, ..opts() },
        )
    };
    assert_eq!(run(3).unwrap(), run(3).unwrap());
    assert_ne!(run(3).unwrap().ratio_ci95, run(4).unwrap().ratio_ci95);
}

/// The fixture with the samples of `os.syscall`'s "null (getppid)" scaled by `factor`.
fn with_scaled_null(factor: f64, seed: u64) -> RunRecord {
    let mut run = sample_run();
    let m = &mut run.results[0].metrics[1];
    assert_eq!(m.name, "null (getppid)");
    m.samples = normal(200, 51.3 * factor, 0.8, seed);
    m.summary = summarize(&m.samples, 1).unwrap();
    run
}

#[test]
fn runs_are_matched_by_experiment_and_metric() {
    let a = with_scaled_null(1.0, 11);
    let mut b = with_scaled_null(1.1, 12);
    b.id = "b".into();
    b.results[0].metrics.remove(0); // "function call" only in A
    b.results.remove(1); // mem.latency has no metrics: not listed
    let cmp = compare_runs(&a, &b, &opts(), Some(0.05));
    let names: Vec<&str> = cmp.metrics.iter().map(|m| m.metric.as_str()).collect();
    assert_eq!(names, ["null (getppid)", "read 1 byte (/dev/zero)"]);
    assert_eq!(cmp.metrics[0].verdict(), Verdict::Slower);
    assert!(cmp.metrics[0].regression);
    assert_eq!(cmp.metrics[1].verdict(), Verdict::NoChange);
    assert_eq!(cmp.regressions().count(), 1);
    assert_eq!(cmp.count(Verdict::NoChange), 1);
    assert_eq!(cmp.only_in_a.len(), 1);
    assert_eq!(cmp.only_in_a[0].metric.as_deref(), Some("function call"));
    assert!(cmp.only_in_b.is_empty());
    assert_eq!(
        (cmp.sides.a.id.as_str(), cmp.sides.b.id.as_str()),
        (a.id.as_str(), "b")
    );
}

#[test]
fn an_experiment_skipped_on_one_side_is_listed_with_the_reason() {
    let a = sample_run();
    let mut b = sample_run();
    b.results[0].status = crate::model::Status::Skipped;
    b.results[0].skip = Some(crate::model::Skip {
        reason: "no getppid here".into(),
        hint: "none".into(),
    });
    let cmp = compare_runs(&a, &b, &opts(), None);
    assert!(cmp.metrics.is_empty());
    assert_eq!(cmp.only_in_a.len(), 1);
    assert_eq!(cmp.only_in_a[0].metric, None);
    assert_eq!(
        cmp.only_in_a[0].note.as_deref(),
        Some("skipped in B: no getppid here")
    );
    let cmp = compare_runs(&b, &a, &opts(), None);
    assert_eq!(
        cmp.only_in_b[0].note.as_deref(),
        Some("skipped in A: no getppid here")
    );
}

#[test]
fn missing_samples_and_unit_mismatch_are_notes_not_verdicts() {
    let a = sample_run();
    let mut b = sample_run();
    b.results[0].metrics[0].samples.clear();
    b.results[0].metrics[1].unit = crate::model::Unit::Count;
    let cmp = compare_runs(&a, &b, &opts(), Some(0.0));
    assert_eq!(
        cmp.metrics[0].note.as_deref(),
        Some("no raw samples stored in B")
    );
    assert!(
        cmp.metrics[1]
            .note
            .as_deref()
            .unwrap()
            .starts_with("units differ")
    );
    assert!(cmp.metrics.iter().all(|m| !m.regression));
    // Identical samples: p = 1, ratio exactly 1.
    let c = cmp.metrics[2].comparison.as_ref().unwrap();
    assert_eq!((c.ratio, c.verdict), (Some(1.0), Verdict::NoChange));
    assert!(c.test.p_value > 0.9);
}

/// A run whose first experiment holds `n` time metrics of 10 samples each, `base + k` for
/// k = 0…9, with the metrics in `shifted` moved up by 4.5 (≈ 4.3%, a marginal change: the
/// Mann-Whitney p of one such metric alone is between 0.001 and 0.05).
fn many_metrics(n: usize, shifted: &[usize]) -> RunRecord {
    let mut run = sample_run();
    let template = run.results[0].metrics[1].clone();
    run.results[0].metrics = (0..n)
        .map(|i| {
            let mut m = template.clone();
            m.name = format!("metric {i}");
            let shift = if shifted.contains(&i) { 4.5 } else { 0.0 };
            m.samples = (0..10).map(|k| 100.0 + k as f64 + shift).collect();
            m.summary = summarize(&m.samples, 1).unwrap();
            m
        })
        .collect();
    run.results.truncate(1);
    run
}

#[test]
fn one_marginal_change_among_many_metrics_is_not_called_a_change() {
    // Alone, the shifted metric is slower.
    let alone = compare_runs(&many_metrics(1, &[]), &many_metrics(1, &[0]), &opts(), None);
    let c = alone.metrics[0].comparison.as_ref().unwrap();
    assert!((0.001..0.05).contains(&c.test.p_value), "{c:?}");
    assert_eq!(alone.metrics[0].verdict(), Verdict::Slower);
    assert_eq!(c.p_adjusted, None);
    // Among 20 metrics tested at once the same p is what chance gives one of them.
    let many = compare_runs(
        &many_metrics(20, &[]),
        &many_metrics(20, &[0]),
        &opts(),
        None,
    );
    let c = many.metrics[0].comparison.as_ref().unwrap();
    let q = c.p_adjusted.unwrap();
    assert!(
        (q - c.test.p_value * 20.0).abs() < 1e-9 && q > 0.05,
        "{c:?}"
    );
    assert_eq!(many.count(Verdict::NoChange), 20);
}

#[test]
fn many_metrics_changed_together_stay_changed_after_adjusting() {
    let shifted: Vec<usize> = (0..10).collect();
    let cmp = compare_runs(
        &many_metrics(20, &[]),
        &many_metrics(20, &shifted),
        &opts(),
        None,
    );
    for m in &cmp.metrics {
        let c = m.comparison.as_ref().unwrap();
        assert!(c.p_adjusted.unwrap() >= c.test.p_value, "{m:?}");
    }
    assert_eq!(cmp.count(Verdict::Slower), 10, "{:?}", cmp.metrics);
    assert_eq!(cmp.count(Verdict::NoChange), 10);
}

#[test]
fn a_metric_without_a_comparison_is_left_out_of_the_family() {
    let a = many_metrics(20, &[]);
    let mut b = many_metrics(20, &[19]);
    b.results[0].metrics[3].samples.clear(); // not compared: a note, no p-value
    let cmp = compare_runs(&a, &b, &opts(), None);
    assert!(cmp.metrics[3].comparison.is_none() && cmp.metrics[3].note.is_some());
    let c = cmp.metrics[19].comparison.as_ref().unwrap();
    // 19 metrics were tested: the smallest p is multiplied by 19, not 20.
    assert!(
        (c.p_adjusted.unwrap() - c.test.p_value * 19.0).abs() < 1e-9,
        "{c:?}"
    );
}
