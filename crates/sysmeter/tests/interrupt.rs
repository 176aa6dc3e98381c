//! Ctrl-C (SIGINT) in the middle of a bench run: the finished experiments are stored and
//! printed, no child process is left behind, and the exit code is 130; in the middle of
//! `bench ipc`, the forked echo and reader processes are killed and reaped as well.
//! In a test binary of their own, one test at a time ([`alone`]), so that no other sysmeter
//! process runs at the same time. They need nothing that can be missing, so they never skip.

use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Held by each test: the checks for processes left behind see every sysmeter process.
fn alone() -> MutexGuard<'static, ()> {
    static ALONE: Mutex<()> = Mutex::new(());
    ALONE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn bin() -> std::path::PathBuf {
    assert_cmd::cargo::cargo_bin("sysmeter")
}

/// Starts `sysmeter bench ARGS --format json` with stdout and stderr made by `io`.
fn start_bench(args: &[&str], io: fn() -> Stdio) -> std::process::Child {
    Command::new(bin())
        .arg("bench")
        .args(args)
        .args(["--format", "json"])
        .env("NO_COLOR", "1")
        .stdout(io())
        .stderr(io())
        .spawn()
        .expect("start bench")
}

/// Sends SIGINT to `pid`, as Ctrl-C in a terminal would.
fn sigint(pid: u32) {
    let status = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

/// `history --format json` of `db` (null while there is no database yet).
fn history(db: &std::path::Path) -> Value {
    let out = Command::new(bin())
        .args(["history", "--format", "json", "--db"])
        .arg(db)
        .output()
        .expect("run history");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

fn stored_results(db: &std::path::Path) -> u64 {
    history(db)[0]["experiments"].as_u64().unwrap_or(0)
}

/// Processes (other than `except`) whose executable is the sysmeter binary.
fn sysmeter_processes(except: u32) -> Vec<u32> {
    let exe = std::fs::canonicalize(bin()).expect("binary path");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != except)
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|p| p == exe))
        .collect()
}

#[test]
fn sigint_mid_run_keeps_finished_results_and_exits_130() {
    let _alone = alone();
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("runs.db");
    // The default profile takes long enough that the signal lands mid-run; os.ctxsw (with
    // its echo children) runs last.
    let db_arg = db.to_str().expect("UTF-8 temp path");
    let mut child = start_bench(&["cpu", "os", "--db", db_arg], Stdio::piped);
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(120);
    while stored_results(&db) < 2 {
        assert!(
            Instant::now() < deadline,
            "no experiment finished within 120 s"
        );
        if let Some(status) = child.try_wait().expect("poll bench") {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            panic!("bench ended ({status}) before it could be interrupted: {err}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    sigint(pid);
    let out = child.wait_with_output().expect("wait for bench");
    assert_eq!(
        out.status.code(),
        Some(130),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run: Value = serde_json::from_slice(&out.stdout).expect("finished results printed as JSON");
    assert_eq!(run["interrupted"], true);
    let printed = run["results"].as_array().map(Vec::len).unwrap_or(0);
    assert!(printed >= 2, "printed {printed} results");
    assert!(printed < 7, "the run was not interrupted at all");
    assert!(
        run["results"]
            .as_array()
            .expect("results")
            .iter()
            .all(|r| r["status"] == "ok")
    );
    let history = history(&db);
    assert_eq!(history[0]["interrupted"], true);
    assert_eq!(
        history[0]["experiments"].as_u64(),
        Some(printed as u64),
        "stored = printed"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert_eq!(
        sysmeter_processes(std::process::id()),
        Vec::<u32>::new(),
        "children left behind"
    );
}

/// Children of `pid`: the processes whose parent (`PPid:` in /proc/N/status) it is. Works
/// on every kernel, unlike /proc/PID/task/TID/children (CONFIG_PROC_CHILDREN).
fn children(pid: u32) -> Vec<u32> {
    let parent = format!("PPid:\t{pid}");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/status"))
                .is_ok_and(|s| s.lines().any(|l| l == parent))
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
    let _alone = alone();
    let mut child = start_bench(&["ipc", "--no-store"], Stdio::null);
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
    sigint(pid);
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
