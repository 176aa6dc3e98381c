//! A cgroup of the CPU controller for a test host: a CPU weight above the default, so that
//! the host's processes are little disturbed by the machine's other work, and optionally a
//! bandwidth limit, for a host that must be slower than the others: cgroup v1's
//! `cpu.shares` and `cpu.cfs_quota_us` / `cpu.cfs_period_us` where the v1 `cpu` controller
//! is mounted, else cgroup v2's `cpu.weight` and `cpu.max`. On drop its processes are
//! killed and the cgroup removed, also on panic. Needs root; where no CPU controller can be
//! used the reason is a missing `cgroup` capability.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sysmeter::host::cgroup::{CgroupVersion as Version, find_mount, parse_cgroup_mounts};

use super::skip::{Cap, Missing};

/// A cgroup with a CPU weight and maybe a quota; removed on drop.
pub struct CpuLimit {
    /// The cgroup's directory.
    pub dir: PathBuf,
    /// The interface found on this machine.
    pub version: Version,
}

impl CpuLimit {
    /// Makes the cgroup `name` with `weight` times the default CPU weight (v1
    /// `cpu.shares` 1024, v2 `cpu.weight` 100) against the processes outside it, and, when
    /// given, at most `quota_us` µs of CPU per `period_us` µs.
    pub fn new(name: &str, weight: u64, quota: Option<(u64, u64)>) -> Result<CpuLimit, Missing> {
        let missing = |why: String| Missing::new(Cap::Cgroup, why);
        let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let (version, root) = cpu_mount(&mounts).ok_or_else(|| {
            missing("no cgroup v1 `cpu` controller and no cgroup v2 with `cpu` is mounted".into())
        })?;
        if version == Version::V2 {
            // The controller must be enabled for the children of the parent (fails where
            // the parent holds processes, as a container's cgroup root may).
            write(&root.join("cgroup.subtree_control"), "+cpu").map_err(missing)?;
        }
        let dir = root.join(name);
        std::fs::create_dir(&dir)
            .map_err(|e| missing(format!("cannot make the cgroup {}: {e}", dir.display())))?;
        // From here on, dropping the guard removes the directory.
        let limit = CpuLimit { dir, version };
        let mut files = match version {
            Version::V1 => vec![("cpu.shares", (1024 * weight).to_string())],
            Version::V2 => vec![("cpu.weight", (100 * weight).min(10_000).to_string())],
        };
        match (version, quota) {
            (_, None) => {}
            (Version::V1, Some((q, p))) => {
                files.push(("cpu.cfs_period_us", p.to_string()));
                files.push(("cpu.cfs_quota_us", q.to_string()));
            }
            (Version::V2, Some((q, p))) => files.push(("cpu.max", format!("{q} {p}"))),
        }
        for (file, value) in files {
            write(&limit.dir.join(file), &value).map_err(missing)?;
        }
        Ok(limit)
    }

    /// Moves process `pid` (and the children it makes from now on) into the cgroup.
    pub fn add(&self, pid: u32) {
        write(&self.dir.join("cgroup.procs"), &pid.to_string()).unwrap_or_else(|e| panic!("{e}"));
    }

    fn pids(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|t| t.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default()
    }
}

impl Drop for CpuLimit {
    fn drop(&mut self) {
        // A cgroup can be removed once its last process has exited: kill them, then retry
        // for a while (an exiting process leaves the cgroup a moment after the signal).
        super::cmd::kill_until_empty(|| self.pids());
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!(
            "warning: could not remove the cgroup {}",
            self.dir.display()
        );
    }
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text)
        .map_err(|e| format!("cannot write {text:?} to {}: {e}", path.display()))
}

/// Where the CPU controller is mounted (`mountinfo`, the text of /proc/self/mountinfo): a v1
/// hierarchy with `cpu` among its options first (on a hybrid machine the v2 tree then has
/// no `cpu`), else the v2 tree if it offers `cpu`.
fn cpu_mount(mountinfo: &str) -> Option<(Version, PathBuf)> {
    let mounts = parse_cgroup_mounts(mountinfo);
    if let Some(m) = find_mount(&mounts, Version::V1, "cpu") {
        return Some((Version::V1, PathBuf::from(&m.mount_point)));
    }
    mounts
        .iter()
        .filter(|m| m.version == Version::V2)
        .map(|m| PathBuf::from(&m.mount_point))
        .find(|root| {
            std::fs::read_to_string(root.join("cgroup.controllers"))
                .is_ok_and(|c| c.split_whitespace().any(|x| x == "cpu"))
        })
        .map(|root| (Version::V2, root))
}

#[test]
fn the_v1_cpu_hierarchy_is_preferred_and_v2_needs_its_cpu_controller() {
    let hybrid = "30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw\n\
                  31 25 0:27 / /sys/fs/cgroup/cpuacct rw,nosuid - cgroup cgroup rw,cpuacct\n\
                  32 25 0:28 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct\n";
    assert_eq!(
        cpu_mount(hybrid),
        Some((Version::V1, PathBuf::from("/sys/fs/cgroup/cpu,cpuacct")))
    );
    // A v2 tree is taken only if it offers `cpu`; this path has no cgroup.controllers.
    assert_eq!(
        cpu_mount("30 25 0:26 / /nonexistent rw - cgroup2 cgroup2 rw\n"),
        None
    );
}
