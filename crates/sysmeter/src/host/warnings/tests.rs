//! Unit tests of the noise warnings, one per source, on fixed hosts.

use super::*;
use crate::model::{CgroupLimits, CpuInfo, MemoryInfo};

/// A quiet bare-metal host: performance governor, no boost, no SMT, no swap.
fn quiet() -> HostInfo {
    HostInfo {
        cpu: CpuInfo {
            cores: 4,
            threads: 4,
            governor: Some("performance".into()),
            max_mhz: Some(4200.0),
            boost: Some(false),
            ..CpuInfo::default()
        },
        thp: Some("madvise".into()),
        ..HostInfo::default()
    }
}

fn one(host: &HostInfo, load: Option<f64>) -> String {
    let w = noise_warnings(host, load);
    assert_eq!(w.len(), 1, "{w:#?}");
    w.into_iter().next().unwrap_or_default()
}

/// The one warning of the quiet host changed by `edit` (no load given).
fn warning_of(edit: impl FnOnce(&mut HostInfo)) -> String {
    let mut h = quiet();
    edit(&mut h);
    one(&h, None)
}

#[test]
fn quiet_host_has_no_warnings() {
    assert!(noise_warnings(&quiet(), Some(0.1)).is_empty());
    assert!(noise_warnings(&quiet(), None).is_empty());
}

#[test]
fn governor() {
    let w = warning_of(|h| h.cpu.governor = Some("powersave".into()));
    assert!(w.starts_with("The cpufreq governor is `powersave`"), "{w}");
    assert!(w.contains("cpupower frequency-set -g performance"));
}

#[test]
fn boost() {
    let w = warning_of(|h| h.cpu.boost = Some(true));
    assert!(w.starts_with("Turbo/boost is on"));
}

#[test]
fn smt() {
    let w = warning_of(|h| h.cpu.threads = 8);
    assert!(
        w.starts_with("SMT is on (8 hardware threads on 4 cores)"),
        "{w}"
    );
}

#[test]
fn hypervisor() {
    let w = warning_of(|h| h.virtualization = Some("KVM".into()));
    assert!(w.starts_with("Running under a hypervisor (KVM)") && w.contains("VM exits"));
}

#[test]
fn load() {
    assert!(one(&quiet(), Some(1.6)).starts_with("The 1-minute load average is 1.60"));
    assert!(noise_warnings(&quiet(), Some(0.5)).is_empty());
}

#[test]
fn swap() {
    let w = warning_of(|h| {
        h.memory = MemoryInfo {
            swap_used_bytes: 512 << 20,
            ..MemoryInfo::default()
        }
    });
    assert!(w.starts_with("512 MiB of swap is in use"));
}

#[test]
fn thp_always() {
    let w = warning_of(|h| h.thp = Some("always".into()));
    assert!(w.starts_with("Transparent huge pages are `always`"));
}

#[test]
fn no_cpufreq() {
    let w = warning_of(|h| {
        h.cpu.governor = None;
        h.cpu.max_mhz = None;
        h.cpu.boost = None;
    });
    assert!(
        w.contains("frequency unknown, cycle figures use the TSC rate"),
        "{w}"
    );
}

#[test]
fn cgroup_limits() {
    let mut h = quiet();
    h.cgroup = CgroupLimits {
        path: None,
        memory_max_bytes: Some(8 << 30),
        cpu_max: Some(0.5),
    };
    let w = noise_warnings(&h, None);
    assert_eq!(w.len(), 2);
    assert!(w[0].starts_with("A cgroup CPU quota of 0.50 CPUs"));
    assert!(w[1].starts_with("A cgroup memory limit of 8 GiB"));
}

#[test]
fn this_vm_shape() {
    // The machine the fixtures come from: KVM, no cpufreq, busy builders.
    let mut h = quiet();
    h.cpu = CpuInfo {
        cores: 2,
        threads: 2,
        ..CpuInfo::default()
    };
    h.virtualization = Some("KVM".into());
    assert_eq!(noise_warnings(&h, Some(1.6)).len(), 3);
}

#[test]
fn clocksource() {
    assert_eq!(clocksource_warning("tsc\n"), None);
    assert_eq!(clocksource_warning("arch_sys_counter"), None);
    assert_eq!(clocksource_warning(""), None);
    let w = clocksource_warning("kvm-clock").unwrap_or_default();
    assert!(w.starts_with("The clocksource is `kvm-clock`"));
}

#[test]
fn metal_fixtures_fire_their_warnings() {
    use crate::host::{cgroup, cpuinfo, meminfo, sysfs};
    let mut h = HostInfo {
        cpu: cpuinfo::parse_cpuinfo(include_str!(
            "../../../tests/fixtures/host/x86_64-metal/cpuinfo"
        )),
        memory: meminfo::parse_meminfo(include_str!(
            "../../../tests/fixtures/host/x86_64-metal/meminfo"
        )),
        thp: sysfs::parse_thp(include_str!(
            "../../../tests/fixtures/host/x86_64-metal/thp-enabled"
        )),
        ..HostInfo::default()
    };
    h.cpu.governor = Some(
        include_str!("../../../tests/fixtures/host/x86_64-metal/cpufreq/scaling_governor")
            .trim()
            .to_string(),
    );
    h.cpu.max_mhz = sysfs::khz_to_mhz(include_str!(
        "../../../tests/fixtures/host/x86_64-metal/cpufreq/cpuinfo_max_freq"
    ));
    h.cpu.boost = sysfs::parse_boost(
        Some(include_str!(
            "../../../tests/fixtures/host/x86_64-metal/boost"
        )),
        None,
    );
    h.cgroup.cpu_max = cgroup::parse_cpu_max_v2(include_str!(
        "../../../tests/fixtures/host/x86_64-metal/cgroup-v2/cpu.max"
    ));
    let load = crate::host::procfs::parse_loadavg(include_str!(
        "../../../tests/fixtures/host/x86_64-metal/loadavg"
    ));
    let w = noise_warnings(&h, load);
    let starts = [
        "The cpufreq governor is `powersave`",
        "Turbo/boost is on",
        "SMT is on (8 hardware threads on 4 cores)",
        "512 MiB of swap is in use",
        "Transparent huge pages are `always`",
        "A cgroup CPU quota of 2.00 CPUs",
    ];
    assert_eq!(w.len(), starts.len(), "{w:#?}");
    for (got, want) in w.iter().zip(starts) {
        assert!(got.starts_with(want), "{got:?} should start with {want:?}");
    }
}
