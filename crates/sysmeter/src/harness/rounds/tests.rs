//! `rounds::combine` and `Rounds`: pooling, the between-round spread, partial results and
//! the metric findings drawn again from the pooled metrics.

use super::*;
use crate::model::{About, Unit};

fn metric(name: &str, samples: Vec<f64>) -> Metric {
    let summary = stats::summarize(&samples, 1).expect("finite samples");
    Metric {
        cycles: Some(summary),
        samples,
        core_cycles: Some(summary),
        ..Metric::new(name, Unit::Ns, summary)
    }
}

fn round(samples: Vec<f64>, ghz: f64) -> ExperimentResult {
    let mut r = ExperimentResult::new("os.syscall", About::default());
    r.metrics = vec![metric("null", samples)];
    r.elapsed_ns = 10;
    r.machine = Some(crate::model::fixture::steady_machine(ghz));
    r
}

#[test]
fn rounds_pool_samples_and_report_the_between_round_spread() {
    let rounds = vec![
        round(vec![100.0, 101.0, 99.0], 4.0),
        round(vec![120.0, 121.0, 119.0], 3.0),
        round(vec![110.0, 111.0, 109.0], 3.5),
    ];
    let r = combine(&rounds, 3, (Some(2.5), 7), &none).expect("three rounds");
    let m = &r.metrics[0];
    assert_eq!(m.samples.len(), 9);
    let s = m.rounds.as_ref().expect("round statistics");
    assert_eq!(s.medians, [100.0, 120.0, 110.0]);
    assert_eq!(s.median, 110.0);
    assert!((s.cv - 10.0 / 110.0).abs() < 1e-9, "cv {}", s.cv);
    assert_eq!(r.round_machines.len(), 3);
    assert_eq!(r.elapsed_ns, 30);
    // Core cycles use each round's own clock: 400, 360, 385 cycles per op.
    let c = m.core_cycles.expect("core cycles");
    assert_eq!(c.median, 385.0);
    assert_eq!(m.cycles.expect("tsc cycles").median, 110.0 * 2.5);
}

#[test]
fn failed_rounds_do_not_pool_and_a_single_round_is_unchanged() {
    let mut bad = round(vec![1.0, 1.0, 1.0], 4.0);
    bad.status = Status::Failed;
    let good = round(vec![100.0, 101.0, 99.0], 4.0);
    let r = combine(&[bad, good.clone()], 2, (None, 7), &none).expect("one good round");
    assert_eq!(r.metrics, good.metrics);
    assert_eq!(r.round_machines.len(), 2);
    assert!(combine(&[], 1, (None, 7), &none).is_none());
}

#[test]
fn a_pooled_metric_that_is_mostly_zero_is_not_a_result() {
    let zeros = |v: f64| vec![0.0, 0.0, 0.0, 0.0, v, v * 1.1];
    let rounds = vec![round(zeros(5e8), 3.0), round(zeros(4e8), 3.0)];
    let combined = combine(&rounds, 2, (Some(2.6), 1), &none).expect("a result");
    let why = combined.metrics[0]
        .degenerate
        .as_deref()
        .unwrap_or_default();
    assert!(why.contains("8 of 12 samples are 0"), "{why}");
    // Ordinary rounds stay results.
    let ok = vec![
        round(vec![200.0, 201.0, 199.0], 3.0),
        round(vec![202.0, 200.0], 3.0),
    ];
    assert_eq!(
        combine(&ok, 2, (Some(2.6), 1), &none)
            .expect("a result")
            .metrics[0]
            .degenerate,
        None
    );
}

/// An experiment without metric findings.
fn none(_: &[Metric]) -> Vec<Finding> {
    Vec::new()
}

/// A metric finding as `os.task`'s: it quotes the figure of the metric "null".
fn quote_null(metrics: &[Metric]) -> Vec<Finding> {
    metrics
        .iter()
        .filter(|m| m.name == "null")
        .map(|m| {
            Finding::new(
                "null.quoted",
                format!("null {} ns", m.figure()),
                Some(m.figure()),
            )
        })
        .collect()
}

/// A round as the runner makes it: its own findings, then its metric findings.
fn quoted_round(samples: Vec<f64>) -> ExperimentResult {
    let mut r = round(samples, 3.0);
    r.findings
        .push(Finding::new("own", "measured".into(), None));
    let quoted = quote_null(&r.metrics);
    r.findings.extend(quoted);
    r.findings
        .push(Finding::new("machine.moved", "moved".into(), None));
    r
}

#[test]
fn metric_findings_quote_the_pooled_figure_in_place_of_the_last_rounds() {
    let rounds = vec![
        quoted_round(vec![100.0, 101.0, 99.0]),
        quoted_round(vec![120.0, 121.0, 119.0]),
    ];
    let r = combine(&rounds, 2, (None, 7), &quote_null).expect("two rounds");
    let m = &r.metrics[0];
    let keys: Vec<&str> = r.findings.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, ["own", "null.quoted", "machine.moved"], "same place");
    let quoted = &r.findings[1];
    assert_eq!(quoted.value, Some(m.figure()));
    assert_eq!(m.figure(), 110.0, "the median of the round medians");
    assert_eq!(quoted.text, "null 110 ns");
    // Without the hook the finding keeps the last round's figure: what issue 43 saw.
    let stale = combine(&rounds, 2, (None, 7), &none).expect("two rounds");
    assert_eq!(stale.findings[1].value, Some(120.0));
}

#[test]
fn a_metric_finding_whose_pooled_metric_is_not_a_result_is_dropped() {
    let mostly_zero = |v: f64| vec![0.0, 0.0, 0.0, 0.0, v, v * 1.1];
    let rounds = vec![
        quoted_round(mostly_zero(5e8)),
        quoted_round(mostly_zero(4e8)),
    ];
    let quote = |metrics: &[Metric]| {
        let usable: Vec<Metric> = metrics
            .iter()
            .filter(|m| m.degenerate.is_none())
            .cloned()
            .collect();
        quote_null(&usable)
    };
    let r = combine(&rounds, 2, (None, 7), &quote).expect("two rounds");
    assert!(r.metrics[0].degenerate.is_some());
    let keys: Vec<&str> = r.findings.iter().map(|f| f.key.as_str()).collect();
    assert_eq!(keys, ["own", "machine.moved"]);
}

fn partial_of(r: &ExperimentResult) -> Option<&Finding> {
    r.findings.iter().find(|f| f.key == PARTIAL)
}

#[test]
fn a_result_of_fewer_rounds_than_planned_says_so_until_the_last_round() {
    let mut rounds = Rounds::new(2, 3, None, 7);
    let first = rounds
        .add(0, round(vec![100.0, 101.0], 4.0), &none)
        .expect("a result");
    let f = partial_of(first).expect("partial after one round");
    assert_eq!(f.value, Some(1.0));
    assert!(f.text.contains("1 of 3 rounds"), "{}", f.text);
    assert_eq!(first.findings[0].key, PARTIAL, "shown first");
    let mut skipped = ExperimentResult::new("fs.read", About::default());
    skipped.status = Status::Skipped;
    let other = rounds.add(1, skipped, &none).expect("a result");
    assert!(partial_of(other).is_none(), "a skip is no measurement");
    let second = rounds
        .add(0, round(vec![110.0, 111.0], 4.0), &none)
        .expect("a result");
    assert!(partial_of(second).expect("2 of 3").text.contains("2 of 3"));
    assert_eq!(
        second.metrics[0].rounds.as_ref().map(|r| r.medians.len()),
        Some(2)
    );
    let last = rounds
        .add(0, round(vec![120.0, 121.0], 4.0), &none)
        .expect("a result");
    assert!(partial_of(last).is_none(), "{:?}", last.findings);
    let results = rounds.finish();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0].metrics[0].samples.len(), 6);
    assert_eq!(results[1].status, Status::Skipped);
}
