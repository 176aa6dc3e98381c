//! Unit tests of [`super::evaluate`] on fixed facts, and smoke tests of the probes.

use super::*;
use crate::host::procfs::parse_status;

fn kvm_root() -> CapabilityFacts {
    CapabilityFacts {
        status: parse_status(include_str!(
            "../../../tests/fixtures/host/x86_64-kvm/status"
        )),
        ptrace_scope: None,
        perf_event_paranoid: Some(2),
        pmu: None,
        tracefs: TraceFs::NotMounted,
        netns: true,
        usable_cpus: 2,
    }
}

fn metal_user() -> CapabilityFacts {
    CapabilityFacts {
        status: parse_status(include_str!(
            "../../../tests/fixtures/host/x86_64-metal/status"
        )),
        ptrace_scope: Some(1),
        perf_event_paranoid: Some(4),
        pmu: Some("cpu".into()),
        tracefs: TraceFs::NotReadable,
        netns: true,
        usable_cpus: 8,
    }
}

fn find<'a>(caps: &'a [Capability], name: &str) -> &'a Capability {
    caps.iter().find(|c| c.name == name).expect(name)
}

#[test]
fn root_in_this_vm() {
    // The order is probe_lists_every_capability's (the probe evaluates these facts).
    let caps = evaluate(&kvm_root());
    assert!(find(&caps, PTRACE).available);
    assert!(find(&caps, PTRACE).detail.contains("CAP_SYS_PTRACE"));
    assert!(find(&caps, PERF_SOFTWARE).available);
    let hw = find(&caps, PERF_HARDWARE);
    assert!(!hw.available && hw.detail.contains("no CPU PMU"));
    let tp = find(&caps, TRACEPOINTS);
    assert!(!tp.available && tp.detail.contains("mount -t tracefs"));
    assert!(find(&caps, RAW_SOCKETS).available);
    assert!(find(&caps, NET_NAMESPACES).available);
    assert!(find(&caps, MULTI_CPU).available);
}

#[test]
fn unprivileged_on_ubuntu() {
    let caps = evaluate(&metal_user());
    let pt = find(&caps, PTRACE);
    assert!(pt.available && pt.detail.contains("own children only"));
    let sw = find(&caps, PERF_SOFTWARE);
    assert!(!sw.available && sw.detail.contains("perf_event_paranoid 4"));
    let hw = find(&caps, PERF_HARDWARE);
    assert!(!hw.available && hw.detail.starts_with("PMU `cpu` exposed but"));
    assert!(!find(&caps, TRACEPOINTS).available);
    assert!(!find(&caps, RAW_SOCKETS).available);
    let ns = find(&caps, NET_NAMESPACES);
    assert!(!ns.available && ns.detail.contains("unshare"));
}

#[test]
fn hardware_counters_unknown_until_tried() {
    let mut f = metal_user();
    f.perf_event_paranoid = Some(2);
    let hw = evaluate(&f)
        .into_iter()
        .find(|c| c.name == PERF_HARDWARE)
        .expect("hw");
    assert!(hw.available);
    assert!(hw.detail.contains("unknown until tried"));
}

#[test]
fn tracepoints_need_privilege() {
    let mut f = metal_user();
    f.tracefs = TraceFs::RawSyscalls("/sys/kernel/tracing".into());
    assert!(!find(&evaluate(&f), TRACEPOINTS).available);
    f.perf_event_paranoid = Some(-1);
    assert!(find(&evaluate(&f), TRACEPOINTS).available);
    let mut root = kvm_root();
    root.tracefs = TraceFs::RawSyscalls("/sys/kernel/tracing".into());
    assert!(find(&evaluate(&root), TRACEPOINTS).available);
    root.tracefs = TraceFs::NoRawSyscalls("/sys/kernel/tracing".into());
    assert!(!find(&evaluate(&root), TRACEPOINTS).available);
}

#[test]
fn edge_cases() {
    let mut f = kvm_root();
    f.ptrace_scope = Some(3);
    f.perf_event_paranoid = None;
    f.netns = false;
    f.usable_cpus = 1;
    let caps = evaluate(&f);
    assert!(!find(&caps, PTRACE).available);
    assert!(!find(&caps, PERF_SOFTWARE).available);
    assert!(!find(&caps, NET_NAMESPACES).available);
    let one = find(&caps, MULTI_CPU);
    assert!(!one.available && one.detail.contains("only 1 usable CPU"));
    let mut g = metal_user();
    g.ptrace_scope = Some(2);
    assert!(!find(&evaluate(&g), PTRACE).available);
}

#[test]
fn cpu_pmu_names() {
    let x86 = ["breakpoint", "msr", "software", "tracepoint", "uprobe"];
    assert_eq!(find_cpu_pmu(x86), None);
    assert_eq!(
        find_cpu_pmu(["software", "cpu", "power"]).as_deref(),
        Some("cpu")
    );
    assert_eq!(
        find_cpu_pmu(["cpu_atom", "cpu_core"]).as_deref(),
        Some("cpu_atom")
    );
    assert_eq!(
        find_cpu_pmu(["armv8_pmuv3_0"]).as_deref(),
        Some("armv8_pmuv3_0")
    );
    assert_eq!(
        find_cpu_pmu(["apple_firestorm_pmu"]).as_deref(),
        Some("apple_firestorm_pmu")
    );
}

#[test]
fn o_direct_probe_never_panics() {
    let dir = tempfile::tempdir().expect("tempdir");
    let c = probe_o_direct(dir.path());
    assert_eq!(c.name, O_DIRECT);
    assert!(!c.detail.is_empty());
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("list").count(),
        0,
        "test file removed"
    );
    let missing = probe_o_direct(&dir.path().join("does-not-exist"));
    assert!(!missing.available && missing.detail.starts_with("unknown"));
}

#[test]
fn probe_lists_every_capability() {
    let status = parse_status(&std::fs::read_to_string("/proc/self/status").unwrap_or_default());
    let dir = tempfile::tempdir().expect("tempdir");
    let caps = probe_capabilities(status, 2, Some(2), dir.path());
    let names: Vec<&str> = caps.iter().map(|c| c.name.as_str()).collect();
    let want = [
        PTRACE,
        PERF_SOFTWARE,
        PERF_HARDWARE,
        TRACEPOINTS,
        O_DIRECT,
        RAW_SOCKETS,
        NET_NAMESPACES,
        MULTI_CPU,
    ];
    assert_eq!(names, want);
}
