//! Every diagnosis of a running process (`-p`) stops when that process ends, long before
//! its `--duration`, and says so in one finding (issue 29: `profile -p` sampled on for the
//! whole `--duration` after its target died). The target is the hard case: a process whose
//! parent never reaps it, so it ends as a zombie that keeps its /proc entry. Each
//! diagnosis needs its own capability (tracepoints, uprobes as root, perf events); one that
//! cannot run here is reported as a skipped part. `locks` and `--off-cpu` use their perf
//! backends, so this test loads no BPF program that would blind another test's perf events.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::cmd::std_sysmeter;
use crate::support::needs::{self, perf, tracepoints};
use crate::support::skip::Missing;

/// Far beyond the target's 1 s life and any start-up delay on a loaded machine.
const DURATION: &str = "120";
/// A diagnosis that ends later than this after its target has sampled on to `--duration`.
const LIMIT: Duration = Duration::from_secs(60);

/// A shell that starts `sleep 1` and then becomes `sleep 300`, which never reaps it; (the
/// shell, the PID of the `sleep 1`).
fn unreaped_sleeper() -> (Child, i32) {
    let mut parent = Command::new("sh")
        .args(["-c", "sleep 1 & echo $!; exec sleep 300"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start sh");
    let mut line = String::new();
    let out = parent.stdout.take().expect("stdout");
    BufReader::new(out).read_line(&mut line).expect("read pid");
    (parent, line.trim().parse().expect("a pid"))
}

/// Runs `sysmeter ARGS --no-store --duration 120 -p PID` on a target that lives 1 s.
fn ends_with_its_target(args: &[&str]) {
    let (mut parent, pid) = unreaped_sleeper();
    let started = Instant::now();
    let out = std_sysmeter()
        .args(args)
        .args(["--no-store", "--duration", DURATION, "-p", &pid.to_string()])
        .stdin(Stdio::null())
        .output()
        .expect("run sysmeter");
    let took = started.elapsed();
    let _ = parent.kill();
    let _ = parent.wait();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
    assert!(
        took < LIMIT,
        "{args:?} ran {took:?} after its target ended: {err}"
    );
    assert!(
        err.contains("The process exited") && err.contains("observing stopped with it"),
        "{args:?} does not say its target ended: {err}"
    );
}

#[test]
fn every_diagnosis_of_a_pid_stops_when_the_process_ends_and_says_so() {
    let _on = crate::support::observing(&[
        crate::support::Event::Futex,
        crate::support::Event::Sched,
        crate::support::Event::RawSyscalls,
    ]);
    ends_with_its_target(&["run"]);
    let with = |need: Result<(), Missing>, args: &[&str]| match need {
        Ok(()) => ends_with_its_target(args),
        Err(missing) => missing.skip_part(&args.join(" ")),
    };
    with(tracepoints(), &["trace"]);
    with(
        needs::root("attach ptrace"),
        &["trace", "--backend", "ptrace"],
    );
    with(
        needs::root("define uprobes"),
        &["calls", "--backend", "uprobe"],
    );
    with(tracepoints(), &["locks", "--backend", "perf"]);
    with(perf(), &["profile"]);
    with(
        needs::off_cpu(),
        &["profile", "--off-cpu", "--backend", "perf"],
    );
}
