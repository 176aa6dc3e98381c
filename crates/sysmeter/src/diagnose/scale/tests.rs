//! Unit tests of the parts of `scale` that need no process: configuration checks, the run
//! order, and the analysis of synthetic runs.

use super::*;
use crate::model::Status;

fn config(command: &[&str], sizes: &[u64]) -> ScaleConfig {
    ScaleConfig {
        command: command.iter().map(|s| s.to_string()).collect(),
        sizes: sizes.to_vec(),
        repeat: 3,
        warmup: 1,
        timeout: None,
        seed: 7,
        show_output: false,
        predict: vec![],
        basis: TimeBasis::Wall,
        stat: FitStat::Median,
    }
}

/// Runs of t = f(N) ns (CPU time 90% of it), `repeat` per size, ±2% alternating.
fn runs(sizes: &[u64], repeat: usize, f: impl Fn(f64) -> f64) -> Vec<RunSample> {
    let mut out = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        for r in 0..repeat {
            let t = f(n as f64) * (1.0 + 0.02 * (r as f64 - 1.0));
            out.push(RunSample {
                size: n,
                order: i * repeat + r,
                wall_ns: t,
                user_ns: 0.8 * t,
                system_ns: 0.1 * t,
                max_rss_kib: 1000,
            });
        }
    }
    out
}

#[test]
fn the_placeholder_is_required_and_replaced_everywhere() {
    let cfg = config(&["./prog", "--size={n}", "{n}"], &[1, 2, 3]);
    assert_eq!(cfg.validate(), Ok(()));
    assert_eq!(cfg.argv(42), vec!["./prog", "--size=42", "42"]);
    assert_eq!(cfg.command_line(), "./prog --size={n} {n}");
    let e = config(&["./prog", "100"], &[1, 2, 3])
        .validate()
        .expect_err("no {n}");
    assert!(e.contains("{n}"), "{e}");
    let e = config(&["./prog", "{n}"], &[1, 2])
        .validate()
        .expect_err("2 sizes");
    assert!(e.contains("at least 3"), "{e}");
    assert!(config(&[], &[1, 2, 3]).validate().is_err());
}

#[test]
fn the_plan_runs_every_size_repeat_times_in_a_seeded_order() {
    let sizes = [10, 20, 30, 40];
    let a = plan(&sizes, 5, 1);
    assert_eq!(a.len(), 20);
    for n in sizes {
        assert_eq!(a.iter().filter(|&&x| x == n).count(), 5);
    }
    assert_eq!(a, plan(&sizes, 5, 1), "same seed, same order");
    assert_ne!(a, plan(&sizes, 5, 2), "another seed, another order");
    let mut sorted = a.clone();
    sorted.sort_unstable();
    assert_ne!(a, sorted, "shuffled");
}

#[test]
fn synthetic_linear_runs_give_series_metrics_and_findings() {
    let sizes: Vec<u64> = (0..8).map(|i| 1000 << i).collect();
    let mut cfg = config(&["./prog", "{n}"], &sizes);
    cfg.predict = vec![1_000_000];
    let measured = Measured {
        runs: runs(&sizes, 3, |n| 50.0 * n + 1e6),
        planned: 24,
        stop: None,
        ..Measured::default()
    };
    let r = analyse(&cfg, &measured);
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.series.len(), 3);
    assert_eq!(r.series[0].points.len(), 8);
    assert_eq!(r.series[0].points[0].summary.n, 3);
    assert_eq!(r.series[0].points[7].x, 128_000.0);
    let names: Vec<&str> = r.metrics.iter().map(|m| m.name.as_str()).collect();
    assert!(names.contains(&"best fit O(N): a"), "{names:?}");
    assert!(names.contains(&"nRMS O(N log N)"), "{names:?}");
    assert!(names.contains(&"predicted t(N = 1.00M)"), "{names:?}");
    let a = &r.metrics[0].summary.median;
    assert!((a - 50.0).abs() < 1.0, "a = {a}");
    let keys: Vec<&str> = r.findings.iter().map(|f| f.key.as_str()).collect();
    assert!(keys.contains(&"best_fit"), "{keys:?}");
    assert!(keys.contains(&"no_knee"), "{keys:?}");
    assert!(keys.contains(&"prediction_1000000"), "{keys:?}");
    assert!(keys.contains(&"cpu_share"), "{keys:?}");
    let predicted = r.findings.iter().find(|f| f.key == "prediction_1000000");
    let t = predicted.and_then(|f| f.value).expect("value");
    assert!((t - 51e6).abs() < 1e6, "{t}");
    let csv = &r.artifacts[0];
    assert_eq!(csv.name, "runs.csv");
    assert_eq!(csv.content.lines().count(), 25);
}

#[test]
fn a_cache_step_in_the_runs_is_reported_as_a_knee() {
    // 20 ns per element up to 2048, 100 ns from 4096 on (a working set leaving a cache).
    let sizes: Vec<u64> = (0..10).map(|i| 256 << i).collect();
    let cfg = config(&["./prog", "{n}"], &sizes);
    let per = |n: f64| if n <= 2048.0 { 20.0 } else { 100.0 };
    let measured = Measured {
        runs: runs(&sizes, 3, |n| n * per(n) * 1000.0),
        planned: 30,
        stop: None,
        ..Measured::default()
    };
    let r = analyse(&cfg, &measured);
    let knee = r.findings.iter().find(|f| f.key == "knee").expect("a knee");
    assert_eq!(knee.value, Some(2048.0));
    assert!(
        knee.text.contains("between N = 2048 and 4096"),
        "{}",
        knee.text
    );
    assert!(r.metrics.iter().any(|m| m.name == "knee at N"));
}

#[test]
fn stopped_runs_keep_what_finished() {
    let sizes = [1000, 2000, 4000, 8000];
    let cfg = config(&["./prog", "{n}"], &sizes);
    let mut all = runs(&sizes, 3, |n| 10.0 * n);
    all.truncate(5); // sizes 1000 and 2000 only
    let measured = Measured {
        runs: all.clone(),
        planned: 12,
        stop: Some(Stop::Interrupted),
        ..Measured::default()
    };
    let r = analyse(&cfg, &measured);
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.series[0].points.len(), 2);
    let keys: Vec<&str> = r.findings.iter().map(|f| f.key.as_str()).collect();
    assert!(
        keys.contains(&"interrupted") && keys.contains(&"no_fit"),
        "{keys:?}"
    );
    let failed = Measured {
        runs: all,
        planned: 12,
        stop: Some(Stop::Failed("`./prog 4000` exited with status 3".into())),
        ..Measured::default()
    };
    let r = analyse(&cfg, &failed);
    assert_eq!(r.status, Status::Failed);
    assert!(r.error.as_deref().is_some_and(|e| e.contains("status 3")));
}

#[test]
fn the_record_is_a_scale_run() {
    let sizes = [1000, 2000, 4000];
    let cfg = config(&["./prog", "{n}"], &sizes);
    let measured = Measured {
        runs: runs(&sizes, 3, |n| 10.0 * n),
        planned: 9,
        stop: None,
        ..Measured::default()
    };
    let run = record(&cfg, crate::model::HostInfo::default(), 1, 2, &measured);
    assert_eq!(run.kind, crate::model::RunKind::Scale);
    assert_eq!(run.finished_ns, Some(2));
    assert!(!run.interrupted);
    assert_eq!(run.config.selected, vec!["./prog {n}".to_string()]);
    assert_eq!(run.results.len(), 1);
    assert_eq!(run.results[0].id, "scale");
    let session = run.results[0]
        .session
        .as_ref()
        .expect("a scale result ends a session");
    assert_eq!(
        (session.ended.as_str(), session.exit_code),
        ("finished", None)
    );
    let stopped = Measured {
        stop: Some(Stop::Interrupted),
        ..measured
    };
    let run = record(&cfg, crate::model::HostInfo::default(), 1, 2, &stopped);
    let session = run.results[0]
        .session
        .as_ref()
        .expect("a scale result ends a session");
    assert_eq!(session.ended, "interrupted");
}

#[test]
fn the_fastest_run_can_be_fitted_instead_of_the_median() {
    // Two of three runs at every other size are slowed 30% by interference: the medians
    // zig-zag, the minima lie on the line.
    let sizes: Vec<u64> = (0..8).map(|i| 1000 << i).collect();
    let mut all = runs(&sizes, 3, |n| 50.0 * n + 1e6);
    for r in all
        .iter_mut()
        .filter(|r| (r.size / 1000).trailing_zeros() % 2 == 1)
    {
        if r.order % 3 != 0 {
            r.wall_ns *= 1.3;
        }
    }
    let measured = Measured {
        runs: all,
        planned: 24,
        stop: None,
        ..Measured::default()
    };
    let mut cfg = config(&["./prog", "{n}"], &sizes);
    let nrms = |r: &crate::model::ExperimentResult| {
        let m = r.metrics.iter().find(|m| m.name == "nRMS O(N)");
        m.map(|m| m.summary.median).expect("nRMS O(N)")
    };
    let median = nrms(&analyse(&cfg, &measured));
    cfg.stat = FitStat::Min;
    let min = nrms(&analyse(&cfg, &measured));
    assert!(median > 0.1, "the medians zig-zag: {median}");
    assert!(min < 0.03, "the minima lie on the line: {min}");
}

#[test]
fn a_cache_step_behind_process_start_up_is_a_knee() {
    // Issue 29's Intel guest: `scale_workset` over 256..32768 KiB printed a time per element
    // of 2.5 µs at 1 448 and 18.9 µs at 32 768 — a 7× rise — and "no knee", because the
    // 3 ms of process start-up made t/N fall over the small sizes. Here: that start-up,
    // 0.4 µs per KiB while the set fits, a ramp, then 18.8 µs per KiB.
    let sizes: Vec<u64> = (0..15)
        .map(|i| (256.0 * 2f64.sqrt().powi(i)).round() as u64)
        .collect();
    let per = |n: f64| match n {
        n if n < 5000.0 => 400.0,
        n if n < 8000.0 => 6000.0,
        _ => 18_800.0,
    };
    let measured = Measured {
        runs: runs(&sizes, 4, |n| 3e6 + n * per(n)),
        planned: 60,
        stop: None,
        ..Measured::default()
    };
    let r = analyse(&config(&["./prog", "{n}"], &sizes), &measured);
    let per_element = |n: f64| {
        let points = &r.series[1].points;
        let p = points.iter().find(|p| p.x == n).expect("a size");
        p.summary.median
    };
    // The curve is the one reported: 2.5 µs at 1 448, 18.9 µs at 32 768.
    assert!((per_element(1448.0) / 2500.0 - 1.0).abs() < 0.05);
    assert!((per_element(32768.0) / 18_900.0 - 1.0).abs() < 0.05);
    let knee = r.findings.iter().find(|f| f.key == "knee");
    let keys: Vec<&str> = r.findings.iter().map(|f| f.key.as_str()).collect();
    let at = knee
        .and_then(|f| f.value)
        .unwrap_or_else(|| panic!("{keys:?}"));
    assert!((4000.0..=5800.0).contains(&at), "knee at {at}");
    assert!(r.metrics.iter().any(|m| m.name == "knee at N"));
}
