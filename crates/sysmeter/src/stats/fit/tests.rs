//! Synthetic data with known shape: every class is recognised under ±3% noise over many
//! seeds, the selection rule prefers the simpler of two near-equal classes, and the knee sits
//! where the generated curve breaks.

use super::knee::{self, KneeRule, KneeScan, NoKnee};
use super::*;

/// `count` sizes from `lo` growing by `factor`.
fn geometric(lo: f64, factor: f64, count: usize) -> Vec<f64> {
    (0..count).map(|i| lo * factor.powi(i as i32)).collect()
}

/// `f(n)` times a uniform factor in [1 − 3%, 1 + 3%], seeded.
fn noisy(sizes: &[f64], seed: u64, f: impl Fn(f64) -> f64) -> Vec<f64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    sizes
        .iter()
        .map(|&n| f(n) * (1.0 + 0.03 * (2.0 * rng.f64() - 1.0)))
        .collect()
}

/// One case per class: sizes and a generator t = a·g(N) + b with b a fixed cost in ns.
fn cases() -> Vec<(Class, Vec<f64>, f64, f64)> {
    vec![
        (Class::Constant, geometric(1e3, 2.0, 10), 0.0, 5e6),
        (Class::Log, geometric(16.0, 4.0, 11), 1e6, 2e5),
        (Class::Linear, geometric(1e4, 1.6, 11), 50.0, 1e6),
        (Class::NLogN, geometric(1e4, 1.6, 11), 5.0, 1e6),
        (Class::Quadratic, geometric(100.0, 1.5, 12), 2.0, 1e6),
        (Class::Cubic, geometric(50.0, 1.4, 10), 1.0, 1e6),
        (
            Class::Exponential,
            (10..=30).step_by(2).map(f64::from).collect(),
            10.0,
            1e6,
        ),
    ]
}

#[test]
fn each_class_is_recognised_under_three_percent_noise() {
    for (class, sizes, a, b) in cases() {
        for seed in 1..=25 {
            let times = noisy(&sizes, seed, |n| a * class.g(n) + b);
            let fit = fit_all(&sizes, &times, SelectRule::default()).expect("fits");
            let table: Vec<String> = fit
                .fits
                .iter()
                .map(|f| format!("{} {:.4}", f.class.label(), f.nrms))
                .collect();
            assert_eq!(
                fit.best().class,
                class,
                "seed {seed}: picked {} for {}; nRMS {table:?}",
                fit.best().class.label(),
                class.label()
            );
            if class != Class::Constant {
                let rel = (fit.best().a - a).abs() / a;
                assert!(rel < 0.15, "seed {seed}: a = {} vs {a}", fit.best().a);
            }
            assert!(fit.best().nrms < 0.03, "{}", fit.best().nrms);
        }
    }
}

#[test]
fn exact_data_is_fitted_exactly_with_its_coefficients() {
    let sizes = geometric(1e3, 2.0, 8);
    let times: Vec<f64> = sizes.iter().map(|&n| 3.0 * n * n.log2() + 2e5).collect();
    let fit = fit_class(Class::NLogN, &sizes, &times).expect("fits");
    assert!((fit.a - 3.0).abs() < 1e-9, "{}", fit.a);
    assert!((fit.b - 2e5).abs() < 1e-3, "{}", fit.b);
    assert!(fit.nrms < 1e-12);
    let p = fit.predict(1e6).expect("finite");
    assert!((p - (3.0 * 1e6 * 1e6f64.log2() + 2e5)).abs() < 1e-3);
}

#[test]
fn coefficients_stay_nonnegative() {
    // Falling times: the unconstrained line has a negative slope; the fit must not.
    let sizes = [1.0e3, 2.0e3, 4.0e3, 8.0e3];
    let times = [9.0e6, 8.0e6, 7.0e6, 6.0e6];
    for class in &Class::ALL[..6] {
        let fit = fit_class(*class, &sizes, &times).expect("fits");
        assert!(fit.a >= 0.0 && fit.b >= 0.0, "{class:?}: {fit:?}");
    }
    // Convex data: a line through it would need a negative intercept.
    let times: Vec<f64> = sizes.iter().map(|n| n * n).collect();
    let fit = fit_class(Class::Linear, &sizes, &times).expect("fits");
    assert!(fit.b >= 0.0 && fit.a > 0.0, "{fit:?}");
}

#[test]
fn the_simpler_class_wins_a_near_tie() {
    let fits = |nrms: [f64; 3]| -> Vec<ClassFit> {
        [Class::Linear, Class::NLogN, Class::Quadratic]
            .iter()
            .zip(nrms)
            .map(|(&class, nrms)| ClassFit {
                class,
                a: 1.0,
                b: 0.0,
                nrms,
            })
            .collect()
    };
    let rule = SelectRule::default();
    // 0.021 vs 0.020: inside both margins → the simpler O(N).
    assert_eq!(select(&fits([0.021, 0.020, 0.3]), rule), 0);
    // 30% lower and 0.9 points lower → the more complex class earns its place.
    assert_eq!(select(&fits([0.030, 0.021, 0.3]), rule), 1);
    // 40% lower but only 0.2 points: differences that small are noise → keep O(N).
    assert_eq!(select(&fits([0.005, 0.003, 0.3]), rule), 0);
    // The lowest is a complex class but a simpler one is close: skip to the simplest close.
    assert_eq!(select(&fits([0.5, 0.0201, 0.02]), rule), 1);
}

#[test]
fn overflowing_and_degenerate_classes_are_skipped_with_a_reason() {
    let sizes = [1e3, 1e4, 1e5, 1e6];
    let times = [1e6, 2e6, 3e6, 4e6];
    let fit = fit_all(&sizes, &times, SelectRule::default()).expect("fits");
    let skipped: Vec<Class> = fit.skipped.iter().map(|s| s.class).collect();
    assert_eq!(skipped, vec![Class::Exponential]);
    assert!(fit.skipped[0].reason.contains("overflows"));
    assert_eq!(fit.fits.len(), 6);
    // log2(1) = 0 and N log N is then 0, but that still varies; a constant g never does.
    let err = fit_class(Class::Log, &[8.0, 8.0, 8.0], &[1.0, 2.0, 3.0]).expect_err("flat g");
    assert!(err.contains("does not vary"), "{err}");
}

#[test]
fn bad_input_is_an_error_that_says_what_to_do() {
    let e = fit_all(&[1.0, 2.0], &[1.0, 2.0], SelectRule::default()).expect_err("too few");
    assert!(matches!(e, FitError::TooFewSizes { got: 2, needed: 3 }));
    assert!(e.to_string().contains("--sizes"));
    let e = fit_all(&[1.0, 2.0, 2.0, 1.0], &[1.0; 4], SelectRule::default()).expect_err("dup");
    assert!(matches!(e, FitError::TooFewSizes { got: 2, .. }));
    let e = fit_all(&[1.0, 2.0, 3.0], &[1.0, 0.0, 3.0], SelectRule::default()).expect_err("0");
    assert!(matches!(e, FitError::BadPoint { index: 1, .. }));
    let e = fit_all(&[1.0, 2.0, 3.0], &[1.0, 2.0], SelectRule::default()).expect_err("len");
    assert!(matches!(e, FitError::LengthMismatch { .. }));
}

/// Time per element 10 ns up to `n0`, then growing as (N/n0)^`extra` (log-log slope
/// `extra`), plus a fixed cost as large as the smallest size's work; returns (sizes, t).
fn piecewise(n0: f64, extra: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let sizes = geometric(1e4, 2.0, 12);
    let t = noisy(&sizes, seed, |n| {
        n * 10.0 * (n / n0).max(1.0).powf(extra) + 1e5
    });
    (sizes, t)
}

fn per_n(n: f64) -> f64 {
    n
}

/// The knee scan as `scale` runs it: time per element, against the best class fit.
fn scan(sizes: &[f64], t: &[f64]) -> KneeScan {
    let fit = fit_all(sizes, t, SelectRule::default()).expect("fits");
    let baseline: Vec<f64> = sizes
        .iter()
        .filter_map(|&n| fit.best().predict(n))
        .collect();
    knee::detect(sizes, t, per_n, &baseline, 0.0, KneeRule::default())
}

/// The same with the measurement noise known (e.g. ±10% uniform: σ ≈ 5.8%).
fn scan_noisy(sizes: &[f64], t: &[f64], noise: f64) -> KneeScan {
    let fit = fit_all(sizes, t, SelectRule::default()).expect("fits");
    let baseline: Vec<f64> = sizes
        .iter()
        .filter_map(|&n| fit.best().predict(n))
        .collect();
    knee::detect(sizes, t, per_n, &baseline, noise, KneeRule::default())
}

#[test]
fn the_knee_of_a_piecewise_curve_is_found_at_the_break() {
    for seed in 1..=20 {
        let (sizes, t) = piecewise(1.28e6, 1.0, seed);
        match scan(&sizes, &t) {
            KneeScan::Knee(h) => {
                // The break lies between the last size before the rise and the first after
                // (fixed cost inflating the smallest sizes may pull it one size early).
                assert!(
                    h.at <= 1.28e6 * 1.001 && h.next >= 1.28e6 * 0.999,
                    "seed {seed}: knee at {}..{} misses 1.28e6",
                    h.at,
                    h.next
                );
                assert!((h.slope_after - 1.0).abs() < 0.2, "{h:?}");
                // 4 octaves past the break at slope +1: 16× the old trend.
                assert!(h.rise > 10.0 && h.rise < 25.0, "{h:?}");
            }
            other => panic!("seed {seed}: no knee: {other:?}"),
        }
    }
}

#[test]
fn a_cache_like_step_is_a_knee_where_the_rise_starts() {
    // Per-element cost steps 5× from 20 ns to 100 ns between 4 and 16 units (a working set
    // leaving the last-level cache), sizes 0.5..64 by √2.
    let sizes = geometric(0.5, 2f64.sqrt(), 15);
    for seed in 1..=20 {
        let t = noisy(&sizes, seed, |n| {
            let x = ((n / 4.0).log2() / 2.0).clamp(0.0, 1.0);
            n * 20.0 * 5f64.powf(x)
        });
        match scan(&sizes, &t) {
            KneeScan::Knee(h) => {
                // The rise starts at 4 and ends at 16; the interval lies on the ramp.
                let (at, next) = (h.at, h.next);
                assert!(
                    (2.0..=8.0).contains(&at) && next <= 16.1,
                    "knee at {at}..{next}"
                );
                assert!(h.rise > 3.5 && h.rise < 7.0, "the step is 5×: {h:?}");
            }
            other => panic!("seed {seed}: no knee: {other:?}"),
        }
    }
}

#[test]
fn smooth_classes_and_amortised_start_up_have_no_knee() {
    for (class, sizes, a, b) in cases() {
        if class == Class::Exponential {
            continue; // the caller divides by 2^N there (see diagnose::scale)
        }
        for seed in 1..=10 {
            let t = noisy(&sizes, seed, |n| a * class.g(n) + b);
            let found = scan(&sizes, &t);
            assert!(!matches!(found, KneeScan::Knee(_)), "{class:?}: {found:?}");
        }
    }
    // Start-up dominating the small sizes (t/N falls, then flattens) is no knee either.
    let sizes = geometric(1e3, 2.0, 12);
    let t: Vec<f64> = sizes.iter().map(|n| 50.0 * n + 1e7).collect();
    let found = scan(&sizes, &t);
    assert!(!matches!(found, KneeScan::Knee(_)), "{found:?}");
}

#[test]
fn knee_detection_needs_six_sizes() {
    let scan = knee::detect(
        &[1.0, 2.0, 4.0, 8.0],
        &[1.0, 1.0, 5.0, 9.0],
        per_n,
        &[0.5; 4],
        0.0,
        KneeRule::default(),
    );
    assert_eq!(scan, KneeScan::TooFewPoints { got: 4, needed: 6 });
}

#[test]
fn noise_alone_is_not_a_knee() {
    // A flat cost per element with ±10% noise (three times the other tests'), many seeds.
    let sizes = geometric(1e3, 2.0, 10);
    for seed in 1..=200 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let t: Vec<f64> = sizes
            .iter()
            .map(|n| n * 10.0 * (1.0 + 0.1 * (2.0 * rng.f64() - 1.0)))
            .collect();
        let scan = scan(&sizes, &t);
        assert!(!matches!(scan, KneeScan::Knee(_)), "seed {seed}: {scan:?}");
    }
}

#[test]
fn start_up_before_a_quadratic_is_explained_by_the_class_not_a_knee() {
    // t/N falls (start-up amortised) then rises (N²): a perfect two-segment shape, but
    // t = a·N² + b fits it, so the rule must say why it is no knee.
    let sizes = geometric(100.0, 1.5, 12);
    let t = noisy(&sizes, 5, |n| 2.0 * n * n + 1e6);
    match scan(&sizes, &t) {
        KneeScan::NoKnee(_, why) => assert!(matches!(why, NoKnee::ClassFits { .. }), "{why:?}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn measured_working_set_curves_have_their_knee_at_the_step() {
    // CPU time per KiB (µs) of tests/fixtures/programs/scale_workset.c on this VM, medians
    // of 3 runs, sizes 256 KiB..16 MiB by √2 — two runs where the ramp spans two sizes.
    let sizes = geometric(256.0, 2f64.sqrt(), 13);
    let runs: [[f64; 13]; 2] = [
        [
            4.0, 4.1, 4.0, 3.6, 3.3, 4.6, 4.5, 5.8, 8.2, 18.1, 20.0, 22.0, 23.6,
        ],
        [
            4.2, 3.9, 3.6, 3.2, 3.2, 4.3, 4.7, 4.3, 9.4, 18.0, 20.4, 21.4, 23.4,
        ],
    ];
    for per in runs {
        let t: Vec<f64> = sizes.iter().zip(per).map(|(n, c)| n * c * 1e3).collect();
        match scan(&sizes, &t) {
            KneeScan::Knee(h) => {
                assert!(h.at >= 2000.0 && h.next <= 6000.0, "{h:?}");
                assert!(h.rise > 3.0, "{h:?}");
            }
            other => panic!("{per:?}: {other:?}"),
        }
    }
}

#[test]
fn noisy_start_up_before_a_quadratic_is_no_knee_either() {
    // ±10% noise lifts the class's nRMS past 5%, and the two segments fit noise better than
    // a two-parameter class; knowing the noise (σ of ±10% uniform ≈ 5.8%) settles it. Both a
    // dominant and a small fixed cost.
    let sizes = geometric(100.0, 1.5, 12);
    for b in [1e6, 2e4] {
        for seed in 1..=200 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let t: Vec<f64> = sizes
                .iter()
                .map(|n| (2.0 * n * n + b) * (1.0 + 0.1 * (2.0 * rng.f64() - 1.0)))
                .collect();
            let found = scan_noisy(&sizes, &t, 0.058);
            assert!(
                !matches!(found, KneeScan::Knee(_)),
                "b {b}, seed {seed}: {found:?}"
            );
        }
    }
}

#[test]
fn a_knee_stands_out_of_the_noise() {
    // The same noise on a real step (5× past 4096) is still a knee.
    let sizes = geometric(256.0, 2f64.sqrt(), 13);
    for seed in 1..=50 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let t: Vec<f64> = sizes
            .iter()
            .map(|&n| {
                let per = if n <= 4096.0 { 3.5 } else { 17.5 };
                (n * per + 1000.0) * (1.0 + 0.1 * (2.0 * rng.f64() - 1.0))
            })
            .collect();
        match scan_noisy(&sizes, &t, 0.058) {
            KneeScan::Knee(h) => assert!(h.at <= 4097.0 && h.next >= 4095.0, "{h:?}"),
            other => panic!("seed {seed}: {other:?}"),
        }
    }
}

#[test]
fn a_step_behind_a_dominant_fixed_cost_is_still_a_knee() {
    // The Intel guest's curve (issue 29): a process start-up of ~3 ms dominates the small
    // sizes, so t/N falls, then the working set leaves the cache and the cost per element
    // rises ~40×. t/N alone reads "start-up dominates"; without the fixed cost the step is
    // plain. ±3% noise.
    let sizes = geometric(256.0, 2f64.sqrt(), 15);
    let per = |n: f64| {
        if n < 6000.0 {
            0.4
        } else if n < 9000.0 {
            6.0
        } else {
            18.8
        }
    };
    for seed in 1..=20 {
        let t = noisy(&sizes, seed, |n| 3000.0 + n * per(n));
        match scan(&sizes, &t) {
            KneeScan::Knee(h) => assert!(h.at >= 4000.0 && h.next <= 12000.0, "{h:?}"),
            other => panic!("seed {seed}: {other:?}"),
        }
    }
}

#[test]
fn a_dominant_fixed_cost_before_a_smooth_class_is_no_knee() {
    // The second scan (without the fixed cost) must not turn a class's own growth into a
    // knee: linear, N log N and quadratic work behind a start-up that dominates, ±3% noise.
    let sizes = geometric(256.0, 2f64.sqrt(), 15);
    let works: [fn(f64) -> f64; 3] = [|n| 0.4 * n, |n| 0.05 * n * n.ln(), |n| 1e-4 * n * n];
    for (i, work) in works.into_iter().enumerate() {
        for seed in 1..=50 {
            let t = noisy(&sizes, seed, |n| 3000.0 + work(n));
            for found in [scan(&sizes, &t), scan_noisy(&sizes, &t, 0.017)] {
                assert!(
                    !matches!(found, KneeScan::Knee(_)),
                    "work {i}, seed {seed}: {found:?}"
                );
            }
        }
    }
}
