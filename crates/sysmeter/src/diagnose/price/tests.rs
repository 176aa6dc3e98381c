//! Tests of the pricing: the mapping, the notes, the finding with and without a bench.

use super::*;
use crate::model::{About, Metric, RunConfig, RunKind, Summary, Unit};

fn metric(name: &str, n: usize, median: f64) -> Metric {
    let summary = Summary {
        n,
        mean: median,
        median,
        ..Summary::default()
    };
    Metric::new(name, Unit::Ns, summary)
}

fn bench() -> RunRecord {
    let host = crate::model::fixture::sample_run().host;
    let mut run = RunRecord::new(RunKind::Bench, 0, host, RunConfig::default());
    run.id = "B1".into();
    let mut timer = ExperimentResult::new("cpu.timer", About::default());
    timer.metrics = vec![metric("time()", 100, 2.5)];
    let mut ops = ExperimentResult::new("cpu.ops", About::default());
    ops.metrics = vec![metric("malloc+free 64 B", 100, 20.0)];
    run.results = vec![timer, ops];
    run
}

fn calls() -> ExperimentResult {
    let mut r = ExperimentResult::new("calls", About::default());
    r.metrics = vec![
        metric("time", 2_000_000, 900.0),
        metric("malloc", 1000, 900.0),
        metric("frobnicate", 10, 900.0),
    ];
    r
}

#[test]
fn each_priced_call_gets_its_cost_and_the_finding_names_the_metric() {
    let mut r = calls();
    price(&mut r, Kind::Library, Some(&bench()), Some(1e9));
    let note = r.metrics[0].note.as_deref().unwrap();
    assert!(
        note.contains("5.00 ms") && note.contains("cpu.timer"),
        "{note}"
    );
    assert!(r.metrics[1].note.as_deref().unwrap().contains("10.0 µs"));
    assert!(r.metrics[2].note.is_none(), "no mapping, no price");
    let f = r.findings.iter().find(|f| f.key == "priced").unwrap();
    assert!(f.text.contains("cpu.timer \"time()\""), "{}", f.text);
    assert!(f.text.contains("time was called"), "{}", f.text);
    assert!(f.text.contains("B1"), "{}", f.text);
    assert!(f.text.contains("0.5"), "share of CPU time: {}", f.text);
    assert_eq!(f.value, Some(5e6 + 1e4));
}

#[test]
fn without_a_bench_the_finding_names_the_bench_to_run() {
    let mut r = calls();
    price(&mut r, Kind::Library, None, None);
    let f = r.findings.iter().find(|f| f.key == "priced").unwrap();
    assert!(
        f.text.contains("bench --only cpu.ops,cpu.timer"),
        "{}",
        f.text
    );
    assert!(r.metrics.iter().all(|m| m.note.is_none()));
}

#[test]
fn system_calls_fall_back_to_the_null_call() {
    assert_eq!(
        mapping(Kind::Syscall, "read").map(|m| m.0),
        Some("os.syscall")
    );
    assert_eq!(
        mapping(Kind::Syscall, "clone3").map(|m| m.0),
        Some("os.task")
    );
    assert_eq!(
        mapping(Kind::Syscall, "rt_sigaction").map(|m| m.1),
        Some("null (getppid)")
    );
    assert_eq!(mapping(Kind::Library, "frobnicate"), None);
}
