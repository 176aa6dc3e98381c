//! `sysmeter run` driven as a binary: the verdict on three synthetic workloads (a CPU spin,
//! a loop of cheap system calls, a sleep), pass-through of the command's stdin, stdout and
//! exit code, attaching to a running process, SIGINT forwarding, bad targets (exit 2), the
//! JSON record with its timeline, and storage.

use std::process::{Command as StdCommand, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::sysmeter_db;
use crate::support::{median, sysmeter};

/// Runs `sysmeter run --no-store --format json --out FILE ARGS -- CMD` and returns the
/// record and the exit code.
pub(crate) fn run_json(extra: &[&str], cmd: &[&str]) -> (Value, Option<i32>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("run.json");
    let mut c = sysmeter();
    c.args(["run", "--no-store", "--format", "json", "--out"])
        .arg(&out)
        .args(extra)
        .arg("--")
        .args(cmd);
    let o = c.output().expect("run sysmeter");
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "--out is not JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (v, o.status.code())
}

fn finding<'a>(run: &'a Value, key: &str) -> &'a str {
    run["results"][0]["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|x| x["key"] == key))
        .and_then(|x| x["text"].as_str())
        .unwrap_or_else(|| panic!("no finding {key} in {}", run["results"][0]["findings"]))
}

fn metric(run: &Value, name: &str) -> f64 {
    median(&run["results"][0], name).unwrap_or_else(|| panic!("no metric {name}"))
}

#[test]
fn a_cpu_spin_is_cpu_bound() {
    let spin = "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done";
    let (run, code) = run_json(&[], &["sh", "-c", spin]);
    assert_eq!(code, Some(0));
    let verdict = finding(&run, "verdict");
    assert!(verdict.starts_with("Verdict: CPU-bound."), "{verdict}");
    assert!(metric(&run, "user time") > metric(&run, "system time"));
    assert!(finding(&run, "next").contains("sysmeter profile"));
}

#[test]
fn a_loop_of_cheap_system_calls_is_kernel_bound() {
    let (run, code) = run_json(
        &[],
        &["dd", "if=/dev/zero", "of=/dev/null", "bs=1", "count=300000"],
    );
    assert_eq!(code, Some(0));
    let verdict = finding(&run, "verdict");
    assert!(verdict.starts_with("Verdict: kernel-bound."), "{verdict}");
    assert!(finding(&run, "next").contains("sysmeter trace"));
    // dd read and wrote 300000 bytes one at a time: /proc/PID/io of the exited child.
    assert!(metric(&run, "bytes read") >= 300_000.0);
    assert!(metric(&run, "bytes written") >= 300_000.0);
}

#[test]
fn a_sleep_is_io_bound_waiting() {
    let (run, code) = run_json(&["--interval", "50"], &["sleep", "0.5"]);
    assert_eq!(code, Some(0));
    let verdict = finding(&run, "verdict");
    assert!(
        verdict.starts_with("Verdict: I/O-bound (waiting)."),
        "{verdict}"
    );
    let real = metric(&run, "real time");
    assert!((0.5e9..5e9).contains(&real), "real {real} ns");
    assert!(metric(&run, "CPUs busy") < 1.0 / 3.0);
}

#[test]
fn the_json_record_has_the_timeline() {
    let (run, _) = run_json(&["--interval", "50"], &["sleep", "0.3"]);
    assert_eq!(run["kind"], "run");
    assert_eq!(run["results"][0]["id"], "run");
    // The one end of a session: the command finished with 0, watched about 0.3 s.
    let session = &run["results"][0]["session"];
    assert_eq!(
        (&session["ended"], &session["exit_code"]),
        (&"finished".into(), &0.into())
    );
    let wall = session["wall_ns"].as_f64().expect("wall_ns");
    assert!((0.25e9..10e9).contains(&wall), "watched {wall} ns");
    // One wall time per run (issue 43): the session's is the real time measured.
    assert_eq!(wall, metric(&run, "real time"), "session wall vs real time");
    let series = run["results"][0]["series"].as_array().expect("series");
    let idle = series
        .iter()
        .find(|s| s["name"] == "machine idle %")
        .expect("machine idle % series");
    let points = idle["points"].as_array().expect("points");
    assert!(points.len() >= 3, "{} points", points.len());
    let xs: Vec<f64> = points.iter().filter_map(|p| p["x"].as_f64()).collect();
    assert!(xs.windows(2).all(|w| w[0] < w[1]), "x increases: {xs:?}");
    assert!(xs.iter().all(|&x| x > 0.0 && x < 10.0));
    for name in ["command CPU %", "disk read", "net receive", "page faults/s"] {
        assert!(series.iter().any(|s| s["name"] == name), "missing {name}");
    }
}

#[test]
fn stdout_and_exit_code_pass_through_and_the_report_goes_to_stderr() {
    let o = sysmeter()
        .args(["run", "--no-store", "--", "echo", "hello"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, b"hello\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("Verdict:"), "{err}");
    let o = sysmeter()
        .args(["run", "--no-store", "--", "sh", "-c", "exit 7"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(7));
    assert!(o.stdout.is_empty());
    let o = sysmeter()
        .args(["run", "--no-store", "--", "sh", "-c", "kill -TERM $$"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(128 + 15), "killed by SIGTERM");
}

#[test]
fn stdin_passes_through() {
    sysmeter()
        .args(["run", "--no-store", "--", "cat"])
        .write_stdin("line one\nline two\n")
        .assert()
        .success()
        .stdout("line one\nline two\n");
}

#[test]
fn attaching_watches_a_running_process_without_harming_it() {
    let mut child = StdCommand::new("sleep")
        .arg("30")
        .spawn()
        .expect("start sleep");
    let pid = child.id().to_string();
    let (run, code) = {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = dir.path().join("attach.json");
        let o = sysmeter()
            .args(["run", "--no-store", "--format", "json", "-p", &pid])
            .args(["--duration", "0.5", "--out"])
            .arg(&out)
            .output()
            .expect("run -p");
        let text = std::fs::read_to_string(&out).unwrap_or_default();
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|_| panic!("stderr: {}", String::from_utf8_lossy(&o.stderr)));
        (v, o.status.code())
    };
    let still_running = child.try_wait().expect("poll sleep").is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(code, Some(0));
    assert!(still_running, "the watched process was harmed");
    let real = metric(&run, "real time");
    assert!((0.4e9..5e9).contains(&real), "watched {real} ns");
    assert!(metric(&run, "user time") + metric(&run, "system time") < 0.2e9);
    assert!(finding(&run, "verdict").starts_with("Verdict: I/O-bound (waiting)."));
    let session = &run["results"][0]["session"];
    assert_eq!(session["ended"], "duration", "{session}");
    assert!(
        session.get("exit_code").is_none(),
        "nothing was launched: {session}"
    );
    assert!(
        run["results"][0]["about"]["title"]
            .as_str()
            .is_some_and(|t| t.contains(&pid))
    );
}

#[test]
fn bad_targets_are_usage_errors() {
    let o = sysmeter()
        .args(["run", "--no-store", "-p", "2147483647", "--duration", "0.1"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("no process with PID 2147483647 exists"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one sentence: {err}");
    let o = sysmeter()
        .args(["run", "--no-store"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no command to run"));
    let o = sysmeter()
        .args(["run", "--no-store", "--", "/nonexistent/sysmeter-test-cmd"])
        .output()
        .expect("run");
    assert_eq!(o.status.code(), Some(127), "not found, like a shell");
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot run"));
}

#[test]
fn runs_are_stored_and_shown() {
    let (_dir, db) = crate::support::temp_db();
    sysmeter_db(&db, &["run"])
        .args(["--", "true"])
        .assert()
        .success();
    let o = sysmeter_db(&db, &["show", "latest", "--format", "json"])
        .output()
        .expect("show");
    let v: Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(v["kind"], "run");
    assert!(finding(&v, "verdict").starts_with("Verdict: "));
}

#[test]
fn sigint_to_sysmeter_is_forwarded_and_the_run_is_still_reported_and_stored() {
    let (dir, db) = crate::support::temp_db();
    let out = dir.path().join("run.json");
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    let mut child = StdCommand::new(bin)
        .args(["run", "--format", "json", "--out"])
        .arg(&out)
        .arg("--db")
        .arg(&db)
        .args(["--", "sleep", "30"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start sysmeter");
    std::thread::sleep(Duration::from_millis(400));
    let started = Instant::now();
    let killed = StdCommand::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    let status = child.wait().expect("wait");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "sleep was not stopped"
    );
    assert_eq!(status.code(), Some(130), "sleep died of SIGINT: 128 + 2");
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("report")).expect("json");
    assert_eq!(run["interrupted"], true);
    assert!(finding(&run, "exit").contains("signal 2"));
    let o = sysmeter_db(&db, &["history", "--format", "json"])
        .output()
        .expect("history");
    let h: Value = serde_json::from_slice(&o.stdout).expect("history json");
    assert_eq!(h[0]["kind"], "run");
}

#[test]
fn every_format_renders_the_verdict() {
    for format in ["text", "csv", "markdown"] {
        let o = sysmeter()
            .args(["run", "--no-store", "--format", format, "--", "true"])
            .output()
            .expect("run");
        assert_eq!(o.status.code(), Some(0), "{format}");
        assert!(o.stdout.is_empty(), "{format}: stdout is the command's");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("real time"), "{format}: {err}");
        if format != "csv" {
            assert!(err.contains("Verdict: "), "{format}: {err}");
        }
    }
}
