//! Unit tests of the `sysmeter host` text layout on fixed machines.

use super::*;
use crate::model::{Capability, CgroupLimits, CpuInfo, DiskInfo, MemoryInfo, NicInfo};

fn cache(level: u32, kind: &str, size: u64, ways: u32, shared: &str) -> CacheInfo {
    CacheInfo {
        level,
        kind: kind.into(),
        size_bytes: size,
        ways: Some(ways),
        line_bytes: Some(64),
        shared_cpus: shared.into(),
    }
}

/// The cache levels of the fixture VM.
fn kvm_caches() -> Vec<CacheInfo> {
    vec![
        cache(1, "Data", 32 << 10, 8, "0"),
        cache(1, "Instruction", 32 << 10, 8, "0"),
        cache(2, "Unified", 512 << 10, 8, "0"),
        cache(3, "Unified", 32 << 20, 16, "0-1"),
    ]
}

/// Two capabilities, one of each kind.
fn kvm_capabilities() -> Vec<Capability> {
    vec![
        Capability {
            name: "ptrace".into(),
            available: true,
            detail: "CAP_SYS_PTRACE".into(),
        },
        Capability {
            name: "tracepoints".into(),
            available: false,
            detail: "not mounted".into(),
        },
    ]
}

/// The VM the fixtures were captured on, as `read_host` describes it.
fn kvm() -> HostInfo {
    HostInfo {
        hostname: "vm".into(),
        arch: "x86_64".into(),
        kernel: "6.18.44-fc-v782".into(),
        os: "Debian GNU/Linux 12 (bookworm)".into(),
        cpu: CpuInfo {
            model: "AMD EPYC".into(),
            vendor: "AuthenticAMD".into(),
            sockets: 1,
            cores: 2,
            threads: 2,
            usable_cpus: 2,
            current_mhz: Some(2445.404),
            flags: vec!["constant_tsc".into(), "hypervisor".into()],
            ..CpuInfo::default()
        },
        caches: kvm_caches(),
        memory: MemoryInfo {
            total_bytes: 24_683_656 * 1024,
            available_bytes: 24_110_300 * 1024,
            ..MemoryInfo::default()
        },
        disks: vec![DiskInfo {
            name: "vda".into(),
            model: None,
            size_bytes: 256 << 30,
            rotational: Some(true),
        }],
        nics: vec![NicInfo {
            name: "eth0".into(),
            speed_mbps: None,
            mtu: Some(1400),
            state: "up".into(),
        }],
        virtualization: Some("KVM".into()),
        cgroup: CgroupLimits {
            path: Some("/".into()),
            memory_max_bytes: None,
            cpu_max: None,
        },
        vulnerabilities: vec![
            ("meltdown".into(), "Not affected".into()),
            (
                "spectre_v1".into(),
                "Mitigation: usercopy/swapgs barriers".into(),
            ),
        ],
        perf_event_paranoid: Some(2),
        thp: Some("madvise".into()),
        capabilities: kvm_capabilities(),
        warnings: vec!["Running under a hypervisor (KVM).".into()],
    }
}

const KVM_TEXT: &str = "\
CPU
  model                AMD EPYC
  vendor               AuthenticAMD
  topology             1 socket, 2 cores, 2 threads (2 usable)
  frequency            base unknown, current 2445 MHz, max unknown
  governor             none (no cpufreq)
  boost                unknown
  flags                constant_tsc hypervisor

Caches
  L1d                  32 KiB, 8-way, 64 B lines, shared by CPUs 0
  L1i                  32 KiB, 8-way, 64 B lines, shared by CPUs 0
  L2                   512 KiB, 8-way, 64 B lines, shared by CPUs 0
  L3                   32 MiB, 16-way, 64 B lines, shared by CPUs 0-1

Memory
  total                23.5 GiB
  available            23.0 GiB
  swap                 none
  speed                unknown (needs root and DMI tables)

Disks
  vda                  256 GiB, rotational, model unknown

Network
  eth0                 up, speed unknown, MTU 1400

OS
  hostname             vm
  os                   Debian GNU/Linux 12 (bookworm)
  kernel               6.18.44-fc-v782
  arch                 x86_64

Virtualization
  hypervisor           KVM

cgroup
  path                 /
  memory limit         unlimited
  cpu limit            unlimited

Mitigations
  spectre_v1           Mitigation: usercopy/swapgs barriers
  not affected         1 others

Perf
  perf_event_paranoid  2 (own processes, user space only)

THP
  mode                 madvise

Capabilities
  ✓ ptrace             CAP_SYS_PTRACE
  ✗ tracepoints        not mounted

Warnings
  - Running under a hypervisor (KVM).
";

#[test]
fn kvm_layout() {
    let text = render_host_text(&kvm());
    assert_eq!(text, KVM_TEXT, "\n{text}");
}

#[test]
fn empty_host_renders_unknowns() {
    let text = render_host_text(&HostInfo::default());
    assert!(text.contains("  model                unknown\n"), "{text}");
    assert!(text.contains("Caches\n  unknown (no sysfs cache information)\n"));
    assert!(text.contains("Disks\n  none found\n"));
    assert!(text.contains("hypervisor           none detected (bare metal)"));
    assert!(text.ends_with("Warnings\n  none\n"));
    assert!(
        !text.lines().any(|l| l.ends_with(' ')),
        "no trailing spaces"
    );
}

#[test]
fn bare_metal_values() {
    let mut h = kvm();
    h.cpu.base_mhz = Some(3600.0);
    h.cpu.max_mhz = Some(4200.0);
    h.cpu.governor = Some("powersave".into());
    h.cpu.boost = Some(true);
    h.memory.swap_total_bytes = 2 << 30;
    h.memory.swap_used_bytes = 512 << 20;
    h.memory.speed_mts = Some(3200);
    h.disks[0].rotational = Some(false);
    h.disks[0].model = Some("Samsung SSD 970 EVO Plus 500GB".into());
    h.nics[0].speed_mbps = Some(1000);
    h.virtualization = None;
    h.cgroup.memory_max_bytes = Some(8 << 30);
    h.cgroup.cpu_max = Some(1.5);
    h.perf_event_paranoid = Some(4);
    let text = render_host_text(&h);
    for want in [
        "base 3600 MHz, current 2445 MHz, max 4200 MHz",
        "governor             powersave",
        "boost                on",
        "swap                 2 GiB, 512 MiB used",
        "speed                3200 MT/s",
        "256 GiB, non-rotational, Samsung SSD 970 EVO Plus 500GB",
        "up, 1000 Mbit/s, MTU 1400",
        "memory limit         8 GiB",
        "cpu limit            1.50 CPUs",
        "4 (perf disabled for unprivileged users)",
        "none detected (bare metal)",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
}
