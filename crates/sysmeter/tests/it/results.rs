//! Integration tests of the results commands through the binary: `compare` on synthetic runs
//! with a known slowdown and on stored runs, `export` in every format, `completions`, the
//! committed man page, NO_COLOR and the exit codes (0 success, 1 failure or regression, 2
//! usage error).

use std::path::{Path, PathBuf};

use predicates::prelude::*;
use serde_json::Value;
use sysmeter::model::RunRecord;
use sysmeter::model::fixture::sample_run;
use sysmeter::stats::summarize;

use crate::support::cmd::{refused, usage_error};
use crate::support::sysmeter_db;
use crate::support::{json_of, json_out, sysmeter};

/// Seeded samples around `median` with 3% Gaussian noise and an occasional slow outlier,
/// like real timings. Independent of the code under test (own Box–Muller).
fn timings(n: usize, median: f64, seed: u64) -> Vec<f64> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..n)
        .map(|_| {
            let z =
                (-2.0 * (1.0 - rng.f64()).ln()).sqrt() * (std::f64::consts::TAU * rng.f64()).cos();
            let spike = if rng.f64() < 0.02 { 3.0 } else { 1.0 };
            median * (1.0 + 0.03 * z) * spike
        })
        .collect()
}

/// The fixture run with 200 fresh samples (from `seed`) for every os.syscall metric; the
/// metric named `slow` gets its samples scaled by `factor`.
fn synthetic_run(id: &str, seed: u64, slow: &str, factor: f64) -> RunRecord {
    let mut run = sample_run();
    run.id = id.to_string();
    for (i, m) in run.results[0].metrics.iter_mut().enumerate() {
        let scale = if m.name == slow { factor } else { 1.0 };
        m.samples = timings(200, m.summary.median * scale, seed * 100 + i as u64);
        m.summary = summarize(&m.samples, 1).expect("finite samples");
    }
    run
}

fn write_json(dir: &Path, name: &str, run: &RunRecord) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string(run).expect("serialise")).expect("write run");
    path
}

fn metric<'a>(cmp: &'a Value, name: &str) -> &'a Value {
    cmp["metrics"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["metric"] == name))
        .unwrap_or_else(|| panic!("metric {name} missing in {cmp}"))
}

#[test]
fn a_known_ten_percent_slowdown_is_slower_and_fails_the_gate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write_json(dir.path(), "a.json", &synthetic_run("a", 1, "", 1.0));
    let b = synthetic_run("b", 2, "null (getppid)", 1.10);
    let b = write_json(dir.path(), "b.json", &b);
    let out = sysmeter()
        .arg("compare")
        .args([&a, &b])
        .args(["--fail-above", "5", "--format", "json"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("regression: 1 metric(s)"));
    let cmp = json_of(&out.get_output().stdout);
    let slow = metric(&cmp, "null (getppid)");
    let c = &slow["comparison"];
    assert_eq!(c["verdict"], "slower", "{slow}");
    assert!(c["test"]["p_value"].as_f64().expect("p") < 0.05, "{slow}");
    let change = c["ratio"].as_f64().expect("ratio") - 1.0;
    assert!((change - 0.10).abs() < 0.02, "change {change}");
    let lo = c["ratio_ci95"][0].as_f64().expect("ci low");
    assert!(lo > 1.05, "the whole CI is beyond 5%: {slow}");
    assert_eq!(slow["regression"], true);
    for other in ["function call", "read 1 byte (/dev/zero)"] {
        let m = metric(&cmp, other);
        assert_eq!(m["comparison"]["verdict"], "no_change", "{m}");
        assert_eq!(m["regression"], false);
    }
    assert_eq!(cmp["summary"]["regressions"], 1);
    // The text report says the same to people.
    sysmeter()
        .args(["compare", "--full"])
        .args([&a, &b])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"null \(getppid\).*\+\d+\.\d% \[.*slower").unwrap());
}

#[test]
fn identical_distributions_are_no_change_and_pass_the_gate() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write_json(dir.path(), "a.json", &synthetic_run("a", 3, "", 1.0));
    let b = write_json(dir.path(), "b.json", &synthetic_run("b", 4, "", 1.0));
    let cmp = json_out(
        sysmeter()
            .args(["compare", "--fail-above", "5", "--format", "json"])
            .args([&a, &b]),
    );
    let metrics = cmp["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), 3);
    for m in metrics {
        assert_eq!(m["comparison"]["verdict"], "no_change", "{m}");
        let change = m["comparison"]["ratio"].as_f64().expect("ratio") - 1.0;
        assert!(change.abs() < 0.02, "{m}");
    }
    assert_eq!(cmp["summary"]["no_change"], 3);
    assert!(
        cmp["machine_differences"]
            .as_array()
            .expect("list")
            .is_empty()
    );
}

#[test]
fn compare_reads_standard_input_and_lists_machine_differences_first() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write_json(dir.path(), "a.json", &synthetic_run("a", 5, "", 1.0));
    let mut b = synthetic_run("b", 6, "", 1.0);
    b.host.cpu.model = "Other CPU 9000".into();
    let text = sysmeter()
        .args(["compare", "--full"])
        .arg(&a)
        .arg("-")
        .write_stdin(serde_json::to_string(&b).expect("json"))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    let machine = text.find("Other CPU 9000").expect("CPU difference shown");
    let metrics = text.find("null (getppid)").expect("metric row");
    assert!(machine < metrics, "{text}");
}

/// Runs `bench --quick --only cpu.loop` into `db` and returns the run id.
fn bench_into(db: &Path) -> String {
    let mut bench = sysmeter();
    bench.args([
        "bench", "--quick", "--only", "cpu.loop", "--format", "json", "--db",
    ]);
    json_out(bench.arg(db))["id"]
        .as_str()
        .expect("run id")
        .to_string()
}

#[test]
fn compare_stored_runs_by_reference() {
    let (dir, db) = crate::support::temp_db();
    let first = bench_into(&db);
    let second = bench_into(&db);
    let cmp = compared(&db, ["latest~1", "latest"], [&first, &second]);
    let metrics = cmp["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), 2, "cpu.loop has two metrics: {cmp}");
    assert!(metrics.iter().all(|m| m["experiment"] == "cpu.loop"));
    // A quick run has 2 rounds, and compare's n is the rounds (their spread is the basis).
    assert!(
        metrics
            .iter()
            .all(|m| m["comparison"]["n_a"].as_u64() >= Some(2)),
        "{cmp}"
    );
    // A stored run against a JSON file of itself: nothing changed, p = 1.
    let file = dir.path().join("first.json");
    let shown = sysmeter_db(&db, &["show", &first, "--format", "json"])
        .assert()
        .success();
    std::fs::write(&file, &shown.get_output().stdout).expect("write");
    let out = sysmeter()
        .args(["compare", &first])
        .arg(&file)
        .args(["--fail-above", "0", "--format", "json", "--db"])
        .arg(&db)
        .assert()
        .success();
    let cmp = json_of(&out.get_output().stdout);
    for m in cmp["metrics"].as_array().expect("metrics") {
        assert_eq!(m["comparison"]["ratio"], 1.0, "{m}");
        assert_eq!(m["comparison"]["test"]["p_value"], 1.0, "{m}");
    }
}

#[test]
fn compare_bad_input_is_a_usage_error() {
    let (dir, db) = crate::support::temp_db();
    let a = write_json(dir.path(), "a.json", &sample_run());
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "[1, 2]").expect("write");
    let cases: [(Vec<&std::ffi::OsStr>, &str); 5] = [
        (vec!["nope".as_ref(), a.as_os_str()], "no run 'nope'"),
        (
            vec![a.as_os_str(), "missing.json".as_ref()],
            "cannot read missing.json",
        ),
        (
            vec![a.as_os_str(), junk.as_os_str()],
            "is not a sysmeter run record",
        ),
        (vec!["-".as_ref(), "-".as_ref()], "cannot both be `-`"),
        (
            vec![a.as_os_str(), a.as_os_str(), "--threshold=-3".as_ref()],
            "not a percentage",
        ),
    ];
    for (args, message) in cases {
        refused(
            sysmeter().arg("compare").args(&args).arg("--db").arg(&db),
            2,
            &[message],
        );
    }
    // Nothing in common cannot pass a CI gate silently.
    let mut other = sample_run();
    other.results.retain(|r| r.id != "os.syscall");
    let other = write_json(dir.path(), "other.json", &other);
    refused(
        sysmeter()
            .arg("compare")
            .args([&a, &other])
            .args(["--fail-above", "5"]),
        2,
        &["share no metric"],
    );
    sysmeter()
        .arg("compare")
        .args([&a, &other])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "No metric is measured in both runs",
        ));
}

/// `dir/runs.db` holding the sample run as bench runs `b1`, `b2` and then a scale run `s1`.
fn db_of_two_kinds(dir: &Path) -> PathBuf {
    let db = dir.join("runs.db");
    let mut store = sysmeter::store::Store::open(&db).expect("open db");
    let kinds = [
        ("b1", sysmeter::model::RunKind::Bench),
        ("b2", sysmeter::model::RunKind::Bench),
        ("s1", sysmeter::model::RunKind::Scale),
    ];
    for (i, (id, kind)) in kinds.into_iter().enumerate() {
        let mut run = sample_run();
        run.id = id.into();
        run.kind = kind;
        run.started_ns += i as i64 * 1_000_000_000;
        run.finished_ns = run.finished_ns.map(|f| f + i as i64 * 1_000_000_000);
        store.save_run(&run).expect("store");
    }
    db
}

/// A `scale` run and a `locks` run share no metric: `compare` refuses them with the fix
/// (exit 2) instead of "0 slower, 0 faster, 0 no change"; `latest:KIND` finds the latest
/// run of a kind past a newer run of another.
#[test]
fn compare_refuses_two_kinds_and_latest_can_be_asked_by_kind() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = db_of_two_kinds(dir.path());
    usage_error(
        &mut sysmeter_db(&db, &["compare", "latest~1", "latest"]),
        &[
            "run b2 is a bench run and run s1 a scale run: compare needs runs of one kind",
            "`sysmeter compare latest:bench~1 latest:bench`",
        ],
    );
    compared(&db, ["latest:bench~1", "latest:bench"], ["b1", "b2"]);
    let shown = sysmeter_db(&db, &["show", "latest:scale", "--format", "json"])
        .assert()
        .success();
    assert_eq!(json_of(&shown.get_output().stdout)["id"], "s1");
    refused(
        sysmeter().args(["show", "latest:nope", "--db"]).arg(&db),
        2,
        &["`latest:KIND`"],
    );
}

/// `compare A B --format json` on `db` (it must succeed), checked to have compared the runs
/// `ids`; the comparison.
fn compared(db: &std::path::Path, refs: [&str; 2], ids: [&str; 2]) -> serde_json::Value {
    let out = sysmeter()
        .args(["compare", refs[0], refs[1], "--format", "json", "--db"])
        .arg(db)
        .assert()
        .success();
    let cmp = json_of(&out.get_output().stdout);
    assert_eq!(
        (cmp["a"]["id"].as_str(), cmp["b"]["id"].as_str()),
        (Some(ids[0]), Some(ids[1]))
    );
    cmp
}
