//! `sysmeter trace` on fixture programs built by the test (tests/fixtures/programs/trace_*.c)
//! with known system calls: exact counts and errors over threads under both backends, fork
//! following, `-e` (seccomp) filtering, pass-through of stdout and exit code, `--duration`
//! on a launched command, storing and showing, and usage errors (attaching: trace_attach.rs).
//! Tests needing a C compiler or tracepoint privileges `skip!` (capabilities `cc`,
//! `tracepoints`) where they are missing.

use std::path::Path;

use tempfile::TempDir;

use serde_json::Value;

use crate::support::cmd::traced_json;
use crate::support::needs::tracepoints;
use crate::support::skip::Missing;
use crate::support::sysmeter_db;
use crate::support::{compile_fixture, need, stderr_of, stdout_of, sysmeter};

/// Runs `sysmeter trace ARGS -- CMD…` with the JSON summary written to a file; returns
/// (the trace result, sysmeter's stdout, exit code).
pub(crate) fn trace_json(args: &[&str], cmd: &[&str], dir: &Path) -> (Value, String, i32) {
    let args: Vec<&str> = args.iter().copied().chain(["--no-store"]).collect();
    let (run, output) = traced_json("trace", &args, cmd, dir);
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (
        run["results"][0].clone(),
        stdout,
        output.status.code().unwrap_or(-1),
    )
}

/// (calls, errors) of system call `name` in a trace result.
pub(crate) fn calls_of(result: &Value, name: &str) -> Option<(u64, u64)> {
    let m = result["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)?;
    let n = m["summary"]["n"].as_u64()?;
    let errors = m["note"]
        .as_str()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    Some((n, errors))
}

fn metric_names(result: &Value) -> Vec<String> {
    let metrics = result["metrics"].as_array().into_iter().flatten();
    metrics
        .filter_map(|m| m["name"].as_str().map(String::from))
        .collect()
}

/// What a `backend` run of fixture `name` needs: the tracepoints, or BPF (ptrace: nothing),
/// and the fixture compiled (with threads) in a new directory.
fn backend_fixture(backend: &str, name: &str) -> Result<(TempDir, String), Missing> {
    match backend {
        "tracepoint" => tracepoints()?,
        "bpf" => crate::support::needs::bpf()?,
        _ => {}
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = crate::support::fixture_arg(name, dir.path(), &["-pthread"])?;
    Ok((dir, bin))
}

// `test_name::ptrace`, `::tracepoint` and `::bpf`: the test function on each backend, each
// holding the `raw_syscalls` events.
crate::support::each_backend!(
    hold crate::support::observing(&[crate::support::Event::RawSyscalls]);
    [ptrace, tracepoint, bpf];
    counts_every_call_of_every_thread_exactly,
    follows_forked_children_with_f
);

fn counts_every_call_of_every_thread_exactly(backend: &str) {
    let (dir, bin) = need!(backend_fixture(backend, "trace_threads"));
    let (n, m, k) = (4u64, 300u64, 25u64);
    let cmd = [bin.as_str(), "4", "300", "25", "7"];
    let (result, stdout, code) = trace_json(&["--backend", backend], &cmd, dir.path());
    assert_eq!(
        calls_of(&result, "getpgid"),
        Some((n * m, n * k)),
        "{result:#}"
    );
    assert_eq!(
        stdout, "done 4 300 25\n",
        "the command's stdout passes through"
    );
    assert_eq!(code, 7, "the command's exit code passes through");
    let findings = result["findings"].to_string();
    assert!(
        findings.contains(&format!("backend: {backend}")),
        "{findings}"
    );
    assert!(findings.contains("tracing adds"), "{findings}");
    let getpgid = result["metrics"]
        .as_array()
        .and_then(|a| a.iter().find(|m| m["name"] == "getpgid"))
        .expect("getpgid metric");
    assert!(getpgid["note"].as_str().unwrap_or("").contains("ESRCH×100"));
    assert_eq!(
        getpgid["samples"].as_array().map(Vec::len),
        Some((n * m) as usize)
    );
}

fn follows_forked_children_with_f(backend: &str) {
    let (dir, bin) = need!(backend_fixture(backend, "trace_fork"));
    let cmd = [bin.as_str(), "120", "30"];
    let (followed, _, code) = trace_json(&["-f", "--backend", backend], &cmd, dir.path());
    assert_eq!(code, 0);
    assert_eq!(
        calls_of(&followed, "getpgid"),
        Some((150, 30)),
        "{followed:#}"
    );
    let (alone, _, _) = trace_json(&["--backend", backend], &cmd, dir.path());
    assert_eq!(calls_of(&alone, "getpgid"), Some((120, 0)), "{alone:#}");
}

#[test]
fn e_filter_counts_only_the_selected_calls_through_seccomp() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(crate::support::fixture_arg(
        "trace_threads",
        dir.path(),
        &["-pthread"]
    ));
    let cmd = [bin.as_str(), "2", "200", "10", "0"];
    let (r, stdout, code) = trace_json(&["--backend", "ptrace", "-e", "getpgid"], &cmd, dir.path());
    assert_eq!((stdout.as_str(), code), ("done 2 200 10\n", 0));
    assert_eq!(metric_names(&r), vec!["getpgid"], "{r:#}");
    assert_eq!(calls_of(&r, "getpgid"), Some((400, 20)));
    assert!(
        r["findings"].to_string().contains("seccomp filter"),
        "{r:#}"
    );
    // A class: process calls only (the execve, clone3/clone for the threads; the threads'
    // exit and the final exit_group never return and are not counted).
    let (r, _, _) = trace_json(&["--backend", "ptrace", "-e", "process"], &cmd, dir.path());
    let names = metric_names(&r);
    assert!(names.iter().any(|n| n.starts_with("clone")), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| ["clone", "clone3", "execve"].contains(&n.as_str())),
        "{names:?}"
    );
}

#[test]
fn duration_detaches_a_launched_command_which_finishes_normally() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let dir = tempfile::tempdir().expect("tempdir");
    let bin = need!(compile_fixture("trace_counter", dir.path(), &["-pthread"]));
    let output = sysmeter()
        .args([
            "trace",
            "--no-store",
            "--backend",
            "ptrace",
            "--duration",
            "0.2",
            "--",
        ])
        .arg(&bin)
        .args(["30", "15"])
        .output()
        .expect("sysmeter runs");
    let expected: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        expected,
        "{stderr}"
    );
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("stopped after --duration"), "{stderr}");
}

#[test]
fn bad_targets_are_usage_errors_with_one_clear_sentence() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let text = stderr_of(
        sysmeter().args(["trace", "--no-store", "-p", "999999999"]),
        2,
    );
    assert!(text.contains("no process with PID 999999999"), "{text}");
    for args in [
        vec!["trace", "--no-store"],
        vec!["trace", "--no-store", "-e", "frobnicate", "--", "true"],
        vec!["trace", "--no-store", "-p", "1", "--", "true"],
    ] {
        let text = stderr_of(sysmeter().args(&args), 2);
        assert!(
            text.starts_with("error: ") && text.lines().count() == 1,
            "{args:?}: {text}"
        );
    }
}

#[test]
fn commands_that_cannot_start_exit_like_a_shell() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let text = stderr_of(
        sysmeter().args(["trace", "--no-store", "--", "/no/such/program"]),
        127,
    );
    assert!(text.contains("cannot run `/no/such/program`"), "{text}");
    let dir = tempfile::tempdir().expect("tempdir");
    let plain = dir.path().join("not-executable");
    std::fs::write(&plain, "#!/bin/sh\n").expect("write");
    sysmeter()
        .args(["trace", "--no-store", "--"])
        .arg(&plain)
        .assert()
        .code(126);
}

#[test]
fn trace_runs_are_stored_and_shown_as_a_syscall_table() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("t.db");
    sysmeter_db(&db, &["trace", "--backend", "ptrace"])
        .args(["--", "true"])
        .assert()
        .success();
    let text = stdout_of(sysmeter().args(["show", "latest", "--db"]).arg(&db));
    assert!(text.contains("sysmeter trace run"), "{text}");
    assert!(text.contains("% time") && text.contains("execve"), "{text}");
    assert!(text.contains("total"), "{text}");
}
