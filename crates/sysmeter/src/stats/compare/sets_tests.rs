//! Sets of runs: the between-run test on known values, 3 against 3 runs whose between-run
//! noise exceeds the within-run noise, `--rounds` runs as sets, and normalising per run.

use super::machine_tests::{run, state};
use super::sets::welch_log;
use super::*;
use crate::model::{RoundStats, RunRecord};

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() < tol
}

#[test]
fn welch_on_logs_matches_the_t_distribution() {
    // ln a = 0, 0.1, 0.2; ln b = 0.3, 0.4, 0.5: Δ = 0.3, se = √(2 · 0.01/3), t = 3.6742,
    // df = 4; two-sided p = 0.021312 (numerical integration of the t density), CI
    // exp(0.3 ± 2.776445 · se) = [1.07606, 1.69333].
    let a: Vec<f64> = [0.0, 0.1, 0.2].iter().map(|x: &f64| x.exp()).collect();
    let b: Vec<f64> = [0.3, 0.4, 0.5].iter().map(|x: &f64| x.exp()).collect();
    let (t, (lo, hi)) = welch_log(&a, &b).expect("positive values");
    assert!(close(t.t, 3.674_234_614, 1e-6), "{t:?}");
    assert!(close(t.df, 4.0, 1e-9), "{t:?}");
    assert!(close(t.p_value, 0.021_311_64, 1e-6), "{t:?}");
    assert!(
        close(lo, 1.076_057_8, 1e-5) && close(hi, 1.693_328, 1e-5),
        "{lo} {hi}"
    );
    assert_eq!((t.runs_a, t.runs_b), (3, 3));
    // One run on a side borrows the other side's variance.
    let (one, _) = welch_log(&[1.2], &a).expect("positive");
    assert!(close(one.df, 2.0, 1e-12), "{one:?}");
    assert!(welch_log(&[1.0], &[1.1]).is_none());
    assert!(welch_log(&[1.0, 0.0], &[1.0, 2.0]).is_none());
    // No spread at all.
    let (same, ci) = welch_log(&[2.0, 2.0], &[2.0, 2.0]).expect("positive");
    assert_eq!((same.p_value, ci), (1.0, (1.0, 1.0)));
}

/// A run whose "null (getppid)" samples are the fixture's, moved to median `ns`.
fn run_at(ns: f64, id: &str) -> RunRecord {
    let mut r = run(4.5, ns / 51.3128, 1.0);
    r.id = id.into();
    r
}

fn null(cmp: &RunComparison) -> &MetricComparison {
    cmp.metrics
        .iter()
        .find(|m| m.metric == "null (getppid)")
        .expect("compared")
}

#[test]
fn three_against_three_with_between_run_noise_is_not_significant() {
    // Within a run the samples vary by about 0.5%; between runs the medians by about 5%.
    let a = [run_at(50.0, "a1"), run_at(53.0, "a2"), run_at(47.5, "a3")];
    let b = [run_at(52.0, "b1"), run_at(49.0, "b2"), run_at(54.0, "b3")];
    let opts = CompareOptions::default();
    // The single pair a1 → b1 (+4%) looks like a real slowdown…
    let pair = compare_runs(&a[0], &b[0], &opts, Some(0.02));
    assert_eq!(null(&pair).verdict, Verdict::Slower);
    assert!(null(&pair).regression);
    // …but the sets' medians overlap: no change, and no regression.
    let (sa, sb): (Vec<&RunRecord>, Vec<&RunRecord>) = (a.iter().collect(), b.iter().collect());
    let sets = compare_sets(&sa, &sb, &[], &opts, Some(0.02));
    let m = null(&sets);
    let c = m.comparison.as_ref().expect("compared");
    let t = c.runs_test.expect("sets use the between-run test");
    assert!(t.p_value > 0.3, "{t:?}");
    assert_eq!((c.n_a, c.n_b), (3, 3));
    assert!(
        close(c.median_a, 50.0, 1e-9) && close(c.median_b, 52.0, 1e-9),
        "{c:?}"
    );
    assert_eq!(m.verdict, Verdict::NoChange);
    assert!(!m.regression);
    assert_eq!(sets.sides.a_set.len(), 3);
    assert_eq!(sets.sides.b_set[2].id, "b3");
}

#[test]
fn three_against_three_with_a_real_shift_is_significant() {
    let a = [run_at(50.0, "a1"), run_at(50.5, "a2"), run_at(49.6, "a3")];
    let b = [run_at(60.0, "b1"), run_at(60.4, "b2"), run_at(59.5, "b3")];
    let (sa, sb): (Vec<&RunRecord>, Vec<&RunRecord>) = (a.iter().collect(), b.iter().collect());
    let cmp = compare_sets(&sa, &sb, &[], &CompareOptions::default(), Some(0.05));
    let m = null(&cmp);
    let c = m.comparison.as_ref().expect("compared");
    assert!(c.runs_test.expect("sets").p_value < 0.001, "{c:?}");
    assert_eq!(m.verdict, Verdict::Slower);
    assert!(m.regression, "{c:?}");
}

/// `run_at(ns)` with `--rounds`: the metric's round medians and each round's probe.
fn rounds_run(medians: &[f64], ghz: &[f64]) -> RunRecord {
    let mut r = run_at(medians[0], "rounds");
    let result = &mut r.results[0];
    result.round_machines = ghz.iter().map(|&g| state(g)).collect();
    result.metrics[1].rounds = Some(RoundStats {
        medians: medians.to_vec(),
        median: medians[medians.len() / 2],
        cv: 0.0,
    });
    r
}

#[test]
fn a_rounds_run_is_a_set_on_its_own_side() {
    let a = rounds_run(&[50.0, 53.0, 47.5, 51.0, 49.0], &[4.5; 5]);
    let b = rounds_run(&[52.0, 49.0, 54.0, 50.0, 53.0], &[4.5; 5]);
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), Some(0.02));
    let m = null(&cmp);
    let c = m.comparison.as_ref().expect("compared");
    assert_eq!((c.n_a, c.n_b), (5, 5));
    assert!(c.runs_test.is_some());
    assert_eq!(m.verdict, Verdict::NoChange);
    assert!(cmp.sides.a_set.is_empty(), "one run per side");
}

#[test]
fn sets_are_normalised_run_by_run() {
    // The machine's clock moves between runs and rounds and the syscall's time follows it
    // exactly (a fixed 230.9 cycles): after normalising, nothing changed.
    let ghz_a = [4.5, 3.6, 4.2, 4.5, 3.9];
    let ghz_b = [3.6, 3.7, 3.4, 3.6, 3.5];
    let at = |g: &[f64], noise: [f64; 5]| -> Vec<f64> {
        g.iter().zip(noise).map(|(g, n)| 230.9 / g * n).collect()
    };
    let a = rounds_run(&at(&ghz_a, [1.0, 1.004, 0.996, 1.002, 0.998]), &ghz_a);
    let b = rounds_run(&at(&ghz_b, [0.998, 1.0, 1.004, 0.996, 1.002]), &ghz_b);
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), Some(0.05));
    let m = null(&cmp);
    assert!(m.scales_with_clock && m.scaling_basis.starts_with("evidence"));
    assert!(m.judged_normalised);
    assert!(m.normalised_change.expect("probed").abs() < 1e-6);
    assert!(matches!(
        m.verdict,
        Verdict::MachineSlower | Verdict::NoChange
    ));
    assert!(!m.regression);
    let n = m.normalised.as_ref().expect("normalised");
    assert!(n.runs_test.expect("sets").p_value > 0.5, "{n:?}");
}

#[test]
fn stored_noise_bounds_a_single_runs_variance_from_below() {
    use super::sets::{RunNoise, welch_log_with};
    // One value each, ln ratio 0.1, each side's variance 0.05² from the same 10 stored
    // runs: se = 0.05·√2, t = 1.4142, and one estimate of the variance, so df = 9 (two
    // independent estimates would give Welch's 18); two-sided p = 0.1910.
    let noise = Some(RunNoise {
        runs: 10,
        sd_log: 0.05,
    });
    let (t, _) = welch_log_with(&[1.0], &[0.1f64.exp()], (noise, noise)).expect("noise");
    assert!(close(t.t, std::f64::consts::SQRT_2, 1e-6), "{t:?}");
    assert!(close(t.df, 9.0, 1e-9), "{t:?}");
    assert!(close(t.p_value, 0.1910, 2e-3), "{t:?}");
    // Two hosts' histories are two estimates: Welch-Satterthwaite.
    let other = Some(RunNoise {
        runs: 10,
        sd_log: 0.05 + 1e-9,
    });
    let (w, _) = welch_log_with(&[1.0], &[0.1f64.exp()], (noise, other)).expect("noise");
    assert!(close(w.df, 18.0, 1e-4), "{w:?}");
    // Tight rounds (0.1% apart) of one run do not make it more certain than the machine's
    // history says a run is: the stored variance stands for the rounds' smaller own.
    let rounds_a = [1.0, 1.001, 0.999];
    let rounds_b = [1.1, 1.101, 1.099];
    let (alone, _) = welch_log_with(&rounds_a, &rounds_b, (None, None)).expect("rounds");
    let (floored, _) = welch_log_with(&rounds_a, &rounds_b, (noise, noise)).expect("rounds");
    assert!(alone.p_value < 1e-4, "{alone:?}");
    assert!(floored.p_value > 0.1, "{floored:?}");
    // Rounds that spread more than the history (the run was less steady than the stored
    // ones): their own variance and degrees of freedom stand.
    let wide = [1.0, 1.3, 0.8];
    let (with, _) = welch_log_with(&wide, &rounds_b, (noise, None)).expect("rounds");
    let (alone, _) = welch_log_with(&wide, &rounds_b, (None, None)).expect("rounds");
    assert!(close(with.df, alone.df, 1e-9), "{with:?} {alone:?}");
    assert!(with.p_value > 0.3, "{with:?}");
    // One disturbed round of three, within what the stored runs allow, does not move a
    // side judged on its stored noise: its value is the median of its rounds (the mean of
    // the logs would be 2% off here).
    let disturbed = [1.0, 1.0, 1.06];
    let steady = [1.0, 1.0, 1.0];
    let (t, (lo, hi)) = welch_log_with(&disturbed, &steady, (noise, noise)).expect("rounds");
    assert!(
        close(t.t, 0.0, 1e-12) && close(t.p_value, 1.0, 1e-9),
        "{t:?}"
    );
    assert!(lo < 1.0 && hi > 1.0, "{lo} {hi}");
}

/// A stored run of the same host and profile as `run_at`, with the metric at `ns`.
fn stored(ns: f64, i: usize) -> RunRecord {
    run_at(ns, &format!("h{i}"))
}

#[test]
fn one_run_against_one_with_a_history_is_judged_between_runs() {
    // A and B differ by 8% with samples 0.5% apart: on the runs alone, "slower".
    let (a, b) = (run_at(50.0, "a"), run_at(54.0, "b"));
    let opts = CompareOptions::default();
    let alone = compare_sets(&[&a], &[&b], &[], &opts, Some(0.02));
    assert_eq!(null(&alone).verdict, Verdict::Slower);
    assert!(null(&alone).run_noise_a.is_none());
    // The machine's stored runs move by about 6% from one run to the next: no change.
    let noisy: Vec<RunRecord> = [50.0, 56.0, 47.0, 53.0, 49.0, 55.0, 46.5, 52.0]
        .iter()
        .enumerate()
        .map(|(i, &ns)| stored(ns, i))
        .collect();
    let history: Vec<&RunRecord> = noisy.iter().chain([&a, &b]).collect();
    let cmp = compare_sets(&[&a], &[&b], &history, &opts, Some(0.02));
    let m = null(&cmp);
    let noise = m.run_noise_a.expect("eight stored runs");
    assert_eq!(noise.runs, 8, "the compared runs are left out");
    assert!(noise.sd_log > 0.04 && noise.sd_log < 0.09, "{noise:?}");
    assert!(m.comparison.as_ref().expect("compared").runs_test.is_some());
    assert_eq!(m.verdict, Verdict::NoChange);
    assert!(!m.regression);
    // A steady machine (stored runs within 0.4%) keeps the change.
    let steady: Vec<RunRecord> = [50.0, 50.2, 49.9, 50.1, 49.8, 50.0]
        .iter()
        .enumerate()
        .map(|(i, &ns)| stored(ns, i))
        .collect();
    let history: Vec<&RunRecord> = steady.iter().collect();
    let cmp = compare_sets(&[&a], &[&b], &history, &opts, Some(0.02));
    assert_eq!(null(&cmp).verdict, Verdict::Slower);
    assert!(null(&cmp).regression);
}

#[test]
fn history_of_another_host_or_profile_or_too_short_is_not_used() {
    let (a, b) = (run_at(50.0, "a"), run_at(54.0, "b"));
    let mut other_host: Vec<RunRecord> = (0..8).map(|i| stored(50.0 + i as f64, i)).collect();
    for r in &mut other_host {
        r.host.hostname = "elsewhere".into();
    }
    let mut other_profile: Vec<RunRecord> = (0..8).map(|i| stored(50.0 + i as f64, i)).collect();
    for r in &mut other_profile {
        r.config.profile = "thorough".into();
    }
    let short: Vec<RunRecord> = (0..4).map(|i| stored(50.0 + i as f64, i)).collect();
    for history in [&other_host, &other_profile, &short] {
        let h: Vec<&RunRecord> = history.iter().collect();
        let cmp = compare_sets(&[&a], &[&b], &h, &CompareOptions::default(), None);
        let m = null(&cmp);
        assert!(m.run_noise_a.is_none() && m.run_noise_b.is_none(), "{m:?}");
        assert_eq!(m.verdict, Verdict::Slower);
    }
}
