//! Store tests on in-memory databases: exact round trips, listings, run references. The
//! fixture here is shared with `tests_file` (file databases, concurrency, bad files).

use super::*;
use crate::model::*;

/// A summary with distinct, non-round values so a swapped column would show.
pub(super) fn summary(base: f64, n: usize) -> Summary {
    Summary {
        n,
        min: base,
        p5: base + 0.125,
        median: base + 1.5,
        mean: base + 1.625,
        p95: base + 3.25,
        p99: base + 4.75,
        max: base + 9.0,
        stddev: 0.734_375,
        cv: 0.045_678_9,
        ci95: (base + 1.25, base + 1.875),
        outliers: 2,
    }
}

fn metric(name: &str, base: f64, samples: Vec<f64>) -> Metric {
    let n = samples.len();
    Metric {
        cycles: Some(summary(base * 3.1, n)),
        subtracted_overhead_ns: 18.062_5,
        ops_per_sample: 4096,
        note: Some("system call".to_string()),
        samples,
        ..Metric::new(name, Unit::Ns, summary(base, n))
    }
}

/// An `ok` result with two metrics, a series, estimates and findings.
fn ok_result() -> ExperimentResult {
    let samples = |base: f64| (0..50).map(|i| base + f64::from(i) * 0.37).collect();
    let mut bandwidth = metric("copy 64 MiB", 1.2e10, samples(1.2e10));
    bandwidth.unit = Unit::BytesPerSec;
    bandwidth.cycles = None;
    bandwidth.note = None;
    ExperimentResult {
        machine: None,
        round_machines: Vec::new(),
        session: None,
        id: "os.syscall".to_string(),
        status: Status::Ok,
        about: About {
            title: "System call".to_string(),
            measures: "cost of a null system call".to_string(),
            methodology: "getppid in a loop; timer and loop overhead subtracted".to_string(),
            references: vec!["lmbench lat_syscall".to_string()],
        },
        estimates: vec![Estimate {
            metric: "null (getppid)".to_string(),
            value: 85.0,
            unit: Unit::Ns,
            basis: "entry + exit with mitigations".to_string(),
        }],
        metrics: vec![metric("null (getppid)", 92.5, samples(92.5)), bandwidth],
        series: vec![Series {
            name: "latency".to_string(),
            x_label: "working set".to_string(),
            x_unit: Unit::Bytes,
            y_unit: Unit::Ns,
            points: vec![SeriesPoint {
                x: 32768.0,
                summary: summary(1.25, 30),
                cycles: None,
            }],
        }],
        findings: vec![Finding {
            key: "syscall_vs_call_ratio".to_string(),
            text: "A system call costs 60 function calls.".to_string(),
            value: Some(60.25),
        }],
        skip: None,
        error: None,
        elapsed_ns: 1_234_567_890,
        artifacts: vec![crate::model::Artifact {
            name: "folded".into(),
            media_type: "text/plain".into(),
            content: "main;work 7\n".into(),
        }],
    }
}

fn skipped_result() -> ExperimentResult {
    ExperimentResult {
        machine: None,
        round_machines: Vec::new(),
        session: None,
        id: "cpu.perf".to_string(),
        status: Status::Skipped,
        about: About::default(),
        estimates: vec![],
        metrics: vec![],
        series: vec![],
        findings: vec![],
        skip: Some(Skip {
            reason: "perf events are not allowed".to_string(),
            hint: "sysctl kernel.perf_event_paranoid=1".to_string(),
        }),
        error: None,
        elapsed_ns: 3_000,
        artifacts: Vec::new(),
    }
}

/// A finished bench run with two results (one ok, one skipped).
pub(super) fn fixture_run(id: &str, started_ns: i64) -> RunRecord {
    RunRecord {
        schema: SCHEMA_VERSION,
        id: id.to_string(),
        kind: RunKind::Bench,
        started_ns,
        finished_ns: Some(started_ns + 42_000_000_000),
        interrupted: false,
        tool_version: "0.1.0".to_string(),
        host: HostInfo {
            hostname: "testbox".to_string(),
            arch: "x86_64".to_string(),
            kernel: "6.8.0".to_string(),
            ..HostInfo::default()
        },
        config: RunConfig {
            profile: "quick".to_string(),
            cpu: Some(1),
            selected: vec!["os.syscall".to_string(), "cpu.perf".to_string()],
            target_ci_width: 0.02,
            calibration: Some(Calibration {
                clock: "CLOCK_MONOTONIC (vDSO)".to_string(),
                timer_overhead_ns: 17.5,
                tsc_ghz: Some(2.994_5),
                ..Calibration::default()
            }),
            seed: 7,
        },
        results: vec![ok_result(), skipped_result()],
    }
}

/// Writes `run` the way a bench does: begin, each result, finish.
pub(super) fn store_run(store: &mut Store, run: &RunRecord) {
    store.begin_run(run).expect("begin_run");
    for (seq, r) in run.results.iter().enumerate() {
        put(store, (&run.id, seq), r, Put::New);
    }
    store
        .finish_run(&run.id, run.finished_ns, run.interrupted)
        .expect("finish_run");
}

/// Stores `r` as result `at` (run id, sequence number), which must succeed.
pub(super) fn put(store: &mut Store, at: (&str, usize), r: &ExperimentResult, how: Put) {
    store.put_result(at, r, how).expect("put_result");
}

/// `fixture_run(id, 1)` begun in `store` as a bench begins it: no end yet.
pub(super) fn begin_fixture_run(store: &mut Store, id: &str) -> RunRecord {
    let mut run = fixture_run(id, 1);
    run.finished_ns = None;
    store.begin_run(&run).expect("begin");
    run
}

/// Stores `run` as a bench does in a new in-memory store; it must load back equal.
pub(super) fn assert_round_trip(run: &RunRecord) {
    let mut store = Store::open_in_memory().expect("open");
    store_run(&mut store, run);
    assert_eq!(store.load_run(&run.id).expect("load"), *run);
}

#[test]
fn round_trip_is_exact() {
    assert_round_trip(&fixture_run(
        "20261122T183242Z-3f9a",
        1_763_836_362_000_000_000,
    ));
}

#[test]
fn a_lower_bound_stays_a_lower_bound() {
    let mut run = fixture_run("20261122T183242Z-3f9b", 1_763_836_362_000_000_000);
    run.results[0].metrics[0].at_least = true;
    assert_round_trip(&run);
}

/// Measured floats whose shortest decimal form serde_json's default (fast) parser reads back
/// one ulp off; they go through the JSON columns (cycles, series, config, findings).
#[test]
fn round_trip_is_exact_for_awkward_floats() {
    let x = 9.368_651_318_839_927e-6;
    let mut run = fixture_run("r1", 1);
    run.config.target_ci_width = x;
    let result = &mut run.results[0];
    result.findings[0].value = Some(x);
    result.series[0].points[0].summary.mean = x;
    if let Some(cycles) = result.metrics[0].cycles.as_mut() {
        cycles.median = x;
    }
    assert_round_trip(&run);
}

#[test]
fn round_trip_keeps_nan_statistics() {
    let mut store = Store::open_in_memory().expect("open");
    let mut run = fixture_run("r1", 1);
    run.results[0].metrics[0].summary.cv = f64::NAN;
    run.results[0].metrics[0].samples = vec![f64::INFINITY, -0.0, 1e-310];
    store_run(&mut store, &run);
    let back = store.load_run("r1").expect("load");
    let m = &back.results[0].metrics[0];
    assert!(m.summary.cv.is_nan());
    assert_eq!(m.samples[0], f64::INFINITY);
    assert!(m.samples[1] == 0.0 && m.samples[1].is_sign_negative());
    assert_eq!(m.samples[2], 1e-310);
}

#[test]
fn results_come_back_in_seq_order_with_their_own_metrics() {
    let mut store = Store::open_in_memory().expect("open");
    let run = begin_fixture_run(&mut store, "r1");
    // Written out of order: the loaded order follows seq, not insertion.
    put(&mut store, ("r1", 5), &run.results[1], Put::New);
    put(&mut store, ("r1", 2), &run.results[0], Put::New);
    let back = store.load_run("r1").expect("load");
    assert_eq!(back.results, run.results);
    assert_eq!(back.finished_ns, None);
}

#[test]
fn list_runs_newest_first_with_counts() {
    let mut store = Store::open_in_memory().expect("open");
    for (id, t) in [("a", 10), ("c", 30), ("b", 20)] {
        store_run(&mut store, &fixture_run(id, t));
    }
    let mut failed = fixture_run("d", 40);
    failed.finished_ns = None;
    failed.results[1].status = Status::Failed;
    failed.results[1].error = Some("boom".to_string());
    store.begin_run(&failed).expect("begin");
    put(&mut store, ("d", 0), &failed.results[1], Put::New);

    let list = store.list_runs(10).expect("list");
    let ids: Vec<_> = list.iter().map(|l| l.id.as_str()).collect();
    assert_eq!(ids, ["d", "c", "b", "a"]);
    let c = &list[1];
    assert_eq!((c.experiments, c.ok, c.skipped, c.failed), (2, 1, 1, 0));
    assert_eq!(c.kind, "bench");
    assert_eq!(c.hostname, "testbox");
    assert_eq!(c.tool_version, "0.1.0");
    assert_eq!(c.finished_ns, Some(30 + 42_000_000_000));
    let d = &list[0];
    assert_eq!((d.experiments, d.ok, d.skipped, d.failed), (1, 0, 0, 1));
    assert_eq!(d.finished_ns, None);
    assert_eq!(store.list_runs(2).expect("list").len(), 2);
    assert!(
        Store::open_in_memory()
            .expect("open")
            .list_runs(5)
            .expect("list")
            .is_empty()
    );
}

#[test]
fn exact_id_wins_over_longer_ids_it_prefixes() {
    let mut store = Store::open_in_memory().expect("open");
    store.begin_run(&fixture_run("abc", 1)).expect("begin");
    store.begin_run(&fixture_run("abcd", 2)).expect("begin");
    assert_eq!(store.load_run("abc").expect("load").id, "abc");
}

#[test]
fn run_not_found_message_names_reference_path_and_fix() {
    let store = Store::open_in_memory().expect("open");
    let msg = store.load_run("xyz").expect_err("empty store").to_string();
    assert_eq!(
        msg,
        "no run 'xyz' in :memory:; `sysmeter history` lists the runs"
    );
}

#[test]
fn writing_to_an_unknown_run_is_run_not_found() {
    let mut store = Store::open_in_memory().expect("open");
    let err = store.put_result(("ghost", 0), &skipped_result(), Put::New);
    assert!(
        matches!(err, Err(StoreError::RunNotFound { .. })),
        "{err:?}"
    );
    let err = store.finish_run("ghost", Some(1), false);
    assert!(
        matches!(err, Err(StoreError::RunNotFound { .. })),
        "{err:?}"
    );
}

#[test]
fn duplicate_run_and_result_are_refused() {
    let mut store = Store::open_in_memory().expect("open");
    let run = fixture_run("r1", 1);
    store_run(&mut store, &run);
    let err = store.begin_run(&run).expect_err("duplicate run");
    assert!(err.to_string().contains("cannot store run r1"), "{err}");
    let err = store
        .put_result(("r1", 0), &run.results[0], Put::New)
        .expect_err("dup result");
    assert!(matches!(err, StoreError::Sql { .. }), "{err:?}");
    // The failed transaction left the stored run untouched.
    assert_eq!(store.load_run("r1").expect("load"), run);
}

#[test]
fn finish_run_records_interruption() {
    let mut store = Store::open_in_memory().expect("open");
    begin_fixture_run(&mut store, "r1");
    store.finish_run("r1", None, true).expect("finish");
    let back = store.load_run("r1").expect("load");
    assert!(back.interrupted);
    assert_eq!(back.finished_ns, None);
    assert!(store.list_runs(1).expect("list")[0].interrupted);
}

#[test]
fn samples_blob_is_little_endian_f64() {
    let blob = rows::samples_to_blob(&[1.0, -2.5]);
    assert_eq!(&blob[..8], &1.0f64.to_le_bytes());
    assert_eq!(rows::blob_to_samples(&blob), Some(vec![1.0, -2.5]));
    assert_eq!(rows::blob_to_samples(&blob[..9]), None);
    assert_eq!(rows::blob_to_samples(&[]), Some(vec![]));
}

#[test]
fn damaged_json_is_a_decode_error() {
    let mut store = Store::open_in_memory().expect("open");
    store_run(&mut store, &fixture_run("r1", 1));
    store
        .sqlite_conn()
        .execute("UPDATE results SET about_json = '{' WHERE seq = 1", [])
        .expect("damage");
    let msg = store.load_run("r1").expect_err("damaged").to_string();
    assert!(
        msg.contains("run r1 in :memory: has an unreadable about_json of result 1 (cpu.perf)"),
        "{msg}"
    );
}
