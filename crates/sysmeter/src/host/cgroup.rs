//! Parsers for cgroup v1 and v2: `/proc/self/cgroup` lines, the cgroup mounts of
//! `/proc/self/mountinfo`, and the limit files (v2 `memory.max`, `cpu.max`; v1
//! `memory.limit_in_bytes`, `cpu.cfs_quota_us` / `cpu.cfs_period_us`).
//!
//! Pure: text in, values out. No file access; depends on nothing.

/// v1 memory limits at or above this (1 EiB) mean "no limit": the kernel writes
/// `PAGE_COUNTER_MAX × PAGE_SIZE` (9223372036854771712 on 64-bit) for unlimited.
const V1_UNLIMITED: u64 = 1 << 60;

/// cgroup hierarchy version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    /// Legacy per-controller hierarchies.
    V1,
    /// The unified hierarchy.
    V2,
}

/// One line of /proc/self/cgroup: `hierarchy-id:controllers:path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupLine {
    /// Hierarchy id (0 for the v2 unified hierarchy).
    pub id: u32,
    /// Controllers bound to it (`memory`, `cpu`, `cpuacct`, `name=systemd`); empty for v2.
    pub controllers: Vec<String>,
    /// Path of this process inside the hierarchy.
    pub path: String,
}

/// Parses /proc/self/cgroup, skipping malformed lines. The path may itself contain ':'.
pub fn parse_proc_cgroup(text: &str) -> Vec<CgroupLine> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let id = parts.next()?.trim().parse::<u32>().ok()?;
            let controllers = parts.next()?;
            let path = parts.next()?.trim();
            Some(CgroupLine {
                id,
                controllers: controllers
                    .split(',')
                    .filter(|c| !c.is_empty())
                    .map(str::to_string)
                    .collect(),
                path: path.to_string(),
            })
        })
        .collect()
}

/// The hierarchy that governs `controller` (`memory`, `cpu`) and this process's path in
/// it: a v1 line naming the controller wins (hybrid systems keep memory on v1), else the
/// v2 `0::` line.
pub fn controller_path<'a>(
    lines: &'a [CgroupLine],
    controller: &str,
) -> Option<(CgroupVersion, &'a str)> {
    let v1 = lines
        .iter()
        .find(|l| l.controllers.iter().any(|c| c == controller))
        .map(|l| (CgroupVersion::V1, l.path.as_str()));
    v1.or_else(|| {
        lines
            .iter()
            .find(|l| l.id == 0 && l.controllers.is_empty())
            .map(|l| (CgroupVersion::V2, l.path.as_str()))
    })
}

/// A cgroup file system mount from /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupMount {
    /// v1 (`cgroup`) or v2 (`cgroup2`).
    pub version: CgroupVersion,
    /// The cgroup directory that is mounted (the 4th field; not `/` in some containers).
    pub root: String,
    /// Where it is mounted.
    pub mount_point: String,
    /// Super-block options; for v1 these name the controllers (`rw,memory`).
    pub options: Vec<String>,
}

/// The cgroup and cgroup2 mounts listed in mountinfo text.
pub fn parse_cgroup_mounts(mountinfo: &str) -> Vec<CgroupMount> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split_whitespace().collect();
            let mut right = right.split_whitespace();
            let version = match right.next()? {
                "cgroup" => CgroupVersion::V1,
                "cgroup2" => CgroupVersion::V2,
                _ => return None,
            };
            let options = right
                .nth(1)
                .unwrap_or("")
                .split(',')
                .map(str::to_string)
                .collect();
            Some(CgroupMount {
                version,
                root: left.get(3)?.to_string(),
                mount_point: left.get(4)?.to_string(),
                options,
            })
        })
        .collect()
}

/// The mount of the hierarchy of `version` that carries `controller` (any v2 mount).
pub fn find_mount<'a>(
    mounts: &'a [CgroupMount],
    version: CgroupVersion,
    controller: &str,
) -> Option<&'a CgroupMount> {
    mounts.iter().find(|m| {
        m.version == version
            && (version == CgroupVersion::V2 || m.options.iter().any(|o| o == controller))
    })
}

/// The directory of cgroup `path` for `controller` under the matching mount, translating
/// the path by the mount's root (a container without a cgroup namespace sees
/// `/docker/ID` in /proc/self/cgroup with that same directory mounted as its root).
pub fn cgroup_dir(
    mounts: &[CgroupMount],
    version: CgroupVersion,
    controller: &str,
    path: &str,
) -> Option<String> {
    let mount = find_mount(mounts, version, controller)?;
    let relative = if mount.root == "/" {
        path
    } else {
        path.strip_prefix(mount.root.as_str()).unwrap_or("")
    };
    let relative = relative.trim_matches('/');
    if relative.is_empty() {
        Some(mount.mount_point.clone())
    } else {
        Some(format!(
            "{}/{}",
            mount.mount_point.trim_end_matches('/'),
            relative
        ))
    }
}

/// `dir` and its ancestors up to (and including) `stop`, innermost first: limits apply at
/// every level, so the effective limit is the smallest along this chain.
pub fn ancestors(dir: &str, stop: &str) -> Vec<String> {
    let mut out = vec![dir.to_string()];
    let mut cur = dir;
    while cur.len() > stop.len() {
        match cur.rsplit_once('/') {
            Some((parent, _)) if parent.len() >= stop.len() => {
                out.push(parent.to_string());
                cur = parent;
            }
            _ => break,
        }
    }
    out
}

/// v2 `memory.max`: `max` → `None` (unlimited), else bytes.
pub fn parse_memory_max_v2(text: &str) -> Option<u64> {
    text.trim().parse::<u64>().ok()
}

/// v2 `cpu.max` (`max 100000` or `50000 100000`): the quota in CPUs, `None` if unlimited.
pub fn parse_cpu_max_v2(text: &str) -> Option<f64> {
    let mut words = text.split_whitespace();
    let quota = words.next()?.parse::<f64>().ok()?;
    let period = words
        .next()
        .map_or(Some(100_000.0), |p| p.parse::<f64>().ok())?;
    (quota > 0.0 && period > 0.0).then(|| quota / period)
}

/// v1 `memory.limit_in_bytes` (or memory.stat's `hierarchical_memory_limit` value):
/// bytes, `None` when it is the "unlimited" sentinel or malformed.
pub fn parse_memory_limit_v1(text: &str) -> Option<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|v| *v < V1_UNLIMITED)
}

/// `hierarchical_memory_limit` from v1 memory.stat: the smallest limit of this group and
/// its ancestors, which the leaf's own limit file does not show.
pub fn parse_v1_hierarchical_limit(stat: &str) -> Option<u64> {
    stat.lines().find_map(|l| {
        let value = l.strip_prefix("hierarchical_memory_limit ")?;
        parse_memory_limit_v1(value)
    })
}

/// v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us` as CPUs; quota -1 means unlimited.
pub fn parse_cfs_v1(quota: &str, period: &str) -> Option<f64> {
    let quota = quota.trim().parse::<i64>().ok()?;
    let period = period.trim().parse::<i64>().ok()?;
    (quota > 0 && period > 0).then(|| quota as f64 / period as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KVM_CG: &str = include_str!("../../tests/fixtures/host/x86_64-kvm/proc-self-cgroup");
    const KVM_MI: &str = include_str!("../../tests/fixtures/host/x86_64-kvm/mountinfo-cgroup");
    const METAL_CG: &str = include_str!("../../tests/fixtures/host/x86_64-metal/proc-self-cgroup");

    #[test]
    fn hybrid_v1_memory() {
        let lines = parse_proc_cgroup(KVM_CG);
        assert_eq!(lines.len(), 10);
        let (v, path) = controller_path(&lines, "memory").expect("memory line");
        assert_eq!(v, CgroupVersion::V1);
        assert_eq!(path, "/process_api/1eb72316e1931b73efe46cc8ebd9ac3d");
        let mounts = parse_cgroup_mounts(KVM_MI);
        assert_eq!(mounts.len(), 10);
        let dir = cgroup_dir(&mounts, v, "memory", path).expect("dir");
        assert_eq!(
            dir,
            "/sys/fs/cgroup/memory/process_api/1eb72316e1931b73efe46cc8ebd9ac3d"
        );
        let cpu = controller_path(&lines, "cpu").expect("cpu line");
        assert_eq!(
            cgroup_dir(&mounts, cpu.0, "cpu", cpu.1).as_deref(),
            Some("/sys/fs/cgroup/cpu")
        );
        let v2 = cgroup_dir(&mounts, CgroupVersion::V2, "memory", "/");
        assert_eq!(v2.as_deref(), Some("/sys/fs/cgroup/unified"));
    }

    #[test]
    fn kvm_v1_limits_are_unlimited() {
        let mem =
            include_str!("../../tests/fixtures/host/x86_64-kvm/cgroup-v1/memory.limit_in_bytes");
        assert_eq!(parse_memory_limit_v1(mem), None);
        let q = include_str!("../../tests/fixtures/host/x86_64-kvm/cgroup-v1/cpu.cfs_quota_us");
        let p = include_str!("../../tests/fixtures/host/x86_64-kvm/cgroup-v1/cpu.cfs_period_us");
        assert_eq!(parse_cfs_v1(q, p), None);
        assert_eq!(parse_cfs_v1("150000", "100000"), Some(1.5));
        assert_eq!(parse_memory_limit_v1("1073741824\n"), Some(1 << 30));
        let stat = "cache 0\nhierarchical_memory_limit 536870912\n";
        assert_eq!(parse_v1_hierarchical_limit(stat), Some(512 << 20));
    }

    #[test]
    fn pure_v2() {
        let lines = parse_proc_cgroup(METAL_CG);
        let (v, path) = controller_path(&lines, "memory").expect("v2 line");
        assert_eq!(
            (v, path),
            (
                CgroupVersion::V2,
                "/user.slice/user-1000.slice/session-2.scope"
            )
        );
        let mem = include_str!("../../tests/fixtures/host/x86_64-metal/cgroup-v2/memory.max");
        assert_eq!(parse_memory_max_v2(mem), Some(8 << 30));
        let cpu = include_str!("../../tests/fixtures/host/x86_64-metal/cgroup-v2/cpu.max");
        assert_eq!(parse_cpu_max_v2(cpu), Some(2.0));
        assert_eq!(parse_cpu_max_v2("max 100000\n"), None);
        assert_eq!(parse_cpu_max_v2("50000 100000"), Some(0.5));
        assert_eq!(parse_memory_max_v2("max\n"), None);
        let mounts = parse_cgroup_mounts("30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
        let dir = cgroup_dir(&mounts, v, "memory", path).expect("dir");
        assert_eq!(
            dir,
            "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"
        );
        let chain = ancestors(&dir, "/sys/fs/cgroup");
        assert_eq!(chain.len(), 4);
        assert_eq!(chain[1], "/sys/fs/cgroup/user.slice/user-1000.slice");
        assert_eq!(chain[3], "/sys/fs/cgroup");
    }

    #[test]
    fn container_root_is_translated() {
        let mi = "900 800 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
        let mounts = parse_cgroup_mounts(mi);
        let dir = cgroup_dir(&mounts, CgroupVersion::V2, "memory", "/docker/abc");
        assert_eq!(dir.as_deref(), Some("/sys/fs/cgroup"));
    }

    #[test]
    fn malformed_input() {
        assert!(parse_proc_cgroup("garbage\nx:y:z\n").is_empty());
        assert_eq!(controller_path(&[], "memory"), None);
        assert!(parse_cgroup_mounts("1 2 3\n - \n").is_empty());
        assert_eq!(cgroup_dir(&[], CgroupVersion::V2, "memory", "/"), None);
        assert_eq!(parse_cpu_max_v2(""), None);
        assert_eq!(parse_cpu_max_v2("0 100000"), None);
        assert_eq!(parse_cfs_v1("-1", "100000"), None);
        assert_eq!(parse_cfs_v1("", ""), None);
        assert_eq!(parse_memory_limit_v1("-1"), None);
        assert_eq!(
            ancestors("/sys/fs/cgroup", "/sys/fs/cgroup"),
            ["/sys/fs/cgroup"]
        );
    }
}
