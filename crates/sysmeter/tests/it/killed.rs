//! A bench killed with SIGKILL (issue 13, items 3 and 4), through the binary: its run is
//! "incomplete (sysmeter did not finish)" in `history` and `show`, which names the missing
//! experiments, and `latest` skips it (it is still found by id); killed in its first of
//! several rounds, it keeps the experiments measured so far, each saying of how many rounds
//! it is; the fs test directory it leaves behind is removed by the next bench, which says so
//! in one line.

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::cmd::quick_bench;
use crate::support::sample::db_with_sample_run;
use crate::support::sysmeter_db;
use crate::support::{json_out, stdout_of, sysmeter};

/// Starts `sysmeter ARGS` in the background, output discarded.
fn start(args: &[impl AsRef<std::ffi::OsStr>], extra: &[&std::ffi::OsStr]) -> Child {
    let mut cmd = crate::support::cmd::std_sysmeter();
    cmd.args(args)
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sysmeter")
}

/// Polls `ready` every 20 ms for up to 60 s; panics when it never holds.
fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn sigkill(mut child: Child) {
    child.kill().expect("SIGKILL");
    child.wait().expect("reap");
}

/// `sysmeter history --format json` of `db`: the stored runs, newest first.
fn history(db: &Path) -> serde_json::Value {
    json_out(&mut sysmeter_db(db, &["history", "--format", "json"]))
}

/// Starts `sysmeter ARGS DB` beside a database in `dir` holding one finished run (the one
/// `latest` must keep naming) and SIGKILLs it once its first experiment is stored: the
/// killed run must be "incomplete" in `history` and skipped by `latest`. The database, the
/// killed run's id and the earlier run's id.
fn killed_bench(dir: &Path, args: &[&str]) -> (PathBuf, String, String) {
    let (db, earlier) = db_with_sample_run(dir);
    let bench = start(args, &[db.as_os_str()]);
    let killed = kill_after_the_first_stored_experiment(bench, &db, &earlier.id);
    assert_incomplete_and_not_latest(&db, &killed, &earlier.id);
    (db, killed, earlier.id)
}

/// Waits until the newest run in `db` is not `earlier` and has an experiment stored, then
/// SIGKILLs `bench`; the killed run's id.
fn kill_after_the_first_stored_experiment(bench: Child, db: &Path, earlier: &str) -> String {
    wait_for("the first stored experiment", || {
        let list = history(db);
        list[0]["id"] != earlier && list[0]["experiments"].as_u64() >= Some(1)
    });
    sigkill(bench);
    let killed = history(db)[0]["id"].as_str().expect("id").to_string();
    assert_ne!(killed, earlier);
    killed
}

/// The killed run is "incomplete" in `history` and `latest` skips it.
fn assert_incomplete_and_not_latest(db: &Path, killed: &str, earlier: &str) {
    let listed = stdout_of(sysmeter().args(["history", "--db"]).arg(db));
    let row = listed
        .lines()
        .find(|l| l.contains(killed))
        .expect("killed run listed");
    assert!(
        row.contains("incomplete (sysmeter did not finish)"),
        "{listed}"
    );
    let latest = json_out(&mut sysmeter_db(
        db,
        &["show", "latest", "--format", "json"],
    ));
    assert_eq!(latest["id"], earlier, "latest skips the killed run");
}

const ONLY: &str = "cpu.loop,mem.latency,mem.bandwidth";

#[test]
fn a_killed_bench_is_incomplete_names_what_is_missing_and_is_not_latest() {
    let _alone = crate::support::exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    // Killed once the first experiment is stored, while the others are still to come.
    let bench = ["bench", "--quick", "--rounds", "1", "--only", ONLY, "--db"];
    let (db, killed, earlier) = killed_bench(dir.path(), &bench);
    let shown = stdout_of(sysmeter().args(["show", &killed, "--db"]).arg(&db));
    assert!(
        shown.contains("incomplete (sysmeter did not finish): missing"),
        "{shown}"
    );
    assert!(shown.contains("mem.bandwidth"), "{shown}");
    // The HTML report and a comparison say so too.
    let page = dir.path().join("killed.html");
    let mut report = sysmeter();
    report
        .args(["report", &killed, "--html"])
        .arg(&page)
        .arg("--db")
        .arg(&db);
    report.assert().success();
    let html = std::fs::read_to_string(&page).expect("page");
    assert!(
        html.contains("incomplete (sysmeter did not finish): missing"),
        "report --html"
    );
    let compared = sysmeter_db(&db, &["compare", "--full", &earlier, &killed])
        .output()
        .expect("compare");
    let text = String::from_utf8_lossy(&compared.stdout);
    let b_line = text.lines().find(|l| l.starts_with("B")).unwrap_or("");
    assert!(
        b_line.contains("incomplete (sysmeter did not finish)"),
        "{text}"
    );
}

#[test]
fn a_bench_of_rounds_killed_after_the_first_keeps_what_it_measured_and_says_so() {
    let _alone = crate::support::exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    // No --rounds: --quick measures everything in 2 interleaved rounds.
    let bench = ["bench", "--quick", "--only", ONLY, "--db"];
    let (db, killed, _) = killed_bench(dir.path(), &bench);
    let run = json_out(&mut sysmeter_db(
        &db,
        &["show", &killed, "--format", "json"],
    ));
    let first = &run["results"][0];
    assert_eq!(first["id"], "cpu.loop", "{first}");
    assert_eq!(first["status"], "ok", "{first}");
    let metric = &first["metrics"][0];
    assert!(metric["summary"]["median"].as_f64().is_some(), "{first}");
    // Stored after its first round, not only once both are done: the kill came while the
    // other experiments were in their first round (its 2nd round would need both of them
    // once more), and the result says of how many rounds it is.
    let rounds = metric["rounds"]["medians"].as_array().map_or(1, Vec::len);
    assert!(rounds < 2, "stored only after its last round: {first}");
    let findings = first["findings"].as_array().expect("findings");
    let partial = findings
        .iter()
        .find(|f| f["key"] == "rounds.partial")
        .unwrap_or_else(|| panic!("no rounds.partial finding: {first}"));
    assert_eq!(partial["value"].as_f64(), Some(rounds as f64), "{partial}");
    let said = format!("{rounds} of 2 rounds");
    let text = partial["text"].as_str().expect("text");
    assert!(text.contains(&said), "{text}");
    let shown = stdout_of(sysmeter().args(["show", &killed, "--db"]).arg(&db));
    assert!(shown.contains(&said), "{shown}");
}

/// The `sysmeter-fs-*` entries of `base`.
fn test_dirs(base: &Path) -> Vec<String> {
    std::fs::read_dir(base)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("sysmeter-fs-"))
        .collect()
}

#[test]
fn the_next_bench_removes_the_test_directory_of_a_killed_one() {
    let _alone = crate::support::exclusive();
    let base = tempfile::tempdir().expect("tempdir");
    let mut args = quick_bench("fs.read");
    args.push("--dir".into());
    let bench = start(&args, &[base.path().as_os_str()]);
    wait_for("a test directory with a file in it", || {
        test_dirs(base.path())
            .iter()
            .any(|d| std::fs::read_dir(base.path().join(d)).is_ok_and(|mut e| e.next().is_some()))
    });
    sigkill(bench);
    let left = test_dirs(base.path());
    assert_eq!(left.len(), 1, "SIGKILL leaves the directory: {left:?}");
    // A directory whose owner still runs (this test) is not touched.
    let live = format!("sysmeter-fs-{}-keep", std::process::id());
    std::fs::create_dir(base.path().join(&live)).expect("mkdir");
    let out = sysmeter()
        .args(quick_bench("cpu.loop"))
        .arg("--dir")
        .arg(base.path())
        .assert()
        .success();
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    let said: Vec<_> = stderr
        .lines()
        .filter(|l| l.starts_with("removed "))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(said[0].contains("removed 1 test directory"), "{stderr}");
    assert_eq!(
        test_dirs(base.path()),
        [live],
        "only the live owner's directory is left"
    );
}

#[test]
fn prune_after_a_killed_bench_keeps_the_complete_run_that_latest_names() {
    let _alone = crate::support::exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    // Stored by the binary, as a user would.
    let db = dir.path().join("runs.db");
    let file = crate::support::sample::sample_run_file(dir.path());
    stdout_of(sysmeter().arg("import").arg("--db").arg(&db).arg(&file));
    let earlier = sysmeter::model::fixture::sample_run();
    // The killed bench runs as the same host as the complete run, so one ranking holds both.
    let bench = crate::support::cmd::std_sysmeter()
        .env("SYSMETER_HOSTNAME", &earlier.host.hostname)
        .args(["bench", "--quick", "--rounds", "1", "--only", ONLY, "--db"])
        .arg(&db)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start sysmeter");
    let killed = kill_after_the_first_stored_experiment(bench, &db, &earlier.id);
    let pruned = stdout_of(sysmeter().args(["prune", "--keep", "1", "--db"]).arg(&db));
    assert!(pruned.contains("deleted 0 run(s)"), "{pruned}");
    let ids: Vec<_> = history(&db)
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["id"].clone())
        .collect();
    assert!(ids.contains(&earlier.id.as_str().into()), "{pruned}");
    assert!(
        ids.contains(&killed.as_str().into()),
        "the latest attempt stays: {ids:?}"
    );
    let latest = json_out(&mut sysmeter_db(
        &db,
        &["show", "latest", "--format", "json"],
    ));
    assert_eq!(latest["id"], earlier.id.as_str());
}
