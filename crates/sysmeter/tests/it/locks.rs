//! Integration tests of `sysmeter locks` on a C fixture (tests/fixtures/programs/
//! locks_phases.c): four threads take one mutex in `worker()`, then one mutex each. The
//! report must show one hot lock holding ≥ 90% of the lock waiting, named at the fixture's
//! lock line, no wait at all on the four separate mutexes, and a total wait that agrees
//! with the fixture's own clock_gettime count of its contended lock calls. Attaching with
//! `-p` and detaching 20 times must leave the target running; the typed rows (the `lock rows`
//! artifact) agree with the metrics; a stored run shows, renders as HTML and compares. Needs root (tracepoints) and a C compiler.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{ChildStdout, Command, Stdio};

use serde_json::Value;

use crate::support::needs::tracepoints;
use crate::support::skip::{Cap, Missing};
use crate::support::{compile_fixture, json_run, need, stdout_of, sysmeter};

const SOURCE: &str = include_str!("../fixtures/programs/locks_phases.c");
const RUST_SOURCE: &str = include_str!("../fixtures/programs/locks_std.rs");

/// The futex tracepoints `locks` needs (root, tracefs).
fn futex_events() -> Result<(), Missing> {
    tracepoints()?;
    sysmeter::diagnose::locks::available()
        .map_err(|why| Missing::new(Cap::Tracepoints, format!("futex tracepoints: {why}")))
}

/// What a `backend` run needs: the futex tracepoints, and for `bpf` the in-kernel backend.
pub(crate) fn backend_events(backend: &str) -> Result<(), Missing> {
    futex_events()?;
    if backend == "bpf" {
        sysmeter::diagnose::locks::bpf::available()
            .map_err(|why| Missing::new(Cap::Bpf, format!("the in-kernel locks backend: {why}")))?;
    }
    Ok(())
}

/// Every test of a backend runs twice, as `<test>::perf` and `<test>::bpf`, one at a time:
/// while a BPF program that returns 0 is attached to a tracepoint, the kernel records no
/// perf sample of that tracepoint for anyone (docs/bpf.md), so a perf run beside a bpf run
/// would see no futex call.
macro_rules! both_backends {
    ($($test:ident),+) => {
        crate::support::each_backend!(
            hold crate::support::observing_alone(&[crate::support::Event::Futex]);
            [perf, bpf];
            $($test),+
        );
    };
}
pub(crate) use both_backends;

fn fixture(dir: &Path, backend: &str) -> Result<PathBuf, Missing> {
    backend_events(backend)?;
    compile_fixture("locks_phases", dir, &["-pthread"])
}

/// The line of `source` holding `marker`.
fn line_in(source: &str, marker: &str) -> usize {
    let at = source.lines().position(|l| l.contains(marker));
    at.expect("marker in the fixture") + 1
}

/// `key=value` fields of the fixture's stdout line starting with `prefix`.
pub(crate) fn field(stdout: &str, prefix: &str, key: &str) -> String {
    let line = stdout.lines().find(|l| l.starts_with(prefix));
    let line = line.unwrap_or_else(|| panic!("no {prefix} line in {stdout}"));
    let pair = line
        .split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{key}=")));
    pair.unwrap_or_else(|| panic!("no {key} in {line}"))
        .to_string()
}

/// The rows of the `locks` result: (name, waits, total ns, note).
pub(crate) fn rows(run: &Value) -> Vec<(String, u64, f64, String)> {
    let result = &run["results"][0];
    assert_eq!(result["id"], "locks");
    let metrics = result["metrics"].as_array().expect("metrics");
    metrics
        .iter()
        .map(|m| {
            let n = m["summary"]["n"].as_u64().expect("n");
            let mean = m["summary"]["mean"].as_f64().expect("mean");
            let name = m["name"].as_str().expect("name").to_string();
            (
                name,
                n,
                mean * n as f64,
                m["note"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

both_backends!(one_hot_lock_at_the_worker_line_and_none_on_separate_locks);
fn one_hot_lock_at_the_worker_line_and_none_on_separate_locks(backend: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(fixture(dir.path(), backend));
    let (stdout, run) = locks_json(dir.path(), backend, &[prog.as_os_str()]);
    let rows = rows(&run);
    let one = field(&stdout, "one=", "one");
    let locks: Vec<_> = rows.iter().filter(|r| r.0.starts_with("lock ")).collect();
    let all: f64 = locks.iter().map(|r| r.2).sum();
    let hot: Vec<_> = locks.iter().filter(|r| r.3.starts_with(&one)).collect();
    let hot_ns: f64 = hot.iter().map(|r| r.2).sum();
    assert!(
        hot_ns >= 0.9 * all && hot_ns > 0.0,
        "hot {hot_ns} of {all}: {rows:?}"
    );
    // Phase two cannot contend: each thread has its own mutex.
    for i in 0..4 {
        let word = field(&stdout, &format!("four{i}="), &format!("four{i}"));
        assert!(
            rows.iter().all(|r| !r.3.starts_with(&word)),
            "{word} waited: {rows:?}"
        );
    }
    assert_eq!(field(&stdout, "phase2", "contended"), "0");
    let site = format!("worker (locks_phases.c:{})", line_in(SOURCE, "LOCK SITE"));
    assert!(hot[0].0.ends_with(&site), "{} is not at {site}", hot[0].0);
    let findings = run["results"][0]["findings"].as_array().expect("findings");
    let text = findings
        .iter()
        .find(|f| f["key"] == "hot_lock")
        .expect("hot_lock")["text"]
        .as_str()
        .expect("text");
    // Four threads take the lock; under load one may never have had to sleep on it.
    assert!(text.contains(&site), "{text}");
    assert!(
        ["2 threads", "3 threads", "4 threads"]
            .iter()
            .any(|t| text.contains(t)),
        "{text}"
    );
    check_hand_count(&stdout, hot_ns, hot.iter().map(|r| r.1).sum());
    check_typed_rows(&run);
}

/// The `lock rows` artifact holds one typed row per metric, in order, saying what the
/// metric's name and note say.
fn check_typed_rows(run: &Value) {
    let result = &run["results"][0];
    let typed: Vec<Value> = crate::support::artifact_json(result, "lock rows");
    let metrics = result["metrics"].as_array().expect("metrics");
    assert_eq!(typed.len(), metrics.len(), "{typed:#?}");
    let text = |v: &Value| v.as_str().expect("a string").to_string();
    for (t, m) in typed.iter().zip(metrics) {
        let name = format!(
            "{} {} {}: {}",
            text(&t["class"]),
            t["rank"],
            text(&t["kind"]),
            text(&t["site"])
        );
        assert_eq!(text(&m["name"]), name);
        let word = format!("0x{:x} · ", t["word"].as_u64().expect("word"));
        assert!(text(&m["note"]).starts_with(&word), "{m} {t}");
    }
}

/// The fixture timed its contended lock calls itself: every futex wait lies inside one of
/// them, so ours is at most the hand total, and the calls are mostly that wait.
pub(crate) fn check_hand_count(stdout: &str, ours_ns: f64, our_waits: u64) {
    let hand_ns: f64 = field(stdout, "phase1", "waited_ns")
        .parse()
        .expect("number");
    let hand_count: u64 = field(stdout, "phase1", "contended")
        .parse()
        .expect("number");
    eprintln!(
        "hand count: {hand_count} contended, {:.1} ms; locks: {our_waits} waits, {:.1} ms",
        hand_ns / 1e6,
        ours_ns / 1e6
    );
    assert!(hand_count > 0, "the fixture must contend");
    assert!(ours_ns <= hand_ns * 1.01 + 1e6, "{ours_ns} > {hand_ns}");
    assert!(ours_ns >= 0.6 * hand_ns, "{ours_ns} ≪ {hand_ns}");
}

/// Reads stdout lines until one starts with `tick`; its number.
fn next_tick(out: &mut BufReader<ChildStdout>) -> u64 {
    loop {
        let mut line = String::new();
        assert!(
            out.read_line(&mut line).expect("stdout") > 0,
            "fixture ended"
        );
        if let Some(n) = line.trim().strip_prefix("tick ") {
            return n.parse().expect("tick number");
        }
    }
}

both_backends!(attach_and_detach_twenty_times_leaves_the_target_running);
fn attach_and_detach_twenty_times_leaves_the_target_running(backend: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(fixture(dir.path(), backend));
    let mut child = Command::new(&prog)
        .arg("loop")
        .stdout(Stdio::piped())
        .spawn()
        .expect("fixture starts");
    let mut out = BufReader::new(child.stdout.take().expect("stdout"));
    let pid = child.id().to_string();
    let mut seen_hot = 0;
    for round in 0..20 {
        let before = next_tick(&mut out);
        let text = String::from_utf8_lossy(
            &sysmeter()
                .args(["locks", "--backend", backend, "--no-store"])
                .args(["--duration", "150ms", "-p", &pid])
                .assert()
                .success()
                .get_output()
                .stderr
                .clone(),
        )
        .into_owned();
        seen_hot += usize::from(text.contains("worker (locks_phases.c:"));
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "died in round {round}"
        );
        let after = next_tick(&mut out);
        assert!(after > before, "round {round}: no progress after detaching");
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        seen_hot >= 10,
        "the hot lock was named in only {seen_hot} of 20 attaches"
    );
}

both_backends!(a_stored_locks_run_shows_renders_and_compares);
fn a_stored_locks_run_shows_renders_and_compares(backend: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(fixture(dir.path(), backend));
    let db = dir.path().join("s.db");
    let db_arg = db.to_str().expect("utf-8 path");
    for _ in 0..2 {
        sysmeter()
            .args(["locks", "--backend", backend, "--db", db_arg, "--"])
            .arg(&prog)
            .arg("300")
            .assert()
            .success();
    }
    let show = stdout_of(sysmeter().args(["show", "latest", "--db", db_arg]));
    assert!(
        show.contains("call site") && show.contains("worker (locks_phases.c:"),
        "{show}"
    );
    let html = dir.path().join("l.html");
    sysmeter()
        .args(["report", "latest", "--db", db_arg, "--html"])
        .arg(&html)
        .assert()
        .success();
    let page = std::fs::read_to_string(&html).expect("page");
    assert!(page.contains("Contended locks") && page.contains("worker (locks_phases.c:"));
    let compared =
        stdout_of(sysmeter().args(["compare", "--full", "latest~1", "latest", "--db", db_arg]));
    // Compared lock site by lock site (the differential compare of diagnosis runs).
    assert!(compared.contains("waits per lock site"), "{compared}");
    assert!(
        compared.contains("lock mutex: worker (locks_phases.c:"),
        "{compared}"
    );
}

/// Runs `locks --format json` on `argv`; the fixture's stdout and the run record.
pub(crate) fn locks_json(dir: &Path, backend: &str, argv: &[&std::ffi::OsStr]) -> (String, Value) {
    let (run, stdout) = json_run(dir, &["locks", "--backend", backend], argv);
    (stdout, run)
}

both_backends!(a_condition_variable_wait_is_an_event_woken_by_the_signalling_code);
fn a_condition_variable_wait_is_an_event_woken_by_the_signalling_code(backend: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(fixture(dir.path(), backend));
    let (stdout, run) = locks_json(dir.path(), backend, &[prog.as_os_str(), "cond".as_ref()]);
    let rows = rows(&run);
    let waits = line_in(SOURCE, "COND WAIT");
    let signal = format!(
        "producer (locks_phases.c:{})",
        line_in(SOURCE, "COND SIGNAL")
    );
    let cond: Vec<_> = rows.iter().filter(|r| r.0.starts_with("wait ")).collect();
    let cond: Vec<_> = cond.iter().filter(|r| r.0.contains(" condvar: ")).collect();
    assert!(!cond.is_empty(), "no condvar wait: {rows:?} ({stdout})");
    for r in &cond {
        assert!(
            r.0.ends_with(&format!("consumer (locks_phases.c:{waits})")),
            "{r:?}"
        );
        assert!(r.3.contains(&format!("woken from {signal}")), "{r:?}");
    }
    // 50 signals 2 ms apart: the consumer slept on many of them (fewer when it ran late).
    let slept: u64 = cond.iter().map(|r| r.1).sum();
    assert!(
        (10..=60).contains(&slept),
        "{slept} condvar waits: {rows:?}"
    );
    assert!(
        rows.iter()
            .all(|r| !r.0.contains(" condvar: ") || r.0.starts_with("wait "))
    );
}

both_backends!(a_rust_std_mutex_is_found_at_its_lock_line);
fn a_rust_std_mutex_is_found_at_its_lock_line(backend: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    need!(backend_events(backend));
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/programs/locks_std.rs");
    let exe = dir.path().join("locks_std");
    let status = Command::new(std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .args(["-O", "-g", "-C", "force-frame-pointers=yes", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .expect("rustc runs (cargo test needs it)");
    assert!(status.success(), "rustc failed on {}", src.display());
    let (_, run) = locks_json(dir.path(), backend, &[exe.as_os_str()]);
    let rows = rows(&run);
    let site = format!(
        "worker (locks_std.rs:{})",
        line_in(RUST_SOURCE, "LOCK SITE")
    );
    let locks: Vec<_> = rows.iter().filter(|r| r.0.starts_with("lock ")).collect();
    assert!(!locks.is_empty(), "no contended lock: {rows:?}");
    assert!(locks[0].0.starts_with("lock 1 mutex: "), "{rows:?}");
    assert!(
        locks[0].0.ends_with(&site),
        "{} is not at {site}",
        locks[0].0
    );
    let waiting = ["2 threads", "3 threads", "4 threads"];
    assert!(
        waiting.iter().any(|t| locks[0].3.contains(t)),
        "{:?}",
        locks[0]
    );
}

#[test]
fn bad_targets_are_usage_errors() {
    let no_target = sysmeter().args(["locks", "--no-store"]).assert().code(2);
    let text = String::from_utf8_lossy(&no_target.get_output().stderr).into_owned();
    assert!(text.contains("CMD"), "{text}");
    sysmeter()
        .args(["locks", "--no-store", "-p", "999999999"])
        .assert()
        .code(2);
    sysmeter()
        .args(["locks", "--no-store", "--", "no-such-program-sysmeter"])
        .assert()
        .code(127);
}
