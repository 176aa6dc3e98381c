//! The one place that reads the machine description from the live system: /proc, /sys and
//! /etc files, fed to the pure parsers of the sibling modules.
//!
//! Never fails and never panics: a missing or unreadable file leaves its fields unknown
//! (empty, 0 or `None`). Depends on the host parsers and `std::fs`; nothing else.

use super::capabilities::probe_capabilities;
use super::cgroup::{self, CgroupVersion};
use super::cpuinfo::parse_cpuinfo;
use super::cpulist::{cpu_list_count, parse_cpu_list};
use super::meminfo::parse_meminfo;
use super::osinfo::{VirtEvidence, detect_virtualization, parse_os_release};
use super::procfs::{ProcStatus, parse_loadavg, parse_status};
use super::sysfs::{self, parse_value};
use super::warnings::{clocksource_warning, noise_warnings};
use crate::model::{CacheInfo, CgroupLimits, CpuInfo, DiskInfo, HostInfo, NicInfo};
use std::fs;
use std::path::{Path, PathBuf};

const CPU_SYSFS: &str = "/sys/devices/system/cpu";
const CLOCKSOURCE: &str = "/sys/devices/system/clocksource/clocksource0";

/// Reads the machine description, probing O_DIRECT in the current working directory.
pub fn read_host() -> HostInfo {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    read_host_for_dir(&cwd)
}

/// Reads the machine description, probing O_DIRECT in `dir` (the directory the file
/// experiments will use). Also computes the capability list and noise warnings.
pub fn read_host_for_dir(dir: &Path) -> HostInfo {
    let status = read("/proc/self/status")
        .map(|t| parse_status(&t))
        .unwrap_or_default();
    let cpu = read_cpu(&status);
    let paranoid = read("/proc/sys/kernel/perf_event_paranoid").and_then(|t| parse_value(&t));
    let os = read("/etc/os-release")
        .or_else(|| read("/usr/lib/os-release"))
        .and_then(|t| parse_os_release(&t))
        .unwrap_or_default();
    let mut host = HostInfo {
        hostname: hostname(),
        arch: std::env::consts::ARCH.to_string(),
        kernel: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
        os,
        virtualization: read_virtualization(&cpu),
        capabilities: probe_capabilities(status, cpu.usable_cpus, paranoid, dir),
        cpu,
        caches: read_caches(),
        memory: read("/proc/meminfo")
            .map(|t| parse_meminfo(&t))
            .unwrap_or_default(),
        disks: read_disks(),
        nics: read_nics(),
        cgroup: read_cgroup(),
        vulnerabilities: read_vulnerabilities(),
        perf_event_paranoid: paranoid,
        thp: read("/sys/kernel/mm/transparent_hugepage/enabled").and_then(|t| sysfs::parse_thp(&t)),
        warnings: Vec::new(),
    };
    let load1 = read("/proc/loadavg").and_then(|t| parse_loadavg(&t));
    host.warnings = noise_warnings(&host, load1);
    if let Some(w) =
        read(&format!("{CLOCKSOURCE}/current_clocksource")).and_then(|cs| clocksource_warning(&cs))
    {
        host.warnings.push(w);
    }
    host
}

/// The name runs of this machine are stored under: `SYSMETER_HOSTNAME` if set and not empty
/// (for containers, whose hostnames are random, and for tests that play several machines),
/// else the kernel's hostname.
pub fn hostname() -> String {
    std::env::var("SYSMETER_HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| read_trimmed("/proc/sys/kernel/hostname"))
        .unwrap_or_default()
}

/// Refuses a `SYSMETER_HOSTNAME` that holds a character acting on a terminal or on the
/// reading order (`model::visible`): it would be stored and shown with every run.
pub fn check_hostname_override() -> Result<(), String> {
    let Ok(name) = std::env::var("SYSMETER_HOSTNAME") else {
        return Ok(());
    };
    match crate::model::visible::first_acting(&name) {
        Some(c) => Err(format!(
            "SYSMETER_HOSTNAME holds the character {}, which a terminal would act on; set it to \
             a plain name such as web-01",
            crate::model::visible::visible(&c.to_string())
        )),
        None => Ok(()),
    }
}

fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok()
}

fn read_trimmed(path: &str) -> Option<String> {
    read(path)
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

/// A `read(file name)` function over directory `dir`, as the sysfs parsers take.
fn dir_reader(dir: PathBuf) -> impl Fn(&str) -> Option<String> {
    move |name| fs::read_to_string(dir.join(name)).ok()
}

/// Entry names of a directory, sorted; empty when unreadable.
fn list_dir(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn read_cpu(status: &ProcStatus) -> CpuInfo {
    let text = read("/proc/cpuinfo").unwrap_or_default();
    let mut cpu = parse_cpuinfo(&text);
    let online = read(&format!("{CPU_SYSFS}/online")).and_then(|t| parse_cpu_list(&t));
    if cpu.threads == 0 {
        cpu.threads = online
            .as_ref()
            .and_then(|v| u32::try_from(v.len()).ok())
            .unwrap_or(0);
    }
    // aarch64 cpuinfo has no package/core ids; sysfs topology has them.
    if !text.contains("core id")
        && let Some((sockets, cores)) = online.as_deref().and_then(sysfs_topology)
    {
        cpu.sockets = sockets;
        cpu.cores = cores;
    }
    let freq = sysfs::parse_cpufreq(dir_reader(PathBuf::from(format!(
        "{CPU_SYSFS}/cpu0/cpufreq"
    ))));
    cpu.base_mhz = freq.base_mhz.or(cpu.base_mhz);
    cpu.current_mhz = freq.current_mhz.or(cpu.current_mhz);
    cpu.max_mhz = freq.max_mhz;
    cpu.governor = freq.governor;
    cpu.boost = sysfs::parse_boost(
        read(&format!("{CPU_SYSFS}/cpufreq/boost")).as_deref(),
        read(&format!("{CPU_SYSFS}/intel_pstate/no_turbo")).as_deref(),
    );
    cpu.usable_cpus = status
        .cpus_allowed_list
        .as_deref()
        .and_then(cpu_list_count)
        .filter(|n| *n > 0)
        .or_else(|| {
            let n = std::thread::available_parallelism().ok()?;
            u32::try_from(n.get()).ok()
        })
        .unwrap_or(cpu.threads);
    cpu
}

/// (sockets, cores) from sysfs topology of the online CPUs; `None` if any is unreadable.
fn sysfs_topology(online: &[u32]) -> Option<(u32, u32)> {
    let ids = online
        .iter()
        .map(|n| {
            let topo = format!("{CPU_SYSFS}/cpu{n}/topology");
            let pkg = read(&format!("{topo}/physical_package_id")).and_then(|t| parse_value(&t))?;
            let core = read(&format!("{topo}/core_id")).and_then(|t| parse_value(&t))?;
            Some((pkg, core))
        })
        .collect::<Option<Vec<(i64, i64)>>>()?;
    (!ids.is_empty()).then(|| sysfs::topology_counts(&ids))
}

fn read_caches() -> Vec<CacheInfo> {
    let base = format!("{CPU_SYSFS}/cpu0/cache");
    let mut indexed: Vec<(u32, CacheInfo)> = list_dir(&base)
        .into_iter()
        .filter_map(|name| {
            let n = name.strip_prefix("index")?.parse::<u32>().ok()?;
            let cache = sysfs::parse_cache_index(dir_reader(Path::new(&base).join(&name)))?;
            Some((n, cache))
        })
        .collect();
    // Numeric order: index10 must not sort before index2.
    indexed.sort_by_key(|(n, _)| *n);
    indexed.into_iter().map(|(_, c)| c).collect()
}

fn read_disks() -> Vec<DiskInfo> {
    list_dir("/sys/block")
        .into_iter()
        .filter(|name| sysfs::is_real_disk(name))
        .filter_map(|name| {
            let dir = PathBuf::from("/sys/block").join(&name);
            sysfs::parse_disk(&name, dir_reader(dir))
        })
        .collect()
}

fn read_nics() -> Vec<NicInfo> {
    list_dir("/sys/class/net")
        .into_iter()
        .map(|name| {
            let dir = PathBuf::from("/sys/class/net").join(&name);
            sysfs::parse_nic(&name, dir_reader(dir))
        })
        .collect()
}

fn read_vulnerabilities() -> Vec<(String, String)> {
    let base = format!("{CPU_SYSFS}/vulnerabilities");
    list_dir(&base)
        .into_iter()
        .filter_map(|name| {
            let content = read(&format!("{base}/{name}"))?;
            sysfs::parse_vulnerability(&name, &content)
        })
        .collect()
}

fn read_virtualization(cpu: &CpuInfo) -> Option<String> {
    detect_virtualization(&VirtEvidence {
        hypervisor_flag: cpu.flags.iter().any(|f| f == "hypervisor"),
        hypervisor_type: read_trimmed("/sys/hypervisor/type"),
        sys_vendor: read_trimmed("/sys/class/dmi/id/sys_vendor"),
        product_name: read_trimmed("/sys/class/dmi/id/product_name"),
        clocksources: read(&format!("{CLOCKSOURCE}/available_clocksource")),
    })
}

fn read_cgroup() -> CgroupLimits {
    let lines = cgroup::parse_proc_cgroup(&read("/proc/self/cgroup").unwrap_or_default());
    let mounts = cgroup::parse_cgroup_mounts(&read("/proc/self/mountinfo").unwrap_or_default());
    let memory = cgroup::controller_path(&lines, "memory");
    let cpu = cgroup::controller_path(&lines, "cpu");
    CgroupLimits {
        path: memory.or(cpu).map(|(_, p)| p.to_string()),
        memory_max_bytes: memory.and_then(|(v, p)| memory_limit(&mounts, v, p)),
        cpu_max: cpu.and_then(|(v, p)| cpu_limit(&mounts, v, p)),
    }
}

/// Smallest of `parse(file)` over `dir` and its ancestors up to the mount point.
fn min_over_ancestors<T: PartialOrd + Copy>(
    mounts: &[cgroup::CgroupMount],
    (version, controller, path): (CgroupVersion, &str, &str),
    parse: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    let mount = cgroup::find_mount(mounts, version, controller)?;
    let dir = cgroup::cgroup_dir(mounts, version, controller, path)?;
    cgroup::ancestors(&dir, &mount.mount_point)
        .iter()
        .filter_map(|d| parse(d))
        .reduce(|a, b| if b < a { b } else { a })
}

fn memory_limit(mounts: &[cgroup::CgroupMount], v: CgroupVersion, path: &str) -> Option<u64> {
    match v {
        // memory.stat's hierarchical limit already folds in the ancestors.
        CgroupVersion::V1 => {
            let dir = cgroup::cgroup_dir(mounts, v, "memory", path)?;
            read(&format!("{dir}/memory.stat"))
                .and_then(|t| cgroup::parse_v1_hierarchical_limit(&t))
                .or_else(|| {
                    read(&format!("{dir}/memory.limit_in_bytes"))
                        .and_then(|t| cgroup::parse_memory_limit_v1(&t))
                })
        }
        CgroupVersion::V2 => min_over_ancestors(mounts, (v, "memory", path), |d| {
            read(&format!("{d}/memory.max")).and_then(|t| cgroup::parse_memory_max_v2(&t))
        }),
    }
}

fn cpu_limit(mounts: &[cgroup::CgroupMount], v: CgroupVersion, path: &str) -> Option<f64> {
    min_over_ancestors(mounts, (v, "cpu", path), |d| match v {
        CgroupVersion::V1 => cgroup::parse_cfs_v1(
            &read(&format!("{d}/cpu.cfs_quota_us"))?,
            &read(&format!("{d}/cpu.cfs_period_us"))?,
        ),
        CgroupVersion::V2 => {
            read(&format!("{d}/cpu.max")).and_then(|t| cgroup::parse_cpu_max_v2(&t))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs on whatever machine the tests run on: only checks that reading never fails and
    /// that the facts every Linux box has are filled in.
    #[test]
    fn reads_this_machine() {
        let dir = tempfile::tempdir().expect("tempdir");
        let h = read_host_for_dir(dir.path());
        assert_eq!(h.arch, std::env::consts::ARCH);
        assert!(!h.kernel.is_empty());
        assert!(h.cpu.threads >= 1 && h.cpu.usable_cpus >= 1);
        assert!(h.cpu.cores >= 1 && h.cpu.cores <= h.cpu.threads);
        assert!(h.memory.total_bytes > 0);
        assert_eq!(h.capabilities.len(), 8);
        assert!(h.nics.iter().any(|n| n.name == "lo"));
    }
}
