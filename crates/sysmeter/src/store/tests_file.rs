//! Store tests on real files in temp directories: crash safety, schema versions, files that
//! are not ours, re-opening, and two writers at once.

use std::sync::{Arc, Barrier};

use super::tests::{begin_fixture_run, fixture_run, put, store_run};
use super::*;

fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nested").join("dir").join("sysmeter.db");
    (dir, path)
}

#[test]
fn open_creates_parent_dirs_and_uses_wal() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).expect("open");
    assert!(path.is_file());
    assert_eq!(store.path(), path);
    let mode: String = store
        .sqlite_conn()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .expect("journal_mode");
    assert_eq!(mode, "wal");
    let fk: bool = store
        .sqlite_conn()
        .pragma_query_value(None, "foreign_keys", |r| r.get(0))
        .expect("foreign_keys");
    assert!(fk);
}

#[test]
fn results_are_visible_to_another_connection_before_finish() {
    let (_dir, path) = temp_db();
    let mut writer = Store::open(&path).expect("open writer");
    let run = begin_fixture_run(&mut writer, "r1");
    for (seq, r) in run.results.iter().enumerate() {
        put(&mut writer, ("r1", seq), r, Put::New);
    }
    // The process "dies" here: no finish_run, no orderly close.
    std::mem::forget(writer);

    let reader = Store::open(&path).expect("open reader");
    let back = reader.load_run("r1").expect("load");
    assert_eq!(back.results, run.results);
    assert_eq!(back.finished_ns, None);
    assert!(!back.interrupted);
    // A run whose process died is incomplete: found by id, never as `latest`.
    assert!(back.is_incomplete());
    assert!(matches!(
        reader.load_run("latest"),
        Err(crate::store::StoreError::RunNotFound { .. })
    ));
}

#[test]
fn reopening_keeps_data_and_does_not_rerun_migrations() {
    let (_dir, path) = temp_db();
    let run = fixture_run("r1", 1);
    store_run(&mut Store::open(&path).expect("first open"), &run);
    // A re-run migration 1 would fail on CREATE TABLE; a reset one would lose the run.
    let store = Store::open(&path).expect("second open");
    assert_eq!(store.load_run("r1").expect("load"), run);
    let version: i64 = store
        .sqlite_conn()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .expect("user_version");
    assert_eq!(version, DB_SCHEMA_VERSION as i64);
}

#[test]
fn newer_schema_is_refused() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).expect("open");
    store
        .sqlite_conn()
        .pragma_update(None, "user_version", 99)
        .expect("set user_version");
    drop(store);
    let err = Store::open(&path).expect_err("newer schema");
    assert!(
        matches!(err, StoreError::NewerSchema { found: 99, .. }),
        "{err:?}"
    );
    let expected = format!(
        "database {} was written by a newer sysmeter (schema 99, this build knows {}); \
         upgrade sysmeter or use another --db",
        path.display(),
        DB_SCHEMA_VERSION
    );
    assert_eq!(err.to_string(), expected);
}

#[test]
fn random_bytes_are_not_a_sysmeter_database() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let mut rng = fastrand::Rng::with_seed(1);
    let junk: Vec<u8> = (0..8192).map(|_| rng.u8(..)).collect();
    std::fs::write(&path, &junk).expect("write junk");
    let err = Store::open(&path).expect_err("junk");
    let msg = err.to_string();
    assert!(matches!(err, StoreError::NotSysmeter { .. }), "{err:?}");
    assert!(
        msg.starts_with(&format!("{} is not a sysmeter database (", path.display())),
        "{msg}"
    );
    assert!(
        msg.ends_with("; move it away or pass another --db"),
        "{msg}"
    );
    // Refusing must not have touched the file.
    assert_eq!(std::fs::read(&path).expect("read back"), junk);
}

#[test]
fn another_programs_sqlite_file_is_refused() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let other = rusqlite::Connection::open(&path).expect("open other");
    other
        .execute_batch("CREATE TABLE notes (text TEXT);")
        .expect("create");
    drop(other);
    let msg = Store::open(&path).expect_err("foreign").to_string();
    assert!(msg.contains("tables sysmeter did not create"), "{msg}");

    let (_dir2, path2) = temp_db();
    std::fs::create_dir_all(path2.parent().expect("parent")).expect("mkdir");
    let other = rusqlite::Connection::open(&path2).expect("open other");
    other
        .pragma_update(None, "application_id", 42)
        .expect("set application_id");
    drop(other);
    let msg = Store::open(&path2).expect_err("foreign").to_string();
    assert!(
        msg.contains("another application, application_id 0x2a"),
        "{msg}"
    );
}

#[test]
fn unusable_directory_says_how_to_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("plain-file");
    std::fs::write(&file, b"x").expect("write");
    let path = file.join("sysmeter.db");
    let msg = Store::open(&path).expect_err("dir is a file").to_string();
    assert!(
        msg.starts_with(&format!("cannot create directory {}", file.display())),
        "{msg}"
    );
    assert!(msg.contains("pass --db PATH"), "{msg}");
}

#[test]
fn unopenable_file_says_how_to_fix() {
    // A directory where the database file should be: named as such, not as SQLite's
    // "unable to open database file".
    let dir = tempfile::tempdir().expect("tempdir");
    let msg = Store::open(dir.path())
        .expect_err("a directory")
        .to_string();
    let expected = format!(
        "{} is not a sysmeter database (it is a directory); move it away or pass another --db",
        dir.path().display()
    );
    assert_eq!(msg, expected);
    // A path under a file cannot be created: the directory step says so.
    let under = dir.path().join("file");
    std::fs::write(&under, "x").expect("write");
    let msg = Store::open(&under.join("x.db"))
        .expect_err("a path under a file")
        .to_string();
    assert!(msg.contains("cannot create directory"), "{msg}");
}

#[test]
fn two_writers_on_one_file_both_land() {
    const RUNS: usize = 15;
    let (_dir, path) = temp_db();
    let start = Arc::new(Barrier::new(2));
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|name| {
            let (path, start) = (path.clone(), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                // Both open (and race to create the schema) at the same moment.
                let mut store = Store::open(&path).expect("open in thread");
                for i in 0..RUNS {
                    let run = fixture_run(&format!("{name}-{i:02}"), i as i64);
                    store_run(&mut store, &run);
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer thread panicked");
    }
    let store = Store::open(&path).expect("open");
    let list = store.list_runs(usize::MAX).expect("list");
    assert_eq!(list.len(), 2 * RUNS);
    assert!(list.iter().all(|l| l.experiments == 2));
}

#[test]
fn default_db_path_prefers_xdg_data_home() {
    let os = |s: &str| Some(std::ffi::OsString::from(s));
    assert_eq!(
        db_path_from(os("/xdg"), os("/home/u")),
        Some(PathBuf::from("/xdg/sysmeter/sysmeter.db"))
    );
    // Unset, empty or relative XDG_DATA_HOME falls back to HOME.
    let home = Some(PathBuf::from("/home/u/.local/share/sysmeter/sysmeter.db"));
    assert_eq!(db_path_from(None, os("/home/u")), home);
    assert_eq!(db_path_from(os(""), os("/home/u")), home);
    assert_eq!(db_path_from(os("rel"), os("/home/u")), home);
    assert_eq!(db_path_from(None, None), None);
    assert_eq!(db_path_from(None, os("")), None);
}

#[test]
fn a_checkpoint_puts_a_stored_run_into_the_database_file_itself() {
    let (dir, path) = temp_db();
    let mut store = Store::open(&path).expect("open");
    store_run(&mut store, &fixture_run("r1", 1));
    // The database file alone, without its write-ahead log: what a checkpoint moved there.
    let runs_in_the_file_alone = || {
        let copy = dir.path().join("alone.db");
        std::fs::copy(&path, &copy).expect("copy the file alone");
        let conn = rusqlite::Connection::open(&copy).expect("open the copy");
        let n = conn.query_row("SELECT count(*) FROM runs", [], |r| r.get::<_, i64>(0));
        drop(conn);
        std::fs::remove_file(&copy).expect("remove the copy");
        n.unwrap_or(0)
    };
    assert_eq!(runs_in_the_file_alone(), 0, "still only in the log");
    store.checkpoint().expect("checkpoint");
    assert_eq!(runs_in_the_file_alone(), 1, "in the database file");
}
