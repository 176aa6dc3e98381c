//! Ctrl-C in the middle of `bench ipc`: the forked echo and reader processes are killed and
//! reaped (none outlives the run) and the exit code is 130.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Live children of `pid` (from every thread's `children` list in /proc).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return vec![];
    };
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Whether `pid` is still a process that is not a zombie.
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
    })
}

#[test]
fn sigint_during_bench_ipc_leaves_no_child_behind() {
    if !std::path::Path::new(&format!(
        "/proc/{}/task/{}/children",
        std::process::id(),
        std::process::id()
    ))
    .exists()
    {
        println!("skipped: this kernel has no /proc/PID/task/TID/children to list child processes");
        return;
    }
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("sysmeter"))
        .args(["bench", "ipc", "--no-store", "--format", "json"])
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start bench");
    let pid = child.id();
    // Wait until a peer process exists, so the signal lands while one is running.
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while seen.is_empty() {
        assert!(
            Instant::now() < deadline,
            "no echo or reader process appeared within 60 s"
        );
        assert!(
            matches!(child.try_wait(), Ok(None)),
            "bench ended before it could be interrupted"
        );
        seen = children(pid);
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
    let until = Instant::now() + Duration::from_secs(30);
    let code = loop {
        if let Some(st) = child.try_wait().expect("poll") {
            break st.code();
        }
        assert!(
            Instant::now() < until,
            "bench did not stop within 30 s of SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(code, Some(130));
    let left: Vec<u32> = seen.into_iter().filter(|&p| alive(p)).collect();
    assert!(
        left.is_empty(),
        "children still running after the run: {left:?}"
    );
}
