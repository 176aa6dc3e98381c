//! A `locks` run of the perf backend made to lose records says so right under its title,
//! with the share lost: a two-thread semaphore ping-pong (fixture `locks_sempingpong`) on
//! CPU 0 with sysmeter at the lowest priority and the fixture at the highest, so the reader
//! cannot drain the rings in time.
//!
//! Needs root (capability `tracepoints`), `cc`, taskset(1) and nice(1) (capability `script`).

use std::path::Path;

use crate::support::needs::tracepoints;
use crate::support::{compile_fixture, exclusive, need, skip};

/// Runs the ping-pong on CPU 0 under `locks --backend perf` at nice 19 (the fixture at
/// nice -19): the stderr.
fn starved_perf_run(dir: &Path, prog: &Path) -> String {
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    let done = std::process::Command::new("taskset")
        .args(["-c", "0", "nice", "-n", "19"])
        .arg(bin)
        .args(["locks", "--backend", "perf", "--no-store", "--"])
        .args(["nice", "-n", "-19"])
        .arg(prog)
        .arg("200000")
        .current_dir(dir)
        .output()
        .expect("run taskset");
    assert_eq!(done.status.code(), Some(0));
    String::from_utf8_lossy(&done.stderr).into_owned()
}

#[test]
fn a_perf_locks_run_that_lost_records_says_so_under_its_title() {
    let _alone = exclusive();
    need!(tracepoints());
    let on_path = |tool: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
    };
    if !on_path("taskset") || !on_path("nice") {
        skip!(Script, "taskset (util-linux) or nice (coreutils) missing");
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(compile_fixture(
        "locks_sempingpong",
        dir.path(),
        &["-pthread"]
    ));
    let stderr = starved_perf_run(dir.path(), &prog);
    let lines: Vec<&str> = stderr.lines().collect();
    let title = lines
        .iter()
        .position(|l| l.starts_with("sysmeter locks run"))
        .unwrap_or_else(|| panic!("no title: {stderr}"));
    let next = lines.get(title + 1).copied().unwrap_or_default();
    assert!(
        next.starts_with("warning: Incomplete: ") && next.contains("futex records lost ("),
        "the line under the title: {next:?}\n{stderr}"
    );
    assert!(next.contains('%'), "the share lost: {next}");
}
