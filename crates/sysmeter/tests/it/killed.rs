//! A bench killed with SIGKILL (issue 13, items 3 and 4), through the binary: its run is
//! "incomplete (sysmeter did not finish)" in `history` and `show`, which names the missing
//! experiments, and `latest` skips it (it is still found by id); the fs test directory it
//! leaves behind is removed by the next bench, which says so in one line.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use sysmeter::model::fixture::sample_run;
use sysmeter::store::Store;

use crate::support::{json_out, stdout_of, sysmeter};

/// Starts `sysmeter ARGS` in the background, output discarded.
fn start(args: &[&str], extra: &[&std::ffi::OsStr]) -> Child {
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

#[test]
fn a_killed_bench_is_incomplete_names_what_is_missing_and_is_not_latest() {
    let _alone = crate::support::exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("runs.db");
    let earlier = sample_run();
    Store::open(&db)
        .expect("db")
        .save_run(&earlier)
        .expect("store");
    let only = "cpu.loop,mem.latency,mem.bandwidth";
    let bench = start(
        &["bench", "--quick", "--rounds", "1", "--only", only, "--db"],
        &[db.as_os_str()],
    );
    // Killed once the first experiment is stored, while the others are still to come.
    let stored = || {
        let list = json_out(
            sysmeter()
                .args(["history", "--format", "json", "--db"])
                .arg(&db),
        );
        list[0]["id"] != earlier.id.as_str() && list[0]["experiments"].as_u64() >= Some(1)
    };
    wait_for("the first stored experiment", stored);
    sigkill(bench);
    let list = json_out(
        sysmeter()
            .args(["history", "--format", "json", "--db"])
            .arg(&db),
    );
    let killed = list[0]["id"].as_str().expect("id").to_string();
    let history = stdout_of(sysmeter().args(["history", "--db"]).arg(&db));
    let row = history
        .lines()
        .find(|l| l.contains(&killed))
        .expect("killed run listed");
    assert!(
        row.contains("incomplete (sysmeter did not finish)"),
        "{history}"
    );
    let shown = stdout_of(sysmeter().args(["show", &killed, "--db"]).arg(&db));
    assert!(
        shown.contains("incomplete (sysmeter did not finish): missing"),
        "{shown}"
    );
    assert!(shown.contains("mem.bandwidth"), "{shown}");
    let latest = json_out(
        sysmeter()
            .args(["show", "latest", "--format", "json", "--db"])
            .arg(&db),
    );
    assert_eq!(
        latest["id"],
        earlier.id.as_str(),
        "latest skips the killed run"
    );
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
    let bench = start(
        &[
            "bench",
            "--quick",
            "--rounds",
            "1",
            "--only",
            "fs.read",
            "--no-store",
            "--dir",
        ],
        &[base.path().as_os_str()],
    );
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
        .args([
            "bench",
            "--quick",
            "--rounds",
            "1",
            "--only",
            "cpu.loop",
            "--no-store",
            "--dir",
        ])
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
