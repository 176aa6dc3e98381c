//! Parsers of single-value sysfs and procfs files: cache index directories, cpufreq, CPU
//! topology ids, vulnerabilities, block devices, network interfaces, THP mode and integer
//! knobs such as perf_event_paranoid.
//!
//! Pure: a directory is handed in as a `read(file name) -> Option<content>` function, so
//! tests feed fixtures and only the reader touches /sys. Depends only on the host types.

use crate::model::{CacheInfo, DiskInfo, NicInfo};
use std::collections::BTreeSet;
use std::str::FromStr;

/// A trimmed integer (or any `FromStr`) from a one-value file, `None` when malformed.
pub fn parse_value<T: FromStr>(text: &str) -> Option<T> {
    text.trim().parse::<T>().ok()
}

/// A sysfs size such as `32K`, `512K`, `32768K`, `1M` or `64` (bytes), in bytes. The
/// suffixes are binary (sysfs `K` means KiB).
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, shift) = match t.chars().last()? {
        'K' | 'k' => (&t[..t.len() - 1], 10),
        'M' | 'm' => (&t[..t.len() - 1], 20),
        'G' | 'g' => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    digits
        .trim()
        .parse::<u64>()
        .ok()?
        .checked_mul(1u64 << shift)
}

/// One `cpuN/cache/indexM` directory. `level`, `type` and `size` are required (a cache
/// without them is useless to the latency cross-check); the rest are optional. A way
/// count of 0 (fully associative, or not reported) becomes `None`.
pub fn parse_cache_index(read: impl Fn(&str) -> Option<String>) -> Option<CacheInfo> {
    let level = parse_value::<u32>(&read("level")?)?;
    let kind = read("type")?.trim().to_string();
    let size_bytes = parse_size(&read("size")?)?;
    Some(CacheInfo {
        level,
        kind,
        size_bytes,
        ways: read("ways_of_associativity")
            .and_then(|t| parse_value::<u32>(&t))
            .filter(|w| *w > 0),
        line_bytes: read("coherency_line_size").and_then(|t| parse_value(&t)),
        shared_cpus: read("shared_cpu_list")
            .map(|t| t.trim().to_string())
            .unwrap_or_default(),
    })
}

/// What `cpu0/cpufreq` says about frequency scaling.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuFreq {
    /// `base_frequency` (intel_pstate), MHz.
    pub base_mhz: Option<f64>,
    /// `scaling_cur_freq`, MHz.
    pub current_mhz: Option<f64>,
    /// `cpuinfo_max_freq`, MHz.
    pub max_mhz: Option<f64>,
    /// `scaling_governor`.
    pub governor: Option<String>,
}

/// A cpufreq value in kHz (`3600012`) as MHz (`3600.012`).
pub fn khz_to_mhz(text: &str) -> Option<f64> {
    parse_value::<u64>(text).map(|khz| khz as f64 / 1000.0)
}

/// Parses a `cpuN/cpufreq` directory; every field is optional because drivers differ
/// (acpi-cpufreq has no `base_frequency`, VMs usually have no cpufreq at all).
pub fn parse_cpufreq(read: impl Fn(&str) -> Option<String>) -> CpuFreq {
    CpuFreq {
        base_mhz: read("base_frequency").and_then(|t| khz_to_mhz(&t)),
        current_mhz: read("scaling_cur_freq").and_then(|t| khz_to_mhz(&t)),
        max_mhz: read("cpuinfo_max_freq").and_then(|t| khz_to_mhz(&t)),
        governor: read("scaling_governor")
            .map(|t| t.trim().to_string())
            .filter(|g| !g.is_empty()),
    }
}

/// Whether turbo/boost is on: `cpufreq/boost` (acpi-cpufreq, amd-pstate; `1` = on) or
/// else `intel_pstate/no_turbo` (inverted: `0` = turbo on). `None` when neither is readable.
pub fn parse_boost(boost: Option<&str>, no_turbo: Option<&str>) -> Option<bool> {
    let flag = |t: &str| match t.trim() {
        "1" => Some(true),
        "0" => Some(false),
        _ => None,
    };
    boost
        .and_then(flag)
        .or_else(|| no_turbo.and_then(flag).map(|nt| !nt))
}

/// Sockets and cores from per-CPU (`physical_package_id`, `core_id`) pairs of sysfs
/// topology: distinct packages, distinct pairs. Used where cpuinfo has no ids (aarch64).
pub fn topology_counts(ids: &[(i64, i64)]) -> (u32, u32) {
    let packages: BTreeSet<i64> = ids.iter().map(|(p, _)| *p).collect();
    let cores: BTreeSet<(i64, i64)> = ids.iter().copied().collect();
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    (count(packages.len()), count(cores.len()))
}

/// One file of `/sys/devices/system/cpu/vulnerabilities`: (name, status), `None` when empty.
pub fn parse_vulnerability(name: &str, content: &str) -> Option<(String, String)> {
    let status = content.trim();
    (!status.is_empty()).then(|| (name.to_string(), status.to_string()))
}

/// Whether a /sys/block entry is worth listing as a disk: loop, RAM and zram devices are
/// memory or files, not storage a read benchmark would hit.
pub fn is_real_disk(name: &str) -> bool {
    !["loop", "ram", "zram"].iter().any(|p| name.starts_with(p))
}

/// One `/sys/block/NAME` directory (`size` in 512-byte sectors, `queue/rotational`,
/// `device/model`). `None` when the size is missing or zero (empty loop, no medium).
pub fn parse_disk(name: &str, read: impl Fn(&str) -> Option<String>) -> Option<DiskInfo> {
    let sectors = parse_value::<u64>(&read("size")?)?;
    if sectors == 0 {
        return None;
    }
    Some(DiskInfo {
        name: name.to_string(),
        // NVMe and SATA pad the model with spaces.
        model: read("device/model")
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty()),
        size_bytes: sectors.saturating_mul(512),
        rotational: read("queue/rotational").and_then(|t| match t.trim() {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        }),
    })
}

/// One `/sys/class/net/NAME` directory. `speed` is -1 or unreadable (EINVAL) for virtual
/// and down links, which both become `None`.
pub fn parse_nic(name: &str, read: impl Fn(&str) -> Option<String>) -> NicInfo {
    NicInfo {
        name: name.to_string(),
        speed_mbps: read("speed")
            .and_then(|t| parse_value::<i64>(&t))
            .and_then(|s| u64::try_from(s).ok())
            .filter(|s| *s > 0),
        mtu: read("mtu").and_then(|t| parse_value(&t)),
        state: read("operstate")
            .map(|t| t.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "unknown".to_string()),
    }
}

/// The selected mode of `transparent_hugepage/enabled` (`always [madvise] never` →
/// `madvise`).
pub fn parse_thp(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let len = text[start..].find(']')?;
    let mode = text[start..start + len].trim();
    (!mode.is_empty()).then(|| mode.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake directory: file names mapped to fixture contents.
    macro_rules! dir {
        ($base:literal, $($name:literal),*) => {
            |n: &str| -> Option<String> {
                match n {
                    $($name => Some(include_str!(concat!(
                        "../../tests/fixtures/host/", $base, "/", $name)).to_string()),)*
                    _ => None,
                }
            }
        };
    }
    macro_rules! cache_dir {
        ($base:literal) => {
            dir!(
                $base,
                "level",
                "type",
                "size",
                "ways_of_associativity",
                "coherency_line_size",
                "shared_cpu_list"
            )
        };
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("32K"), Some(32 * 1024));
        assert_eq!(parse_size("512K\n"), Some(512 * 1024));
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("64"), Some(64));
        assert_eq!(parse_size(""), None);
        assert_eq!(parse_size("K"), None);
        assert_eq!(parse_size("lotsK"), None);
        assert_eq!(parse_size("99999999999999G"), None);
    }

    #[test]
    fn kvm_caches() {
        let l1d = parse_cache_index(cache_dir!("x86_64-kvm/cache/index0"));
        let l1i = parse_cache_index(cache_dir!("x86_64-kvm/cache/index1"));
        let l2 = parse_cache_index(cache_dir!("x86_64-kvm/cache/index2"));
        let l3 = parse_cache_index(cache_dir!("x86_64-kvm/cache/index3"));
        let l1d = l1d.expect("L1d");
        assert_eq!(
            (l1d.level, l1d.kind.as_str(), l1d.size_bytes),
            (1, "Data", 32 << 10)
        );
        assert_eq!(
            (l1d.ways, l1d.line_bytes, l1d.shared_cpus.as_str()),
            (Some(8), Some(64), "0")
        );
        assert_eq!(l1i.expect("L1i").kind, "Instruction");
        assert_eq!(l2.expect("L2").size_bytes, 512 << 10);
        let l3 = l3.expect("L3");
        assert_eq!(
            (l3.level, l3.kind.as_str(), l3.size_bytes),
            (3, "Unified", 32 << 20)
        );
        assert_eq!((l3.ways, l3.shared_cpus.as_str()), (Some(16), "0-1"));
    }

    #[test]
    fn metal_smt_caches() {
        let l1 = parse_cache_index(cache_dir!("x86_64-metal/cache/index0")).expect("L1d");
        assert_eq!(l1.shared_cpus, "0,4");
        let l3 = parse_cache_index(cache_dir!("x86_64-metal/cache/index3")).expect("L3");
        assert_eq!(l3.size_bytes, 8 << 20);
    }

    #[test]
    fn cache_without_required_files_is_none() {
        assert_eq!(parse_cache_index(|_| None), None);
        let only_level = |n: &str| (n == "level").then(|| "1".to_string());
        assert_eq!(parse_cache_index(only_level), None);
    }

    #[test]
    fn metal_cpufreq() {
        let f = parse_cpufreq(dir!(
            "x86_64-metal/cpufreq",
            "scaling_governor",
            "scaling_cur_freq",
            "cpuinfo_max_freq"
        ));
        assert_eq!(f.governor.as_deref(), Some("powersave"));
        assert_eq!(f.current_mhz, Some(3600.012));
        assert_eq!(f.max_mhz, Some(4200.0));
        assert_eq!(f.base_mhz, None);
        assert_eq!(parse_cpufreq(|_| None), CpuFreq::default());
    }

    #[test]
    fn boost_sources() {
        let on = include_str!("../../tests/fixtures/host/x86_64-metal/boost");
        assert_eq!(parse_boost(Some(on), None), Some(true));
        assert_eq!(parse_boost(Some("0\n"), Some("0")), Some(false));
        assert_eq!(parse_boost(None, Some("0\n")), Some(true));
        assert_eq!(parse_boost(None, Some("1")), Some(false));
        assert_eq!(parse_boost(Some("?"), None), None);
        assert_eq!(parse_boost(None, None), None);
    }

    #[test]
    fn topology() {
        assert_eq!(topology_counts(&[(0, 0), (0, 1), (0, 0), (0, 1)]), (1, 2));
        assert_eq!(topology_counts(&[(0, 0), (1, 0)]), (2, 2));
        assert_eq!(topology_counts(&[]), (0, 0));
    }

    #[test]
    fn vulnerabilities() {
        let v2 = include_str!("../../tests/fixtures/host/x86_64-kvm/vulnerabilities/spectre_v2");
        let (name, status) = parse_vulnerability("spectre_v2", v2).expect("status");
        assert_eq!(name, "spectre_v2");
        assert!(status.starts_with("Mitigation: Retpolines; IBPB: conditional"));
        assert!(!status.ends_with('\n'));
        assert_eq!(parse_vulnerability("x", " \n"), None);
    }

    #[test]
    fn disks() {
        let vda = parse_disk(
            "vda",
            dir!("x86_64-kvm/block/vda", "size", "queue/rotational"),
        );
        let vda = vda.expect("vda");
        assert_eq!(
            (vda.size_bytes, vda.rotational, vda.model),
            (256 << 30, Some(true), None)
        );
        let nvme = dir!(
            "x86_64-metal/block/nvme0n1",
            "size",
            "queue/rotational",
            "device/model"
        );
        let nvme = parse_disk("nvme0n1", nvme).expect("nvme");
        assert_eq!(
            nvme.model.as_deref(),
            Some("Samsung SSD 970 EVO Plus 500GB")
        );
        assert_eq!(
            (nvme.size_bytes, nvme.rotational),
            (976_773_168 * 512, Some(false))
        );
        assert_eq!(
            parse_disk("loop0", |n| (n == "size").then(|| "0".into())),
            None
        );
        assert_eq!(parse_disk("x", |_| None), None);
        assert!(is_real_disk("vda") && is_real_disk("nvme0n1"));
        assert!(!is_real_disk("loop3") && !is_real_disk("zram0") && !is_real_disk("ram0"));
    }

    #[test]
    fn nics() {
        let eth0 = parse_nic(
            "eth0",
            dir!("x86_64-kvm/net/eth0", "speed", "mtu", "operstate"),
        );
        assert_eq!(
            (eth0.speed_mbps, eth0.mtu, eth0.state.as_str()),
            (None, Some(1400), "up")
        );
        let lo = parse_nic("lo", dir!("x86_64-kvm/net/lo", "mtu", "operstate"));
        assert_eq!(
            (lo.speed_mbps, lo.mtu, lo.state.as_str()),
            (None, Some(65536), "unknown")
        );
        let en = parse_nic(
            "enp3s0",
            dir!("x86_64-metal/net/enp3s0", "speed", "mtu", "operstate"),
        );
        assert_eq!(en.speed_mbps, Some(1000));
        assert_eq!(parse_nic("x", |_| None).state, "unknown");
    }

    #[test]
    fn thp_and_values() {
        let kvm = include_str!("../../tests/fixtures/host/x86_64-kvm/thp-enabled");
        assert_eq!(parse_thp(kvm).as_deref(), Some("madvise"));
        assert_eq!(
            parse_thp("[always] madvise never").as_deref(),
            Some("always")
        );
        assert_eq!(parse_thp("always madvise never"), None);
        assert_eq!(parse_thp("[]"), None);
        assert_eq!(parse_thp("[always"), None);
        let p = include_str!("../../tests/fixtures/host/x86_64-kvm/perf_event_paranoid");
        assert_eq!(parse_value::<i32>(p), Some(2));
        assert_eq!(parse_value::<i32>("-1\n"), Some(-1));
        assert_eq!(parse_value::<i32>(""), None);
    }
}
