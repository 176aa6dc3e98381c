//! `locks`' in-process table (mutrace's columns) on a known critical section
//! (tests/fixtures/programs/locks_hold.c): four threads take one mutex 25 times each and
//! hold it about 1 ms around a sleep, timing the holds themselves; main takes another mutex
//! 100 times, never contended. The table must count 100 acquisitions of each, the hot one's
//! total hold within 20% of the fixture's own clock, contention and owner changes that fit,
//! none on main's mutex, both named at their lock lines, and a contended wait that agrees
//! with the futex view of the same run. On both backends of the futex view, one at a time.
//! Needs root (tracepoints) and a C compiler.

use serde_json::Value;

use crate::locks::{backend_events, locks_json};
use crate::support::{compile_fixture, need};

const SOURCE: &str = include_str!("../fixtures/programs/locks_hold.c");

crate::locks::both_backends!(the_table_counts_and_times_a_known_critical_section);

fn line_of(marker: &str) -> String {
    let at = SOURCE.lines().position(|l| l.contains(marker));
    format!("locks_hold.c:{}", at.expect("marker in the fixture") + 1)
}

fn number(row: &Value, key: &str) -> f64 {
    row[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} in {row}"))
}

fn the_table_counts_and_times_a_known_critical_section(backend: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = need!(backend_events(backend).and_then(|()| compile_fixture(
        "locks_hold",
        dir.path(),
        &["-pthread"]
    )));
    let (stdout, run) = locks_json(dir.path(), backend, &[exe.as_os_str(), "25".as_ref()]);
    let own_held: f64 = stdout
        .split_whitespace()
        .find_map(|w| w.strip_prefix("held_ns="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("held_ns in {stdout}"));
    let result = &run["results"][0];
    let rows: Vec<Value> = crate::support::artifact_json(result, "lock table");
    let at = |line: &str| {
        let row = rows
            .iter()
            .find(|r| r["site"].as_str().is_some_and(|s| s.contains(line)));
        row.unwrap_or_else(|| panic!("a row at {line} in {rows:#?}"))
            .clone()
    };
    let hot = at(&line_of("/* hot lock */"));
    assert_eq!(hot["kind"], "mutex");
    assert_eq!(number(&hot, "locked"), 100.0, "{hot}");
    let held = number(&hot, "hold_ns");
    assert!(
        (held - own_held).abs() <= 0.2 * own_held,
        "held {held} ns by the table, {own_held} ns by the fixture's clock"
    );
    let contended = number(&hot, "contended");
    assert!((1.0..=100.0).contains(&contended), "{hot}");
    let changes = number(&hot, "owner_changes");
    assert!((1.0..=99.0).contains(&changes), "{hot}");
    assert!(number(&hot, "hold_max_ns") >= held / 100.0, "{hot}");
    let quiet = at(&line_of("pthread_mutex_lock(&quiet)"));
    assert_eq!(number(&quiet, "locked"), 100.0, "{quiet}");
    assert_eq!(number(&quiet, "contended"), 0.0, "{quiet}");
    agrees_with_the_futex_view(result, number(&hot, "wait_ns"));
    let finding = result["findings"].as_array().expect("findings");
    assert!(
        finding.iter().any(|f| f["key"] == "held_lock"),
        "{finding:?}"
    );
}

/// The futex view saw the same waiting: its hot lock's total wait is the in-process wait of
/// the contended acquisitions, give or take the spinning before a futex call.
fn agrees_with_the_futex_view(result: &Value, wait: f64) {
    let futex_wait: f64 = result["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .filter(|m| m["name"].as_str().is_some_and(|n| n.starts_with("lock ")))
        .map(|m| number(&m["summary"], "mean") * number(&m["summary"], "n"))
        .sum();
    assert!(
        futex_wait >= 0.5 * wait && futex_wait <= 1.5 * wait,
        "futex view {futex_wait} ns, in-process table {wait} ns"
    );
}

/// A child of glibc's raw clone() (a copy of the process; no fork handler runs) counts its
/// acquisitions under its own pid (locks_raw_clone.c): 300 in the child's row, the parent's
/// 100 in the parent's, never 400 charged to the parent.
#[test]
fn a_raw_clone_child_counts_under_its_own_pid() {
    let _on = crate::support::observing(&[crate::support::Event::Futex]);
    let dir = tempfile::tempdir().expect("temp dir");
    let exe = need!(backend_events("bpf").and_then(|()| compile_fixture(
        "locks_raw_clone",
        dir.path(),
        &["-pthread"]
    )));
    let (stdout, run) = locks_json(dir.path(), "bpf", &[exe.as_os_str()]);
    let pid_of = |who: &str| -> String {
        let word = stdout.split_whitespace().find_map(|w| w.strip_prefix(who));
        word.unwrap_or_else(|| panic!("{who} in {stdout}"))
            .to_string()
    };
    let (parent, child) = (pid_of("parent="), pid_of("child="));
    let rows: Vec<Value> = crate::support::artifact_json(&run["results"][0], "lock table");
    let locked_by = |pid: &str| -> f64 {
        let of = |r: &&Value| {
            r["lock"]
                .as_str()
                .is_some_and(|l| l.starts_with(&format!("{pid}:")))
        };
        rows.iter().filter(of).map(|r| number(r, "locked")).sum()
    };
    assert_eq!(locked_by(&parent), 100.0, "{rows:#?}");
    assert_eq!(locked_by(&child), 300.0, "{rows:#?}");
}
