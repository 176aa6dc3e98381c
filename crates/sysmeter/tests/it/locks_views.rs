//! One lock, one row: `locks` on four threads that take one mutex with `pthread_mutex_lock`
//! alone (tests/fixtures/programs/locks_four.c, built -O2 without frame pointers like a
//! distribution's code). The futex view must name the waits' call site at the lock line —
//! the first frame outside the C library and the preload library's hook, not the C
//! library's `futex_wait` — the in-process table must name the same `worker (file:line)`,
//! the futex row must point at the table's row of the same mutex (`in_process`), and the
//! `both_views` finding says what each view counted, with both numbers. On both backends of the futex view, one at a time. Needs root
//! (tracepoints) and a C compiler.

use serde_json::Value;

use crate::locks::{backend_events, field, locks_json};
use crate::support::{compile_fixture, need};

const SOURCE: &str = include_str!("../fixtures/programs/locks_four.c");

crate::locks::both_backends!(both_views_name_one_lock_at_one_site);

/// The artifact `name` of the result, parsed.
fn artifact(result: &Value, name: &str) -> Vec<Value> {
    let found = result["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["name"] == name))
        .unwrap_or_else(|| panic!("no {name} artifact"));
    serde_json::from_str(found["content"].as_str().expect("content")).expect("rows")
}

fn both_views_name_one_lock_at_one_site(backend: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let flags = ["-pthread", "-O2", "-fomit-frame-pointer"];
    let exe = need!(backend_events(backend).and_then(|()| compile_fixture(
        "locks_four",
        dir.path(),
        &flags
    )));
    let (stdout, run) = locks_json(dir.path(), backend, &[exe.as_os_str()]);
    let line = SOURCE.lines().position(|l| l.contains("LOCK SITE"));
    let site = format!("worker (locks_four.c:{})", line.expect("marker") + 1);
    let word = field(&stdout, "lock=", "lock");
    let result = &run["results"][0];
    let rows = artifact(result, "lock rows");
    let hot = rows
        .iter()
        .find(|r| format!("{:#x}", r["word"].as_u64().unwrap_or(0)) == word)
        .unwrap_or_else(|| panic!("no futex row on {word}: {rows:#?}"));
    assert_eq!(hot["site"], site.as_str(), "the futex view's site: {hot}");
    let table = artifact(result, "lock table");
    let key = hot["in_process"]
        .as_str()
        .unwrap_or_else(|| panic!("the futex row names no in-process row: {hot}"));
    let same = table.iter().find(|r| r["lock"] == key);
    let same = same.unwrap_or_else(|| panic!("no {key} in {table:#?}"));
    assert!(key.ends_with(&word), "{key} is not the lock at {word}");
    assert_eq!(same["site"], site.as_str(), "the table's site: {same}");
    let finding = result["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["key"] == "both_views"))
        .unwrap_or_else(|| panic!("no both_views finding: {}", result["findings"]));
    let text = finding["text"].as_str().expect("text");
    let waits = hot_waits(result);
    let contended = same["contended"].as_u64().expect("contended");
    let count = |n: u64| sysmeter::model::units::count(n as f64);
    for part in [
        format!("{} kernel waits", count(waits)),
        format!("{} contended attempts", count(contended)),
    ] {
        assert!(text.contains(&part), "{part} in {text}");
    }
}

/// The futex view's waits on the hot lock (its first `lock` metric).
fn hot_waits(result: &Value) -> u64 {
    let metrics = result["metrics"].as_array().expect("metrics");
    let hot = metrics
        .iter()
        .find(|m| m["name"].as_str().is_some_and(|n| n.starts_with("lock 1 ")));
    hot.and_then(|m| m["summary"]["n"].as_u64())
        .unwrap_or_else(|| panic!("no lock 1 in {metrics:#?}"))
}
