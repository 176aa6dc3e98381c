//! The one output rule (issue 13, items 1 and 2), through the binary, for every writer of a
//! named file (`export --out`, `report --html`, `report --markdown`, `bench --out`): a FIFO
//! and a character device are written into and stay what they are, a symlink stays a
//! symlink and its target is updated with its mode and owner kept, `-` is stdout, a
//! directory is refused, and the database (or its -wal/-shm) is never an output (exit 2).

use std::os::unix::fs::{FileTypeExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use sysmeter::store::Store;

use crate::support::sample::{db_with_sample_run, sample_run_file};
use crate::support::sysmeter_db;
use crate::support::{is_root, need, stderr_of, sysmeter};

/// A database holding the fixture run, and the fixture run as a JSON file.
fn fixtures(dir: &Path) -> (PathBuf, PathBuf) {
    (db_with_sample_run(dir).0, sample_run_file(dir))
}

/// Every writer of a named file, as the arguments that write to `out` (the run from `db`
/// or `json`), and a piece of text its output always contains.
fn writers(db: &Path, json: &Path, out: &Path) -> Vec<(Vec<std::ffi::OsString>, &'static str)> {
    let os = |parts: &[&std::ffi::OsStr]| parts.iter().map(|p| p.to_os_string()).collect();
    vec![
        (
            os(&[
                "export".as_ref(),
                "--openmetrics".as_ref(),
                "--db".as_ref(),
                db.as_os_str(),
                "--out".as_ref(),
                out.as_os_str(),
            ]),
            "# EOF",
        ),
        (
            os(&[
                "report".as_ref(),
                json.as_os_str(),
                "--html".as_ref(),
                out.as_os_str(),
            ]),
            "<html",
        ),
        (
            os(&[
                "report".as_ref(),
                json.as_os_str(),
                "--markdown".as_ref(),
                out.as_os_str(),
            ]),
            "os.syscall",
        ),
    ]
}

/// Runs every writer into `out` and checks the text each one leaves behind with `read`.
fn each_writer(dir: &Path, out: &Path, read: &mut dyn FnMut(&Path) -> String) {
    let (db, json) = fixtures(dir);
    for (args, needle) in writers(&db, &json, out) {
        sysmeter().args(&args).assert().success();
        let text = read(out);
        assert!(
            text.contains(needle),
            "{args:?}: no {needle} in {text:.200}"
        );
    }
}

#[test]
fn a_symlinked_out_updates_its_target_keeping_mode_and_owner() {
    let dir = tempfile::tempdir().expect("tempdir");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).expect("mkdir");
    let target = elsewhere.join("report.txt");
    std::fs::write(&target, "old").expect("write");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let owner = if is_root() {
        std::os::unix::fs::chown(&target, Some(65534), Some(65534)).expect("chown");
        65534
    } else {
        std::fs::metadata(&target).expect("stat").uid()
    };
    let link = dir.path().join("link.txt");
    std::os::unix::fs::symlink(&target, &link).expect("symlink");
    each_writer(dir.path(), &link, &mut |p| {
        assert!(
            p.symlink_metadata()
                .expect("lstat")
                .file_type()
                .is_symlink()
        );
        let m = std::fs::metadata(&target).expect("stat target");
        assert_eq!(m.permissions().mode() & 0o777, 0o640, "mode kept");
        assert_eq!(m.uid(), owner, "owner kept");
        std::fs::read_to_string(&target).expect("read target")
    });
    // Nothing but the link, the target and the fixtures: no temporary file left behind.
    let names: Vec<_> = std::fs::read_dir(&elsewhere)
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["report.txt"]);
}

/// What is written into `fifo` while `run` runs. The read end is opened non-blocking
/// first, so neither side waits for the other (and a writer that replaced the FIFO instead
/// of opening it cannot hang the test).
fn read_fifo_while(fifo: &Path, run: impl FnOnce()) -> String {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .expect("open the FIFO");
    let done = AtomicBool::new(false);
    std::thread::scope(|s| {
        let drain = s.spawn(|| {
            let (mut text, mut buf) = (Vec::new(), [0u8; 1 << 16]);
            loop {
                match reader.read(&mut buf) {
                    Ok(n) if n > 0 => text.extend_from_slice(&buf[..n]),
                    Ok(_) if done.load(Ordering::SeqCst) => break,
                    Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => panic!("{e}"),
                    _ => std::thread::sleep(std::time::Duration::from_millis(1)),
                }
            }
            String::from_utf8_lossy(&text).into_owned()
        });
        run();
        done.store(true, Ordering::SeqCst);
        drain.join().expect("drain")
    })
}

#[test]
fn a_fifo_at_out_is_written_into_and_stays_a_fifo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let (db, json) = fixtures(dir.path());
    for (args, needle) in writers(&db, &json, &fifo) {
        let text = read_fifo_while(&fifo, || {
            sysmeter().args(&args).assert().success();
        });
        assert!(text.contains(needle), "{args:?}: {text:.200}");
        let m = std::fs::symlink_metadata(&fifo).expect("lstat");
        assert!(m.file_type().is_fifo(), "{args:?} replaced the FIFO");
    }
}

#[test]
fn a_character_device_at_out_is_written_into_and_stays_a_device() {
    let dir = tempfile::tempdir().expect("tempdir");
    let dev = dir.path().join("null");
    need!(crate::support::needs::root("make a device node with mknod"));
    // A private /dev/null (major 1, minor 3): writes succeed and vanish.
    let made = std::process::Command::new("mknod")
        .arg(&dev)
        .args(["c", "1", "3"])
        .status()
        .expect("mknod");
    assert!(made.success(), "mknod failed");
    let (db, json) = fixtures(dir.path());
    for (args, _) in writers(&db, &json, &dev) {
        sysmeter().args(&args).assert().success();
        let m = std::fs::symlink_metadata(&dev).expect("lstat");
        assert!(
            m.file_type().is_char_device(),
            "{args:?} replaced the device"
        );
        assert_eq!(m.len(), 0);
    }
}

#[test]
fn dash_and_a_link_to_stdout_reach_stdout_and_a_directory_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, json) = fixtures(dir.path());
    for (args, needle) in writers(&db, &json, Path::new("-")) {
        let out = sysmeter().args(&args).assert().success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(text.contains(needle), "{args:?}: {text:.200}");
        assert!(
            !dir.path().join("-").exists(),
            "{args:?} wrote a file named -"
        );
    }
    // A link to this process's stdout (what /dev/stdout is) reaches the pipe, and stays.
    let link = dir.path().join("stdout");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).expect("symlink");
    for (args, needle) in writers(&db, &json, &link) {
        let out = sysmeter().args(&args).assert().success();
        let text = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(text.contains(needle), "{args:?}: {text:.200}");
        assert!(
            link.symlink_metadata()
                .expect("lstat")
                .file_type()
                .is_symlink()
        );
    }
    for (args, _) in writers(&db, &json, dir.path()) {
        let err = stderr_of(sysmeter().args(&args), 2);
        assert!(err.contains("is a directory"), "{args:?}: {err}");
    }
}

#[test]
fn the_database_is_never_an_output() {
    let _alone = crate::support::exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, _) = fixtures(dir.path());
    let before = std::fs::read(&db).expect("read db");
    let link = dir.path().join("innocent.json");
    std::os::unix::fs::symlink(&db, &link).expect("symlink");
    for out in [&db, &link] {
        let err = stderr_of(
            sysmeter()
                .args(["bench", "--quick", "--rounds", "1", "--only", "cpu.loop"])
                .arg("--db")
                .arg(&db)
                .arg("--out")
                .arg(out),
            2,
        );
        assert!(err.contains("is the database"), "{err}");
        assert!(!err.contains("stored as run"), "{err}");
        let err = stderr_of(sysmeter_db(&db, &["export"]).arg("--out").arg(out), 2);
        assert!(err.contains("is the database"), "{err}");
    }
    assert_eq!(
        std::fs::read(&db).expect("read db"),
        before,
        "database changed"
    );
    Store::open(&db)
        .expect("still a database")
        .load_run("latest")
        .expect("run kept");
}
