//! `scale` runs each command in its own process group (issue 13, item 5), through the
//! binary: `--timeout` kills what the command started in the background too, and SIGTERM or
//! SIGINT to sysmeter stops the run at once (exit 130), killing that group, rather than when
//! the current size ends.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::sysmeter;

/// `sh -c` that starts a `sleep 30` in the background, writes its pid to `pidfile`, and then
/// sleeps N seconds in the foreground.
fn script(pidfile: &Path) -> String {
    format!("sleep 30 & echo $! > '{}'; sleep {{n}}", pidfile.display())
}

/// Whether `pid` is still a live process (a zombie waiting for its reaper counts as gone).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| rest.starts_with('Z')))
        .is_some_and(|zombie| !zombie)
}

/// Waits up to 5 s for the background `sleep 30` named in `pidfile` to be gone.
fn assert_background_killed(pidfile: &Path) {
    let text = std::fs::read_to_string(pidfile).expect("pid file");
    let pid: i32 = text.trim().parse().expect("a pid");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        assert!(
            Instant::now() < deadline,
            "background sleep {pid} still runs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn timeout_kills_what_the_command_started_in_the_background() {
    let _alone = crate::support::exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let pidfile = dir.path().join("bg.pid");
    let out = sysmeter()
        .args([
            "scale",
            "--no-store",
            "--sizes",
            "5,6,7",
            "--repeat",
            "1",
            "--warmup",
            "0",
        ])
        .args(["--timeout", "1", "--", "sh", "-c", &script(&pidfile)])
        .output()
        .expect("run scale");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("took longer than --timeout"), "{stderr}");
    assert_background_killed(&pidfile);
}

fn start_scale(pidfile: &Path) -> Child {
    let mut cmd = crate::support::cmd::std_sysmeter();
    cmd.args([
        "scale",
        "--no-store",
        "--sizes",
        "20,21,22",
        "--repeat",
        "1",
        "--warmup",
        "0",
    ])
    .args(["--", "sh", "-c", &script(pidfile)])
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start scale")
}

#[test]
fn sigterm_and_sigint_stop_scale_at_once_and_kill_the_group() {
    let _alone = crate::support::exclusive();
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let dir = tempfile::tempdir().expect("tempdir");
        let pidfile = dir.path().join("bg.pid");
        let mut scale = start_scale(&pidfile);
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::fs::metadata(&pidfile).map_or(true, |m| m.len() == 0) {
            assert!(Instant::now() < deadline, "the command never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        let pid = scale.id() as i32;
        let sent = Instant::now();
        sysmeter_sys::process::wait::send_signal(pid, signal).expect("signal sysmeter");
        // The current run sleeps 20 s or more: only killing it ends scale this soon.
        let status = loop {
            if let Some(status) = scale.try_wait().expect("wait") {
                break status;
            }
            assert!(
                sent.elapsed() < Duration::from_millis(500),
                "signal {signal}: scale still runs 0.5 s later"
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(status.code(), Some(130), "signal {signal}");
        assert_background_killed(&pidfile);
    }
}
