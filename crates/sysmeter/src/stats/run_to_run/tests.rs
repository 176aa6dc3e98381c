//! Unit tests of the run-to-run interval: the history case, the rounds case and the case of
//! neither, each checked against the prediction interval computed here from its definition
//! (mean ± t · s · √(1 + 1/n) of the logs, widened by the within-run half-width in
//! quadrature), not against numbers copied from an output.

use super::*;
use crate::model::fixture::sample_run;
use crate::model::{RoundStats, RunRecord};

/// The within-run half-width on the log scale of the CI `run` gives: its larger side,
/// ln(1 / 0.99) > ln(1.01).
fn within() -> f64 {
    (1.0f64 / 0.99).ln().max(1.01f64.ln())
}

/// Experiment and metric of the fixture the tests move.
const EXP: &str = "os.syscall";
const METRIC: &str = "null (getppid)";

/// The fixture run with id `id`, started at `started` s, whose metric has median `median`
/// and a within-run CI of ±1%.
fn run(id: &str, started: i64, median: f64) -> RunRecord {
    let mut r = sample_run();
    r.id = id.to_string();
    r.started_ns = started * 1_000_000_000;
    let m = metric_mut(&mut r);
    m.summary.median = median;
    m.summary.ci95 = (median * 0.99, median * 1.01);
    m.rounds = None;
    r
}

fn metric_mut(r: &mut RunRecord) -> &mut Metric {
    let res = (r.results.iter_mut()).find(|x| x.id == EXP);
    let res = res.expect("the fixture has os.syscall");
    (res.metrics.iter_mut())
        .find(|m| m.name == METRIC)
        .expect("the fixture has the null call")
}

fn metric(r: &RunRecord) -> &Metric {
    let res = r.results.iter().find(|x| x.id == EXP).expect("os.syscall");
    res.metrics.iter().find(|m| m.name == METRIC).expect("null")
}

/// `got` is the interval of `values` on `basis`: over all of them, its ends those of
/// [`expected`].
fn assert_interval_of(got: &RunToRun, basis: IntervalBasis, values: &[f64]) {
    let (lo, hi) = expected(values, within());
    assert_eq!(got.basis, basis);
    assert_eq!(got.runs, values.len());
    assert!(
        close(got.lo, lo) && close(got.hi, hi),
        "{got:?} vs {lo}–{hi}"
    );
}

/// The expected (lo, hi) from the definition, with a t quantile of its own.
fn expected(values: &[f64], within_half_log: f64) -> (f64, f64) {
    let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
    let n = logs.len() as f64;
    let mean = logs.iter().sum::<f64>() / n;
    let var = logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let t = StudentsT::new(0.0, 1.0, n - 1.0)
        .expect("df > 0")
        .inverse_cdf(0.975);
    let between = t * var.sqrt() * (1.0 + 1.0 / n).sqrt();
    let half = (between * between + within_half_log * within_half_log).sqrt();
    ((mean - half).exp(), (mean + half).exp())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[test]
fn with_enough_stored_runs_the_interval_is_the_hosts_prediction_interval() {
    let medians = [50.0, 52.0, 49.0, 51.5, 53.0, 48.0];
    let this = run("r6", 600, 50.5);
    let stored: Vec<RunRecord> = (medians.iter().enumerate())
        .map(|(i, &m)| run(&format!("r{i}"), 100 * i as i64, m))
        .collect();
    // A newer run, and one of another host, must not count.
    let mut newer = run("r9", 900, 500.0);
    newer.started_ns = this.started_ns + 1;
    let mut other = run("x1", 50, 5.0);
    other.host.hostname = "elsewhere".to_string();
    let mut history: Vec<&RunRecord> = stored.iter().collect();
    history.extend([&newer, &other]);
    let got = run_to_run(&this, EXP, metric(&this), &history).expect("an interval");
    let mut values = vec![50.5];
    values.extend(medians);
    assert_eq!(values.len(), 7);
    assert_interval_of(&got, IntervalBasis::History, &values);
    assert!(
        got.words(metric(&this).unit)
            .contains("this machine, run to run")
    );
    assert!(got.words(metric(&this).unit).ends_with("over 7 runs"));
}

#[test]
fn too_few_stored_runs_fall_back_to_the_rounds() {
    let rounds = [40.0, 42.0, 41.0, 44.0, 40.5];
    let mut this = run("r3", 300, 41.0);
    metric_mut(&mut this).rounds = Some(RoundStats {
        medians: rounds.to_vec(),
        median: 41.0,
        cv: 0.03,
    });
    // Three stored runs + this one: fewer than MIN_HISTORY_RUNS.
    let stored: Vec<RunRecord> = (0..3).map(|i| run(&format!("r{i}"), i, 41.0)).collect();
    let history: Vec<&RunRecord> = stored.iter().collect();
    let got = run_to_run(&this, EXP, metric(&this), &history).expect("an interval");
    assert_interval_of(&got, IntervalBasis::Rounds, &rounds);
    assert!(got.words(metric(&this).unit).ends_with("over 5 rounds"));
}

#[test]
fn without_history_or_rounds_it_is_the_within_run_ci_and_says_so() {
    let this = run("r0", 0, 51.3);
    let m = metric(&this);
    let got = run_to_run(&this, EXP, m, &[]).expect("an interval");
    assert_eq!(got.basis, IntervalBasis::ThisRun);
    assert_eq!((got.lo, got.hi), m.summary.ci95);
    assert!(got.words(m.unit).starts_with("this run only"));
    assert_eq!(got.cell(m.unit), "this run only");
}

#[test]
fn a_metric_that_is_not_a_result_gets_no_interval() {
    let mut this = run("r0", 0, 51.3);
    metric_mut(&mut this).degenerate = Some("mostly zero".to_string());
    assert!(run_to_run(&this, EXP, metric(&this), &[]).is_none());
}

#[test]
fn the_interval_is_never_narrower_than_the_within_run_ci() {
    // Identical stored medians: no run-to-run spread, so the within-run CI is all there is.
    let this = run("r5", 500, 50.0);
    let stored: Vec<RunRecord> = (0..5).map(|i| run(&format!("r{i}"), i, 50.0)).collect();
    let history: Vec<&RunRecord> = stored.iter().collect();
    let got = run_to_run(&this, EXP, metric(&this), &history).expect("an interval");
    let (lo, hi) = metric(&this).summary.ci95;
    assert!(
        got.lo <= lo * (1.0 + 1e-12) && got.hi >= hi * (1.0 - 1e-12),
        "{got:?}"
    );
}

#[test]
fn annotate_fills_every_measured_metric() {
    let mut this = run("r0", 0, 51.3);
    annotate(&mut this, &[]);
    let ok = (this.results.iter()).filter(|r| r.status == Status::Ok);
    for m in ok.flat_map(|r| &r.metrics) {
        assert_eq!(m.run_to_run.is_some(), m.degenerate.is_none(), "{}", m.name);
    }
}
