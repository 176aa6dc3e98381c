//! Integration tests of the fs group: the five experiments report metrics, curves and
//! findings; the temporary files are gone afterwards; a memory file system triggers the
//! O_DIRECT fallback; a bad --dir fails only the fs experiments; the file cache size found
//! inside a memory-limited cgroup is near the limit (root only); fs.remote_read runs against
//! a FUSE mount the test makes (root + bindfs), else against a plain directory.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use serde_json::Value;

use crate::support::cmd::BENCH_JSON;
use crate::support::{assert_says, error_of, exclusive, is_root, result, skip, sysmeter};

mod root;

fn bench(args: &[&str]) -> (Value, i32) {
    let _alone = exclusive();
    let out = sysmeter()
        .args(BENCH_JSON)
        .args(args)
        .output()
        .expect("run");
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("JSON: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap_or(-1))
}

fn finding<'a>(r: &'a Value, key: &str) -> Option<&'a Value> {
    r["findings"]
        .as_array()?
        .iter()
        .find(|f| f["key"].as_str().is_some_and(|k| k.starts_with(key)))
}

fn median(r: &Value, name: &str) -> f64 {
    crate::support::median(r, name)
        .unwrap_or_else(|| panic!("metric {name} missing in {}", r["id"]))
}

/// File system type of the mount holding `dir` (longest mount point prefix in /proc/mounts).
fn fs_type(dir: &Path) -> String {
    let dir = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some((*f.get(1)?, *f.get(2)?))
        })
        .filter(|(m, _)| dir.starts_with(m))
        .max_by_key(|(m, _)| m.len())
        .map(|(_, t)| t.to_string())
        .unwrap_or_default()
}

/// A directory on the disk the repository lives on (not /tmp, which may be tmpfs).
fn disk_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temp dir")
}

#[test]
fn bench_fs_quick_measures_everything_and_cleans_up() {
    let dir = disk_dir();
    let d = dir.path().to_str().expect("utf-8");
    let (run, _) = bench(&["fs", "--dir", d]);
    let read = result(&run, "fs.read");
    assert_eq!(read["status"], "ok", "{read}");
    assert_eq!(read["series"].as_array().map(Vec::len), Some(4));
    for name in [
        "uncached random 4 KiB read, 1 MiB file",
        "cached sequential 4 KiB read, 4 MiB file",
    ] {
        assert!(median(read, name) > 0.0, "{name}");
    }
    let thr = median(read, "cached random throughput, 4 MiB file");
    assert!(
        thr > 1e6 && thr < 1e12,
        "cached throughput {thr} B/s out of bounds"
    );
    for key in ["device", "random_vs_sequential", "uncached_vs_cached"] {
        assert!(finding(read, key).is_some(), "fs.read finding {key}");
    }
    let cache = result(&run, "fs.cache_size");
    assert_eq!(cache["status"], "ok", "{cache}");
    assert!(median(cache, "file cache size") >= 4.0 * 1048576.0);
    assert!(finding(cache, "memory_bounds").is_some());
    let cont = result(&run, "fs.contention");
    assert_eq!(cont["status"], "ok", "{cont}");
    let lat = &cont["series"][0]["points"];
    assert_eq!(lat.as_array().map(Vec::len), Some(3), "1, 2, 4 threads");
    assert!(median(cont, "4 threads: aggregate throughput") > 0.0);
    let write = result(&run, "fs.write");
    assert_eq!(write["status"], "ok", "{write}");
    assert!(median(write, "4 KiB write + fsync") > 0.0);
    assert!(finding(write, "durability_cost").is_some());
    let remote = result(&run, "fs.remote_read");
    assert_eq!(remote["status"], "skipped");
    assert!(
        remote["skip"]["hint"]
            .as_str()
            .is_some_and(|h| h.contains("--remote-dir"))
    );
    let left: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .expect("ls")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "temporary files left behind: {left:?}");
}

#[test]
fn memory_file_system_uses_and_reports_the_fallback() {
    let shm = Path::new("/dev/shm");
    if fs_type(shm) != "tmpfs" {
        skip!(Shm, "/dev/shm is not a tmpfs here ({:?})", fs_type(shm));
    }
    let dir = tempfile::tempdir_in(shm).expect("dir in /dev/shm");
    let (run, _) = bench(&["fs.read", "--dir", dir.path().to_str().expect("utf-8")]);
    let read = result(&run, "fs.read");
    assert_eq!(read["status"], "ok", "{read}");
    let f = finding(read, "uncached_fallback").expect("fallback finding");
    assert_says(f, "posix_fadvise");
    let note = read["metrics"][0]["note"].as_str().unwrap_or("");
    assert!(
        note.contains("eviction") && note.contains("resident"),
        "{note}"
    );
    assert_eq!(std::fs::read_dir(dir.path()).expect("ls").count(), 0);
}

#[test]
fn a_bad_dir_fails_the_fs_experiments_and_keeps_the_others() {
    let (run, _) = bench(&["cpu.loop", "fs.read", "--dir", "/nonexistent/sysmeter-test"]);
    assert_eq!(result(&run, "cpu.loop")["status"], "ok");
    let err = error_of(result(&run, "fs.read"));
    assert!(
        err.contains("/nonexistent/sysmeter-test") && err.contains("--dir"),
        "{err}"
    );
    assert_eq!(err.matches(". ").count(), 0, "one sentence: {err}");
}

#[test]
fn a_read_only_dir_is_refused_with_the_fix() {
    let dir = tempfile::tempdir().expect("dir");
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).expect("mkdir");
    let mounted = is_root()
        && StdCommand::new("mount")
            .args(["-t", "tmpfs", "-o", "ro,size=1g", "tmpfs"])
            .arg(&ro)
            .status()
            .is_ok_and(|s| s.success());
    if !mounted {
        if is_root() {
            skip!(Mount, "cannot mount a read-only tmpfs as root here");
        }
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    }
    let (run, _) = bench(&["fs.write", "--dir", ro.to_str().expect("utf-8")]);
    if mounted {
        let _ = StdCommand::new("umount").arg(&ro).status();
    }
    let err = error_of(result(&run, "fs.write"));
    assert!(
        err.contains("--dir") && err.contains(ro.to_str().unwrap_or("?")),
        "{err}"
    );
}
