//! The fs tests that need root: `fs.cache_size` inside a memory-limited cgroup (v2
//! `memory.max` or v1 `memory.limit_in_bytes`, whichever hierarchy has the memory
//! controller), and `fs.remote_read` against a FUSE mount made with bindfs.

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use super::{bench, disk_dir, finding, fs_type, median, result};
use crate::support::needs::root;
use crate::support::skip::{Cap, Missing};
use crate::support::{assert_says, need, skip};

const LIMIT: u64 = 256 << 20;

/// A memory cgroup made for one test, removed on drop (after its processes exited).
struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// v2 when the unified hierarchy has the memory controller, else v1's memory hierarchy.
    fn create(limit: u64) -> Result<Cgroup, Missing> {
        Cgroup::try_create(limit).map_err(|e| {
            Missing::new(
                Cap::Cgroup,
                format!("cannot make a memory-limited cgroup: {e}"),
            )
        })
    }

    fn try_create(limit: u64) -> Result<Cgroup, String> {
        let name = format!("sysmeter-test-{}", std::process::id());
        let v2 = ["/sys/fs/cgroup", "/sys/fs/cgroup/unified"]
            .into_iter()
            .find(|m| {
                std::fs::read_to_string(format!("{m}/cgroup.controllers"))
                    .is_ok_and(|c| c.split_whitespace().any(|w| w == "memory"))
            });
        let (dir, file) = match v2 {
            Some(m) => (PathBuf::from(m).join(&name), "memory.max"),
            None if Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() => (
                PathBuf::from("/sys/fs/cgroup/memory").join(&name),
                "memory.limit_in_bytes",
            ),
            None => return Err("no cgroup hierarchy with the memory controller".into()),
        };
        std::fs::create_dir(&dir).map_err(|e| format!("mkdir {}: {e}", dir.display()))?;
        let cg = Cgroup { dir };
        std::fs::write(cg.dir.join(file), limit.to_string())
            .map_err(|e| format!("writing {file}: {e}"))?;
        Ok(cg)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

#[test]
fn cache_size_in_a_memory_limited_cgroup_finds_the_limit() {
    need!(root("create a memory cgroup"));
    let dir = disk_dir();
    let on = fs_type(dir.path());
    if matches!(on.as_str(), "tmpfs" | "ramfs" | "overlay") {
        skip!(Disk, "{} is on {on}, not a disk", dir.path().display());
    }
    let cg = need!(Cgroup::create(LIMIT));
    let exe = assert_cmd::cargo::cargo_bin("sysmeter");
    let script = format!(
        "echo $$ > {}/cgroup.procs && exec {} bench fs.cache_size --no-store --format json \
         --max-size 512M --dir {}",
        cg.dir.display(),
        exe.display(),
        dir.path().display()
    );
    let out = StdCommand::new("sh")
        .args(["-c", &script])
        .output()
        .expect("sh");
    let run: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("JSON: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    drop(cg);
    let r = result(&run, "fs.cache_size");
    assert_eq!(r["status"], "ok", "{r}");
    // The timing knee, or — when a loaded machine blurs the per-block times — the
    // documented fallback: where mincore saw the files stop being resident.
    assert!(
        finding(r, "knee").is_some() || finding(r, "residency_drop").is_some(),
        "neither a knee nor a residency drop: {}",
        r["findings"]
    );
    let size = median(r, "file cache size");
    let ratio = size / LIMIT as f64;
    assert!(
        (0.7..=1.3).contains(&ratio),
        "cache size {size} is {ratio:.2}x the limit"
    );
    let bounds = finding(r, "memory_bounds").expect("cross-check");
    assert_says(bounds, "256 MiB");
}

/// A bindfs (FUSE) mount of `src` on `dst`, unmounted on drop.
struct FuseMount {
    dst: PathBuf,
}

impl Drop for FuseMount {
    fn drop(&mut self) {
        let unmounted = StdCommand::new("fusermount")
            .arg("-u")
            .arg(&self.dst)
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            let _ = StdCommand::new("umount").arg(&self.dst).status();
        }
    }
}

fn fuse_mount(src: &Path, dst: &Path) -> Result<FuseMount, Missing> {
    root("mount a FUSE file system")?;
    let status = StdCommand::new("bindfs")
        .arg(src)
        .arg(dst)
        .status()
        .map_err(|e| {
            let why = format!("bindfs not runnable ({e}); apt-get install bindfs");
            Missing::new(Cap::Bindfs, why)
        })?;
    if !status.success() {
        return Err(Missing::new(
            Cap::Bindfs,
            format!(
                "bindfs {} {} failed: {status}",
                src.display(),
                dst.display()
            ),
        ));
    }
    Ok(FuseMount {
        dst: dst.to_path_buf(),
    })
}

#[test]
fn remote_read_against_a_fuse_mount_or_a_plain_directory() {
    let base = disk_dir();
    let (src, dst) = (base.path().join("src"), base.path().join("mnt"));
    std::fs::create_dir(&src).expect("src");
    std::fs::create_dir(&dst).expect("mnt");
    let mount = fuse_mount(&src, &dst)
        .inspect_err(|m| m.skip_part("the FUSE mount; measuring a plain directory instead"))
        .ok();
    let local = base.path().to_str().expect("utf-8");
    let remote = dst.to_str().expect("utf-8");
    let (run, _) = bench(&["fs.remote_read", "--dir", local, "--remote-dir", remote]);
    let r = result(&run, "fs.remote_read");
    assert_eq!(r["status"], "ok", "{r}");
    assert!(median(r, "uncached random 4 KiB read, 1 MiB file") > 0.0);
    assert!(
        finding(r, "remote_vs_local").is_some(),
        "ratios: {}",
        r["findings"]
    );
    let device = finding(r, "device").expect("device");
    if mount.is_some() {
        assert!(
            device["text"].as_str().is_some_and(|t| t.contains("fuse")),
            "{device}"
        );
        assert!(finding(r, "server_cache").is_some());
    }
    drop(mount);
    assert_eq!(
        std::fs::read_dir(&src).expect("ls").count(),
        0,
        "files left on the mount"
    );
}
