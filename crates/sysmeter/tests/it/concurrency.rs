//! Concurrency and integrity of the SQLite store, through the binary: two benches writing
//! one database at once both land; a database of a newer schema is refused with a clear
//! message by every command that opens it; damaged files give one clear error, never a
//! panic.

use std::path::{Path, PathBuf};
use std::process::{Command as Process, Output, Stdio};

use predicates::prelude::*;
use serde_json::Value;

use crate::support::sysmeter_db;
use crate::support::{json_out, stderr_of, sysmeter};

fn history(db: &Path) -> Vec<Value> {
    let v = json_out(&mut sysmeter_db(db, &["history", "--format", "json"]));
    v.as_array().expect("list").clone()
}

fn bench_process(db: &Path) -> std::process::Child {
    Process::new(assert_cmd::cargo::cargo_bin("sysmeter"))
        .args([
            "bench", "--quick", "--only", "cpu.loop", "--format", "json", "--db",
        ])
        .arg(db)
        .env_remove("SYSMETER_DB")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start bench")
}

fn succeeded(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn two_benches_writing_one_database_at_once_both_land() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("shared.db");
    // Round 0 also races on creating the database; later rounds on writing into it.
    for round in 0..3 {
        let first = bench_process(&db);
        let second = bench_process(&db);
        let (first, second) = (
            first.wait_with_output().expect("bench 1"),
            second.wait_with_output().expect("bench 2"),
        );
        succeeded(&format!("round {round}, bench 1"), &first);
        succeeded(&format!("round {round}, bench 2"), &second);
        let runs = history(&db);
        assert_eq!(runs.len(), 2 * (round + 1), "{runs:?}");
        for out in [&first, &second] {
            let printed: Value = serde_json::from_slice(&out.stdout).expect("bench JSON");
            let stored = runs
                .iter()
                .find(|r| r["id"] == printed["id"])
                .unwrap_or_else(|| panic!("run {} not stored", printed["id"]));
            assert_eq!(
                (stored["ok"].as_u64(), stored["interrupted"].as_bool()),
                (Some(1), Some(false))
            );
        }
    }
    // Every stored run reads back whole.
    for r in history(&db) {
        let id = r["id"].as_str().expect("id");
        sysmeter_db(&db, &["show", id, "--format", "json"])
            .assert()
            .success()
            .stdout(predicate::str::contains("\"cpu.loop\""));
    }
}

/// `dir/runs.db` holding one quick bench of `cpu.loop`.
fn db_of_one_bench(dir: &Path) -> PathBuf {
    let db = dir.join("runs.db");
    sysmeter_db(&db, &["bench", "--quick", "--only", "cpu.loop"])
        .assert()
        .success();
    db
}

#[test]
fn a_database_of_a_newer_schema_is_refused_by_every_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = db_of_one_bench(dir.path());
    let conn = rusqlite::Connection::open(&db).expect("open with rusqlite");
    conn.pragma_update(None, "user_version", 99)
        .expect("set user_version");
    drop(conn);
    let message = format!(
        "database {} was written by a newer sysmeter (schema 99",
        db.display()
    );
    let commands: [&[&str]; 5] = [
        &["history"],
        &["show", "latest"],
        &["export", "--openmetrics"],
        &["compare", "latest", "latest"],
        &["bench", "--quick", "--only", "cpu.loop"],
    ];
    for args in commands {
        sysmeter()
            .args(args)
            .arg("--db")
            .arg(&db)
            .assert()
            .code(1)
            .stdout(predicate::str::is_empty())
            .stderr(predicate::str::contains(message.as_str()))
            .stderr(predicate::str::contains(
                "upgrade sysmeter or use another --db",
            ));
    }
}

/// Overwrites `len` bytes at `offset` of `path` with a fixed junk pattern.
fn damage(path: &Path, offset: usize, len: usize) {
    let mut bytes = std::fs::read(path).expect("read db");
    assert!(
        bytes.len() >= offset + len,
        "database smaller than expected: {}",
        bytes.len()
    );
    for (i, b) in bytes[offset..offset + len].iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(37) ^ 0xa5;
    }
    std::fs::write(path, bytes).expect("write db");
}

/// Every reading command on `db` fails with exit 1 and a message naming the file, never a
/// panic.
fn assert_clear_failure(db: &Path, what: &str) {
    let commands: [&[&str]; 4] = [
        &["history"],
        &["show", "latest"],
        &["export", "--openmetrics"],
        &["compare", "latest", "latest"],
    ];
    for args in commands {
        let stderr = stderr_of(sysmeter().args(args).arg("--db").arg(db), 1);
        assert!(!stderr.contains("panicked"), "{what}, {args:?}: {stderr}");
        assert!(stderr.starts_with("error: "), "{what}, {args:?}: {stderr}");
        assert!(
            stderr.contains(&db.display().to_string()),
            "{what}, {args:?}: {stderr}"
        );
        assert_eq!(
            stderr.trim_end().lines().count(),
            1,
            "one sentence: {stderr}"
        );
    }
}

#[test]
fn damaged_databases_give_a_clear_error_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = db_of_one_bench(dir.path());
    let pristine = std::fs::read(&db).expect("read db");
    let page = 4096;
    assert!(pristine.len() > 3 * page, "expected a multi-page database");
    // Page 1 (the header and schema) intact, every later page destroyed: the file still
    // opens as sysmeter's, and the damage shows when the runs are read.
    damage(&db, page, pristine.len() - page);
    assert_clear_failure(&db, "damaged pages");
    // A destroyed header: not a database at all.
    std::fs::write(&db, &pristine).expect("restore");
    damage(&db, 0, 100);
    assert_clear_failure(&db, "damaged header");
    // Cut in half, as by a full disk or an interrupted copy.
    std::fs::write(&db, &pristine[..pristine.len() / 2]).expect("truncate");
    assert_clear_failure(&db, "truncated");
}
