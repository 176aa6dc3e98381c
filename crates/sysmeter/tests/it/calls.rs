//! `sysmeter calls` on fixture programs built by the test (tests/fixtures/programs/calls_*.c)
//! with known library calls: exact counts on a 4-thread BIND_NOW (`-z now`) program, a forked
//! child with and without `-f`, storing and showing the `calls` run, the priced finding with
//! and without a stored bench of this host, and the usage error of a pattern that matches
//! nothing (attaching: calls_attach.rs). Uprobes need root (capability `root`); fixtures
//! need a C compiler (`cc`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::cmd::{calls_ok, usage_error};
use crate::support::needs::root;
use crate::support::sysmeter_db;
use crate::support::{compile_fixture, need, stdout_of, sysmeter};

/// Builds the counting fixture with BIND_NOW, as hardened distributions do.
pub(crate) fn bind_now_fixture(dir: &Path) -> Result<PathBuf, crate::support::skip::Missing> {
    compile_fixture("calls_counts", dir, &["-pthread", "-Wl,-z,now"])
}

/// The BIND_NOW fixture where uprobes may be defined (root): its path.
fn uprobed_fixture(dir: &Path) -> Result<String, crate::support::skip::Missing> {
    root("define uprobes")?;
    let bin = bind_now_fixture(dir)?;
    Ok(bin.to_string_lossy().into_owned())
}

/// Runs `sysmeter calls ARGS -- CMD…` with the JSON run written to a file; returns the run.
fn calls_json(args: &[&str], cmd: &[&str], dir: &Path) -> Value {
    // These tests are of the uprobe backend; calls_inproc.rs has the in-process one's.
    calls_ok(&["--backend", "uprobe"], args, cmd, dir).0
}

/// (count, note) of function `name` in a calls run.
pub(crate) fn count_of(run: &Value, name: &str) -> Option<(u64, String)> {
    let m = run["results"][0]["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)?;
    Some((m["summary"]["n"].as_u64()?, m["note"].as_str()?.to_string()))
}

fn counts(run: &Value) -> [u64; 4] {
    ["malloc", "free", "strlen", "time"].map(|f| count_of(run, f).map_or(0, |c| c.0))
}

const SELECT: [&str; 2] = ["-e", "malloc,free,strlen,time"];

#[test]
fn bind_now_threads_give_exact_counts_from_every_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(uprobed_fixture(dir.path()));
    let args = [SELECT[0], SELECT[1], "--no-store"];
    let run = calls_json(&args, &[&bin, "2000"], dir.path());
    assert_eq!(counts(&run), [8000, 8000, 8000, 800], "{run:#}");
    let (_, note) = count_of(&run, "strlen").expect("strlen");
    assert!(note.contains("threads: 4"), "{note}");
    let findings = run["results"][0]["findings"].to_string();
    assert!(findings.contains("probed call cost"), "{findings}");
}

#[test]
fn a_stripped_program_is_counted_through_its_dynamic_symbols() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(uprobed_fixture(dir.path()));
    let stripped = std::process::Command::new("strip").arg(&bin).status();
    assert!(
        stripped.is_ok_and(|s| s.success()),
        "strip (binutils, with cc) failed"
    );
    let run = calls_json(
        &[SELECT[0], SELECT[1], "--no-store"],
        &[&bin, "100"],
        dir.path(),
    );
    assert_eq!(counts(&run), [400, 400, 400, 40], "{run:#}");
}

#[test]
fn a_forked_child_is_counted_with_f_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(uprobed_fixture(dir.path()));
    let cmd = [bin.as_str(), "1000", "fork"];
    let with_f = calls_json(
        &[SELECT[0], SELECT[1], "--no-store", "-f"],
        &cmd,
        dir.path(),
    );
    assert_eq!(counts(&with_f), [5000, 5000, 5000, 500], "{with_f:#}");
    let note = count_of(&with_f, "malloc").expect("malloc").1;
    assert!(note.contains("threads: 5"), "{note}");
    let without = calls_json(&[SELECT[0], SELECT[1], "--no-store"], &cmd, dir.path());
    assert_eq!(counts(&without), [4000, 4000, 4000, 400], "{without:#}");
}

#[test]
fn a_calls_run_is_stored_shown_and_priced_once_a_bench_is_stored() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(uprobed_fixture(dir.path()));
    let db = dir.path().join("s.db");
    let db = db.to_string_lossy().into_owned();
    let unpriced = calls_json(&["-e", "time", "--db", &db], &[&bin, "100"], dir.path());
    let findings = unpriced["results"][0]["findings"].to_string();
    assert!(findings.contains("bench --only cpu.timer"), "{findings}");
    let shown = stdout_of(sysmeter().args(["show", "latest", "--db", &db]));
    assert!(
        shown.contains("time") && shown.contains("% time"),
        "{shown}"
    );
    let bench = ["bench", "--quick", "--only", "cpu.timer", "--db", &db];
    sysmeter().args(bench).assert().success();
    let priced = calls_json(&["-e", "time", "--db", &db], &[&bin, "100"], dir.path());
    let findings = priced["results"][0]["findings"].to_string();
    assert!(findings.contains("cpu.timer \\\"time()\\\""), "{findings}");
    assert!(findings.contains("time was called 40 times"), "{findings}");
    let note = count_of(&priced, "time").expect("time").1;
    assert!(note.contains("cost here"), "{note}");
}

#[test]
fn a_pattern_that_matches_nothing_is_a_usage_error_naming_the_imports() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(bind_now_fixture(dir.path()));
    let calls = ["calls", "--no-store", "-e", "no_such_fn*", "--"];
    usage_error(sysmeter().args(calls).arg(&bin), &["no_such_fn*", "malloc"]);
}

#[test]
fn a_trace_without_a_stored_bench_names_the_bench_that_would_price_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("s.db");
    let out = dir.path().join("t.json");
    let output = sysmeter_db(&db, &["trace", "--backend", "ptrace", "--format", "json"])
        .arg("--out")
        .arg(&out)
        .args(["--", "true"])
        .output()
        .expect("sysmeter runs");
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("JSON")).expect("valid JSON");
    let priced = run["results"][0]["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["key"] == "priced"))
        .unwrap_or_else(|| panic!("no priced finding: {run:#}"));
    let text = priced["text"].as_str().unwrap_or_default();
    assert!(text.contains("bench --only os.syscall"), "{text}");
}
