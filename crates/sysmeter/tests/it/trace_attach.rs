//! `sysmeter trace -p`: a running fixture (tests/fixtures/programs/trace_counter.c, printing
//! numbered lines with small sleeps) is attached, traced briefly, and detached by SIGINT —
//! 20 times in a row with ptrace (3 with tracepoints and 3 in the kernel, `--backend bpf`,
//! where permitted) — and must still
//! print every line in order and exit with its own code. The counter has lines for half a
//! minute, so that however slowly the tracer attaches on a loaded machine it is still
//! running when stopped; once detached, SIGUSR1 hurries it to its end. Needs a C compiler (capability
//! `cc`); the tracepoint part needs capability `tracepoints`, the in-kernel one `bpf`.

use std::io::{BufReader, Read};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdout, Command};
use std::time::Duration;

use crate::support::cmd::{interrupt_attached, start_attached, started_with_line};
use crate::support::needs::tracepoints;
use crate::support::{compile_fixture, need};

/// Lines the counter prints, one every [`PAUSE_MS`] until [`hurry`] (30 s: far longer
/// than attaching and detaching take, even on a loaded machine).
const LINES: u32 = 3000;
const PAUSE_MS: u32 = 10;

/// Starts the counter fixture with stdout piped and waits for its first line.
fn start_counter(bin: &Path) -> (Child, BufReader<ChildStdout>) {
    let mut counter = Command::new(bin);
    counter.args([LINES.to_string(), PAUSE_MS.to_string()]);
    started_with_line(&mut counter, "line 1\n")
}

/// Tells the counter to print its remaining lines without pausing.
fn hurry(child: &Child) {
    let sent = Command::new("kill")
        .args(["-USR1", &child.id().to_string()])
        .status();
    assert!(sent.is_ok_and(|s| s.success()), "kill -USR1 failed");
}

fn tracer_of(pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Starts `sysmeter trace -p PID` and reads its stderr until it says it is tracing.
fn start_tracer(pid: u32, backend: &str, round: usize) -> (Child, BufReader<ChildStderr>, String) {
    let pid = pid.to_string();
    start_attached(
        &["trace", "--no-store", "--backend", backend, "-p", &pid],
        round,
    )
}

/// Attaches to a running counter, stops sysmeter with SIGINT, and checks the counter
/// finishes every line with its own exit code.
fn attach_once(bin: &Path, backend: &str, round: usize) {
    let (mut child, mut out) = start_counter(bin);
    let pid = child.id();
    let (mut tracer, err, mut report) = start_tracer(pid, backend, round);
    if backend == "ptrace" {
        assert_eq!(
            tracer_of(pid),
            Some(tracer.id()),
            "round {round}: not attached"
        );
    }
    std::thread::sleep(Duration::from_millis(100));
    interrupt_attached(&mut tracer, err, &mut report, round);
    assert!(report.contains("nanosleep"), "round {round}: {report}");
    assert!(
        report.contains("stopped by Ctrl-C"),
        "round {round}: {report}"
    );
    assert_eq!(
        tracer_of(pid).unwrap_or(0),
        0,
        "round {round}: still traced"
    );
    hurry(&child);
    let mut rest = String::new();
    out.read_to_string(&mut rest)
        .expect("the rest of the output");
    let code = child.wait().expect("fixture ends").code();
    let expected: String = (2..=LINES).map(|i| format!("line {i}\n")).collect();
    assert_eq!(rest, expected, "round {round}: output damaged");
    assert_eq!(code, Some(3), "round {round}: exit code changed");
}

#[test]
fn attach_and_detach_by_sigint_leaves_the_process_unharmed_20_times() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture("trace_counter", dir.path(), &[]));
    for round in 0..20 {
        attach_once(&bin, "ptrace", round);
    }
    match tracepoints() {
        Ok(()) => (0..3).for_each(|round| attach_once(&bin, "tracepoint", round)),
        Err(missing) => missing.skip_part("3 rounds with tracepoints"),
    }
    match crate::support::needs::bpf() {
        Ok(()) => (0..3).for_each(|round| attach_once(&bin, "bpf", round)),
        Err(missing) => missing.skip_part("3 rounds in the kernel"),
    }
}

/// `-p PID --duration`: tracing stops by itself, detaches, and the process finishes.
fn duration_once(bin: &Path, backend: &str) {
    let (mut child, mut out) = start_counter(bin);
    let output = Command::new(assert_cmd::cargo::cargo_bin("sysmeter"))
        .args([
            "trace",
            "--no-store",
            "--backend",
            backend,
            "--duration",
            "0.3",
        ])
        .args(["-p", &child.id().to_string()])
        .output()
        .expect("sysmeter runs");
    let report = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "{backend}: {report}");
    assert!(
        report.contains("stopped after --duration"),
        "{backend}: {report}"
    );
    assert!(report.contains("nanosleep"), "{backend}: {report}");
    hurry(&child);
    let mut rest = String::new();
    out.read_to_string(&mut rest)
        .expect("the rest of the output");
    let expected: String = (2..=LINES).map(|i| format!("line {i}\n")).collect();
    assert_eq!(rest, expected, "{backend}: output damaged");
    assert_eq!(child.wait().expect("fixture ends").code(), Some(3));
}

#[test]
fn duration_ends_an_attached_trace_and_the_process_finishes() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture("trace_counter", dir.path(), &[]));
    duration_once(&bin, "ptrace");
    match tracepoints() {
        Ok(()) => duration_once(&bin, "tracepoint"),
        Err(missing) => missing.skip_part("the same with tracepoints"),
    }
    match crate::support::needs::bpf() {
        Ok(()) => duration_once(&bin, "bpf"),
        Err(missing) => missing.skip_part("the same in the kernel"),
    }
}
