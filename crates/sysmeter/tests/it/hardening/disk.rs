//! A full disk or an exhausted quota, named as such and losing nothing (issue 47): under the
//! store on open and write (`history`, `import`, `bench` refused before measuring), and
//! under `--out`, where the run is still stored and its report goes to the command's stream
//! after one sentence naming the disk. A full disk is a 1 MiB tmpfs (root) or `/dev/full`
//! (anyone); an exhausted quota is EDQUOT injected into the writes by `strace`, since this
//! kernel's tmpfs and ext4 here are built without quota support.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use sysmeter::model::fixture::sample_run;

use super::{record, stored_ids};
use crate::support::full_disk::{fill, mount_small_tmpfs, strace_injects};
use crate::support::sample::sample_run_file;
use crate::support::skip::Missing;
use crate::support::{need, stdout_of, sysmeter};

/// A 1 MiB tmpfs mounted on `dir`, unmounted when dropped.
struct SmallFs(PathBuf);

impl SmallFs {
    /// Mounts a 1 MiB tmpfs on `mnt` (created here), or says why it cannot.
    fn mount(mnt: &Path) -> Result<SmallFs, Missing> {
        mount_small_tmpfs(mnt)?;
        Ok(SmallFs(mnt.to_path_buf()))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// `sysmeter ARGS --db DB`, which must fail with exit code 1: its stderr.
fn refused<S: AsRef<OsStr> + std::fmt::Debug>(args: &[S], db: &Path) -> String {
    let out = sysmeter()
        .args(args)
        .arg("--db")
        .arg(db)
        .output()
        .expect("run");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
    err
}

#[test]
fn a_full_disk_is_named_as_such_with_the_fix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mnt = dir.path().join("small");
    let _fs = need!(SmallFs::mount(&mnt));
    let db = mnt.join("runs.db");
    let first = sample_run_file(dir.path());
    stdout_of(sysmeter().arg("import").arg("--db").arg(&db).arg(&first));
    fill(&mnt);
    let second = record(dir.path(), "second", |d| {
        d["id"] = "20261124T000000Z-2nd0".into()
    });
    // A bench is refused before it measures anything, so nothing measured is lost.
    let attempts = [
        vec!["history".to_string()],
        vec!["import".to_string(), second.to_str().expect("utf-8").into()],
        ["bench", "--quick", "--only", "cpu.loop"]
            .map(String::from)
            .to_vec(),
    ];
    for args in attempts {
        let err = refused(&args, &db);
        assert!(err.contains("is full"), "{args:?}: {err}");
        assert!(err.contains("free some space"), "{args:?}: {err}");
        assert!(!err.contains("disk I/O error"), "{args:?}: {err}");
    }
    std::fs::remove_file(mnt.join("fill")).expect("make room");
    assert_eq!(
        stored_ids(&db),
        [sample_run().id],
        "what was stored is still there"
    );
}

/// `run --db DB --format markdown --out OUT -- true` run by `runner` (e.g. under strace):
/// its exit code and stderr.
fn run_to(runner: &mut Command, db: &Path, out: &str) -> (Option<i32>, String) {
    let done = runner
        .args(["run", "--format", "markdown", "--out", out, "--db"])
        .arg(db)
        .args(["--", "true"])
        .env("NO_COLOR", "1")
        .output()
        .expect("run sysmeter");
    (
        done.status.code(),
        String::from_utf8_lossy(&done.stderr).into_owned(),
    )
}

/// The run `run_to` stored in `db` is there, and its report — as `report` renders it from
/// the store — is what the command printed in place of the `--out` it could not write.
fn assert_stored_and_shown(db: &Path, err: &str) {
    let ids = stored_ids(db);
    assert_eq!(ids.len(), 1, "the run is stored: {err}");
    let id = &ids[0];
    assert!(
        err.contains(&format!(
            "the report follows on stderr instead, and the run is stored as {id}"
        )),
        "{err}"
    );
    let report = stdout_of(
        sysmeter()
            .args(["report", id, "--markdown", "-", "--db"])
            .arg(db),
    );
    let title = report.lines().next().expect("a title");
    assert!(
        err.contains(title),
        "the report is printed: {title:?} in\n{err}"
    );
    assert_eq!(
        err.lines().filter(|l| l.starts_with("error:")).count(),
        1,
        "{err}"
    );
}

#[test]
fn out_on_a_full_device_keeps_the_report_and_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("runs.db");
    let (code, err) = run_to(&mut sysmeter_cmd(), &db, "/dev/full");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("cannot write --out /dev/full: the file system holding /dev is full"),
        "{err}"
    );
    assert!(err.contains("write --out to another file system"), "{err}");
    assert_stored_and_shown(&db, &err);
    // `report` and `export` of the stored run: named the same way; the run stays stored.
    let id = &stored_ids(&db)[0];
    for (flag, args) in [
        ("--markdown", vec!["report", id, "--markdown", "/dev/full"]),
        (
            "--out",
            vec!["export", id, "--format", "json", "--out", "/dev/full"],
        ),
    ] {
        let err = refused(&args, &db);
        let said = format!("cannot write {flag} /dev/full: the file system holding /dev is full");
        assert!(err.contains(&said), "{args:?}: {err}");
    }
    assert_eq!(stored_ids(&db).len(), 1);
}

#[test]
fn out_on_a_full_file_system_keeps_the_report_and_the_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mnt = dir.path().join("small");
    let _fs = need!(SmallFs::mount(&mnt));
    fill(&mnt);
    let db = dir.path().join("runs.db");
    let out = mnt.join("report.md");
    let (code, err) = run_to(&mut sysmeter_cmd(), &db, out.to_str().expect("utf-8"));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "the file system holding {} is full",
            mnt.display()
        )),
        "{err}"
    );
    assert_stored_and_shown(&db, &err);
    let left: Vec<_> = std::fs::read_dir(&mnt)
        .expect("list")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(
        left,
        ["fill"],
        "no report and no temporary file left on the full disk"
    );
}

/// `strace … -e inject=SYSCALL:error=EDQUOT [-P PATH] sysmeter`: every such call (on PATH)
/// of sysmeter's main thread fails as on a user whose quota is used up. Not its children
/// (no `-f`): `run` observes its command itself.
fn over_quota(syscall: &str, path: Option<&str>) -> Command {
    let mut c = Command::new("strace");
    c.args(["-qq", "-o", "/dev/null"]);
    if let Some(p) = path {
        c.args(["-P", p]);
    }
    c.args(["-e", &format!("inject={syscall}:error=EDQUOT")]);
    c.arg(assert_cmd::cargo::cargo_bin("sysmeter"));
    c
}

/// The sysmeter binary as a plain `Command`.
fn sysmeter_cmd() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("sysmeter"))
}

#[test]
fn an_exhausted_quota_is_named_as_such_on_the_store_and_on_out() {
    need!(strace_injects());
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("runs.db");
    let first = sample_run_file(dir.path());
    stdout_of(sysmeter().arg("import").arg("--db").arg(&db).arg(&first));
    // SQLite writes with pwrite64, and so does the question sysmeter then asks the disk.
    let second = record(dir.path(), "second", |d| {
        d["id"] = "20261124T000000Z-2nd0".into()
    });
    let done = over_quota("pwrite64", None)
        .args(["import", "--db"])
        .arg(&db)
        .arg(&second)
        .output()
        .expect("import");
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{err}");
    assert!(err.contains("the disk quota of uid"), "{err}");
    assert!(
        err.contains("is exhausted; delete some of your files there or ask for a larger quota"),
        "{err}"
    );
    assert!(
        !err.contains("disk I/O error") && !err.contains("is full"),
        "{err}"
    );
    assert_eq!(
        stored_ids(&db),
        [sample_run().id],
        "what was stored is still there"
    );
    // An `--out` on a device whose writes say EDQUOT: the run is stored, the report shown.
    let out_db = dir.path().join("out.db");
    let (code, err) = run_to(
        &mut over_quota("write", Some("/dev/null")),
        &out_db,
        "/dev/null",
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("cannot write --out /dev/null: the disk quota of uid"),
        "{err}"
    );
    assert_stored_and_shown(&out_db, &err);
}
