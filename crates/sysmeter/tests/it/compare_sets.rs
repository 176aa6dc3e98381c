//! `sysmeter compare` through the binary with machine-state probes and sets of runs: a
//! slower machine is not a regression after normalising, sets are tested with the noise
//! between runs, and bad set arguments exit 2 with the fix.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sysmeter::model::fixture::sample_run;
use sysmeter::model::{MachineState, RunRecord};
use sysmeter::stats::summarize;

use crate::support::{json_of, json_out, stderr_of, stdout_of, sysmeter};

fn state(ghz: f64) -> MachineState {
    sysmeter::model::fixture::steady_machine(ghz)
}

/// The fixture with os.syscall probed at `ghz` and its samples scaled by `factor`.
fn run(id: &str, ghz: f64, factor: f64) -> RunRecord {
    let mut run = sample_run();
    run.id = id.to_string();
    let result = &mut run.results[0];
    result.machine = Some(state(ghz));
    for m in &mut result.metrics {
        m.samples.iter_mut().for_each(|s| *s *= factor);
        m.summary = summarize(&m.samples, 1).expect("finite samples");
    }
    run
}

fn write(dir: &Path, run: &RunRecord) -> PathBuf {
    let path = dir.join(format!("{}.json", run.id));
    std::fs::write(&path, serde_json::to_string(run).expect("serialise")).expect("write run");
    path
}

fn list(paths: &[PathBuf]) -> String {
    let v: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    v.join(",")
}

fn null(cmp: &Value) -> &Value {
    cmp["metrics"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["metric"] == "null (getppid)"))
        .unwrap_or_else(|| panic!("null (getppid) missing in {cmp}"))
}

#[test]
fn compare_a_slower_machine_is_no_regression_after_normalising() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write(dir.path(), &run("a", 4.5, 1.0));
    let b = write(dir.path(), &run("b", 3.6, 1.25));
    let cmp = json_out(
        sysmeter()
            .args(["compare", "--fail-above", "5", "--format", "json"])
            .args([&a, &b]),
    );
    assert!((cmp["machine_ratio"].as_f64().expect("ratio") - 0.8).abs() < 1e-9);
    let m = null(&cmp);
    assert_eq!(m["comparison"]["verdict"], "slower", "{m}");
    assert_eq!(m["verdict"], "machine_slower", "{m}");
    assert!(m["normalised_change"].as_f64().expect("normalised").abs() < 1e-9);
    assert_eq!(m["regression"], false);
    let text = stdout_of(sysmeter().args(["compare", "--full"]).args([&a, &b]));
    assert!(text.contains("Machine speed B/A: 0.80"), "{text}");
    assert!(
        text.contains("machine slower; no change after normalising"),
        "{text}"
    );
    // The same slowdown without the machine's: a regression.
    let c = write(dir.path(), &run("c", 4.5, 1.25));
    let err = stderr_of(
        sysmeter()
            .arg("compare")
            .args([&a, &c])
            .args(["--fail-above", "5"]),
        1,
    );
    assert!(err.contains("regression"), "{err}");
}

#[test]
fn compare_sets_use_the_noise_between_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let side = |prefix: &str, factors: [f64; 3]| -> Vec<PathBuf> {
        (0..3)
            .map(|i| write(dir.path(), &run(&format!("{prefix}{i}"), 4.5, factors[i])))
            .collect()
    };
    let a = side("a", [1.0, 1.06, 0.95]);
    let b = side("b", [1.04, 0.98, 1.08]);
    // One pair alone: +4% with tight samples fails a 2% gate.
    sysmeter()
        .arg("compare")
        .args([&a[0], &b[0]])
        .args(["--fail-above", "2"])
        .assert()
        .code(1);
    let out = sysmeter()
        .args(["compare", &list(&a), &list(&b)])
        .args(["--fail-above", "2", "--format", "json"])
        .assert()
        .success();
    let cmp = json_of(&out.get_output().stdout);
    let m = null(&cmp);
    assert_eq!(m["verdict"], "no_change", "{m}");
    let runs = &m["comparison"]["runs_test"];
    assert_eq!(
        (runs["runs_a"].as_u64(), runs["runs_b"].as_u64()),
        (Some(3), Some(3))
    );
    assert!(runs["p_value"].as_f64().expect("p") > 0.05, "{m}");
    assert_eq!(cmp["a_set"].as_array().expect("set").len(), 3);
    let text = stdout_of(sysmeter().args(["compare", &list(&a), &list(&b)]));
    assert!(text.contains("A is a set of 3 runs: a0, a1, a2."), "{text}");
    assert!(
        text.contains("sets: p and CI from a Welch t-test"),
        "{text}"
    );
}

#[test]
fn compare_refuses_bad_sets_with_the_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let a = write(dir.path(), &run("a", 4.5, 1.0));
    let b = write(dir.path(), &run("b", 4.5, 1.0));
    let pair = list(&[a.clone(), b.clone()]);
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["-".into(), pair.clone()],
            "cannot be used when comparing sets",
        ),
        (
            vec![format!("{},", a.display()), b.display().to_string()],
            "empty run reference",
        ),
        (
            vec![list(&[a.clone(), a.clone()]), pair.clone()],
            "appears twice in set A",
        ),
        (
            vec![
                format!("{},{}/missing.json", a.display(), dir.path().display()),
                pair,
            ],
            "cannot read",
        ),
    ];
    for (args, message) in cases {
        let err = stderr_of(sysmeter().arg("compare").args(&args).write_stdin("{}"), 2);
        assert!(err.contains(message), "{args:?}: {err}");
    }
}

#[test]
fn compare_of_stored_runs_uses_the_hosts_history_unless_told_not_to() {
    // Eight stored runs whose null syscall moves by about 6% from run to run, then A and a
    // B 8% slower than A: within B's samples that is a clear slowdown, within the
    // machine's history it is not.
    let (dir, db) = crate::support::temp_db();
    let factors = [1.0, 1.06, 0.95, 1.03, 0.98, 1.07, 0.94, 1.02, 1.0, 1.08];
    let ids = ["h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "a", "b"];
    let files: Vec<PathBuf> = (ids.iter().zip(factors))
        .map(|(id, f)| write(dir.path(), &run(id, 4.5, f)))
        .collect();
    let with_db = |cmd: &str, db: &Path| {
        let mut c = sysmeter();
        c.args([cmd, "--db"]).arg(db);
        c
    };
    with_db("import", &db).args(&files).assert().success();
    let compare = |extra: &[&str]| {
        let mut c = with_db("compare", &db);
        let out = c.args(["a", "b", "--format", "json"]).args(extra).assert();
        json_of(&out.success().get_output().stdout)
    };
    let with = compare(&[]);
    let m = null(&with);
    assert_eq!(
        m["run_noise_a"]["runs"], 8,
        "the compared runs are left out: {m}"
    );
    assert!(m["comparison"]["runs_test"].is_object(), "{m}");
    assert_eq!(m["verdict"], "no_change", "{m}");
    let alone = compare(&["--no-history"]);
    let m = null(&alone);
    assert!(m.get("run_noise_a").is_none(), "{m}");
    assert_eq!(m["verdict"], "slower", "{m}");
    let text = stdout_of(with_db("compare", &db).args(["a", "b"]));
    assert!(text.contains("history: p and CI"), "{text}");
    assert!(text.contains("up to 8 stored runs"), "{text}");
    // Two JSON files: the database is not opened (not even created), so no history.
    let never = dir.path().join("never.db");
    let files_only = stdout_of(with_db("compare", &never).args([&files[8], &files[9]]));
    assert!(!files_only.contains("history:"), "{files_only}");
    assert!(
        !never.exists(),
        "compare of two files created {}",
        never.display()
    );
}
