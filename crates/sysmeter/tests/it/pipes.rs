//! Closed pipes and closed descriptors (issue 13, item 6), through the binary: a reader
//! that has gone before sysmeter writes ends its output quietly (exit 0, no panic, which
//! used to be exit 101 with a backtrace); `run`, `trace` and `profile` whose stderr reader
//! has gone still exit with the measured command's code; `list >&-` exits 1 and says why,
//! while a stdout open on /dev/null, even read-write, is fine.

use std::process::{Command, Output, Stdio};

use crate::support::sample::{db_with_sample_run, sample_run_file};
use crate::support::{need, needs};

/// Which of sysmeter's streams is a pipe nobody reads.
#[derive(Clone, Copy, Debug)]
enum Closed {
    Stdout,
    Stderr,
}

/// Runs sysmeter with `args`, its `closed` stream a pipe whose read end is closed before
/// sysmeter starts (so the first write fails with EPIPE, every time).
fn with_closed_pipe(args: &[&str], closed: Closed) -> Output {
    let (reader, writer) = std::io::pipe().expect("pipe");
    drop(reader);
    let mut cmd = crate::support::cmd::std_sysmeter();
    cmd.args(args).stdin(Stdio::null());
    match closed {
        Closed::Stdout => cmd.stdout(writer).stderr(Stdio::piped()),
        Closed::Stderr => cmd.stderr(writer).stdout(Stdio::piped()),
    };
    cmd.output().expect("run sysmeter")
}

fn assert_quiet_end(out: &Output, code: i32, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    assert_eq!(out.status.code(), Some(code), "{what}: {stderr}");
}

#[test]
fn a_reader_that_has_gone_ends_stdout_quietly() {
    let dir = tempfile::tempdir().expect("tempdir");
    let json = sample_run_file(dir.path());
    let json = json.to_str().expect("utf-8 path");
    let (db, _) = db_with_sample_run(dir.path());
    let db = db.to_str().expect("utf-8 path");
    let cases: [&[&str]; 8] = [
        &["report", "--html", "-", json],
        &["report", "--markdown", "-", json],
        &["list"],
        &["history", "--db", db],
        &["show", "latest", "--db", db],
        &["export", "--db", db],
        &["compare", json, json],
        &["host"],
    ];
    for args in cases {
        let out = with_closed_pipe(args, Closed::Stdout);
        assert_quiet_end(&out, 0, &format!("{args:?}"));
    }
}

#[test]
fn scale_json_into_a_closed_pipe_ends_quietly() {
    let _alone = crate::support::exclusive();
    let args = [
        "scale",
        "--no-store",
        "--format",
        "json",
        "--sizes",
        "1,2,3",
        "--repeat",
        "1",
        "--",
        "true",
        "{n}",
    ];
    let out = with_closed_pipe(&args, Closed::Stdout);
    assert_quiet_end(&out, 0, "scale --format json");
}

#[test]
fn run_keeps_the_commands_exit_code_when_stderr_is_gone() {
    let out = with_closed_pipe(
        &["run", "--no-store", "--", "sh", "-c", "exit 3"],
        Closed::Stderr,
    );
    assert_eq!(out.status.code(), Some(3), "run");
    let out = with_closed_pipe(
        &[
            "trace",
            "--backend",
            "ptrace",
            "--no-store",
            "--",
            "sh",
            "-c",
            "exit 4",
        ],
        Closed::Stderr,
    );
    assert_eq!(out.status.code(), Some(4), "trace");
}

#[test]
fn profile_keeps_the_commands_exit_code_when_stderr_is_gone() {
    need!(needs::perf());
    let _alone = crate::support::exclusive();
    let out = with_closed_pipe(
        &["profile", "--no-store", "--", "sh", "-c", "exit 5"],
        Closed::Stderr,
    );
    assert_eq!(out.status.code(), Some(5), "profile");
}

#[test]
fn a_closed_stdout_is_an_error_not_silence() {
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    // `bench` refuses before it measures (no "debug build" warning, no stored run).
    for script in [
        "exec \"$0\" list >&-",
        "exec \"$0\" bench --quick --only cpu.loop --no-store >&-",
    ] {
        let out = Command::new("sh")
            .args(["-c", script])
            .arg(&bin)
            .env("NO_COLOR", "1")
            .output()
            .expect("run sh");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{script}: {stderr}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains("stdout is closed"),
            "{stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{script}: {stderr}");
    }
    // Discarding output on purpose is fine: write-only as a shell opens it, and read-write
    // as Python's subprocess.DEVNULL and supervisors pass it (which looks like the runtime's
    // stand-in for a closed stdout once main has started).
    let out = Command::new("sh")
        .args(["-c", "exec \"$0\" list >/dev/null"])
        .arg(&bin)
        .output()
        .expect("run sh");
    assert_eq!(out.status.code(), Some(0));
    let read_write = std::fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
        .expect("open /dev/null");
    let out = Command::new(&bin)
        .arg("list")
        .stdout(read_write)
        .output()
        .expect("run sysmeter");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "read-write /dev/null: {stderr}");
}
