//! What this run can do here, and why not: ptrace, perf software and hardware events,
//! kernel tracepoints, O_DIRECT in the chosen directory, raw sockets, network namespaces,
//! more than one CPU.
//!
//! [`evaluate`] is pure (facts in, [`Capability`] list out) and unit-tested; the probes
//! ([`gather_facts`], [`probe_o_direct`]) only read /proc and /sys and create one
//! temporary file, all without unsafe code, in well under 50 ms. Hardware counters cannot
//! be opened without `perf_event_open` (unsafe, in sysmeter-sys), so their availability is
//! derived and says so. Depends on `procfs` and `sysfs` parsers, `libc` constants and
//! `tempfile`; never on the measuring modules.

use super::procfs::{ProcStatus, cap};
use crate::model::Capability;
use std::fs::{self, OpenOptions};
use std::io::ErrorKind;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Capability name: tracing system calls with ptrace.
pub const PTRACE: &str = "ptrace";
/// Capability name: perf software events (task-clock sampling for `profile`).
pub const PERF_SOFTWARE: &str = "perf software events";
/// Capability name: perf hardware counters (core cycles, instructions).
pub const PERF_HARDWARE: &str = "perf hardware events";
/// Capability name: kernel tracepoints (`raw_syscalls`) for low-overhead tracing.
pub const TRACEPOINTS: &str = "tracepoints";
/// Capability name: O_DIRECT in the directory used for file experiments.
pub const O_DIRECT: &str = "O_DIRECT";
/// Capability name: raw sockets.
pub const RAW_SOCKETS: &str = "raw sockets";
/// Capability name: creating network namespaces.
pub const NET_NAMESPACES: &str = "network namespaces";
/// Capability name: two or more usable CPUs (cross-CPU experiments).
pub const MULTI_CPU: &str = "multiple CPUs";

/// Where tracefs stands.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum TraceFs {
    /// `events/raw_syscalls` exists under this tracefs directory.
    RawSyscalls(String),
    /// tracefs is mounted here but has no raw_syscalls events.
    NoRawSyscalls(String),
    /// tracefs exists but we may not look into it.
    NotReadable,
    /// Neither /sys/kernel/tracing nor /sys/kernel/debug/tracing has events.
    #[default]
    NotMounted,
}

/// Everything [`evaluate`] needs, gathered cheaply by [`gather_facts`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CapabilityFacts {
    /// Our uid and effective capabilities.
    pub status: ProcStatus,
    /// /proc/sys/kernel/yama/ptrace_scope (`None`: no Yama LSM).
    pub ptrace_scope: Option<i32>,
    /// /proc/sys/kernel/perf_event_paranoid (`None`: kernel without perf events).
    pub perf_event_paranoid: Option<i32>,
    /// Name of the CPU PMU under /sys/bus/event_source/devices, if one is exposed.
    pub pmu: Option<String>,
    /// tracefs state.
    pub tracefs: TraceFs,
    /// /proc/self/ns/net exists (kernel has network namespaces).
    pub netns: bool,
    /// CPUs this process may run on.
    pub usable_cpus: u32,
}

fn capability(name: &str, available: bool, detail: impl Into<String>) -> Capability {
    Capability {
        name: name.to_string(),
        available,
        detail: detail.into(),
    }
}

/// The capability list (without O_DIRECT, which needs a probe) from gathered facts.
pub fn evaluate(f: &CapabilityFacts) -> Vec<Capability> {
    vec![
        ptrace(f),
        perf_software(f),
        perf_hardware(f),
        tracepoints(f),
        raw_sockets(f),
        net_namespaces(f),
        multi_cpu(f.usable_cpus),
    ]
}

fn perf_privileged(s: &ProcStatus) -> bool {
    s.has_cap(cap::PERFMON) || s.has_cap(cap::SYS_ADMIN)
}

fn ptrace(f: &CapabilityFacts) -> Capability {
    let any = f.status.has_cap(cap::SYS_PTRACE);
    match (f.ptrace_scope, any) {
        (Some(3), _) => capability(
            PTRACE,
            false,
            "disabled: kernel.yama.ptrace_scope is 3 (no ptrace until reboot); tracing needs \
             tracepoints instead",
        ),
        (_, true) => capability(
            PTRACE,
            true,
            "CAP_SYS_PTRACE: may trace children and attach to any process",
        ),
        (None, false) => capability(
            PTRACE,
            true,
            "no Yama restrictions: may trace children and processes of the same user",
        ),
        (Some(0), false) => capability(
            PTRACE,
            true,
            "ptrace_scope 0: may trace children and processes of the same user",
        ),
        (Some(1), false) => capability(
            PTRACE,
            true,
            "ptrace_scope 1: own children only; `-p PID` needs root or \
             `sysctl kernel.yama.ptrace_scope=0`",
        ),
        (Some(n), false) => capability(
            PTRACE,
            false,
            format!("ptrace_scope {n}: needs CAP_SYS_PTRACE (run as root)"),
        ),
    }
}

fn perf_software(f: &CapabilityFacts) -> Capability {
    let Some(p) = f.perf_event_paranoid else {
        return capability(
            PERF_SOFTWARE,
            false,
            "kernel has no perf events (no /proc/sys/kernel/perf_event_paranoid)",
        );
    };
    if perf_privileged(&f.status) {
        capability(
            PERF_SOFTWARE,
            true,
            format!("privileged (root/CAP_PERFMON), perf_event_paranoid {p}"),
        )
    } else if p <= 1 {
        capability(
            PERF_SOFTWARE,
            true,
            format!("perf_event_paranoid {p}: own processes, user and kernel"),
        )
    } else if p == 2 {
        capability(
            PERF_SOFTWARE,
            true,
            "perf_event_paranoid 2: own processes, user space only (kernel stacks need \
             `sysctl kernel.perf_event_paranoid=1`)",
        )
    } else {
        capability(
            PERF_SOFTWARE,
            false,
            format!(
                "perf_event_paranoid {p} forbids perf for unprivileged users; run as root or \
                 `sysctl kernel.perf_event_paranoid=2`"
            ),
        )
    }
}

fn perf_hardware(f: &CapabilityFacts) -> Capability {
    let Some(pmu) = &f.pmu else {
        return capability(
            PERF_HARDWARE,
            false,
            "no CPU PMU in /sys/bus/event_source/devices (usual in VMs without a virtual \
             PMU); cycle figures use the TSC rate",
        );
    };
    let soft = perf_software(f);
    if soft.available {
        let detail = format!("PMU `{pmu}` exposed; hardware counters: unknown until tried");
        capability(PERF_HARDWARE, true, detail)
    } else {
        capability(
            PERF_HARDWARE,
            false,
            format!("PMU `{pmu}` exposed but {}", soft.detail),
        )
    }
}

fn tracepoints(f: &CapabilityFacts) -> Capability {
    let allowed = perf_privileged(&f.status) || f.perf_event_paranoid.is_some_and(|p| p <= -1);
    match (&f.tracefs, allowed) {
        (TraceFs::RawSyscalls(dir), true) => {
            capability(TRACEPOINTS, true, format!("raw_syscalls events in {dir}"))
        }
        (TraceFs::RawSyscalls(_), false) => capability(
            TRACEPOINTS,
            false,
            "reading syscall tracepoints needs root or `sysctl kernel.perf_event_paranoid=-1`; \
             trace falls back to ptrace",
        ),
        (TraceFs::NoRawSyscalls(dir), _) => capability(
            TRACEPOINTS,
            false,
            format!("{dir} has no raw_syscalls events (kernel built without syscall tracepoints)"),
        ),
        (TraceFs::NotReadable, _) => {
            capability(TRACEPOINTS, false, "tracefs is not readable: needs root")
        }
        (TraceFs::NotMounted, _) => capability(
            TRACEPOINTS,
            false,
            "tracefs is not mounted; as root: `mount -t tracefs nodev /sys/kernel/tracing`",
        ),
    }
}

fn raw_sockets(f: &CapabilityFacts) -> Capability {
    if f.status.has_cap(cap::NET_RAW) {
        capability(RAW_SOCKETS, true, "CAP_NET_RAW is effective")
    } else {
        capability(
            RAW_SOCKETS,
            false,
            "needs CAP_NET_RAW (run as root, or `setcap cap_net_raw+ep`)",
        )
    }
}

fn net_namespaces(f: &CapabilityFacts) -> Capability {
    match (f.netns, f.status.has_cap(cap::SYS_ADMIN)) {
        (false, _) => capability(
            NET_NAMESPACES,
            false,
            "kernel without network namespaces (no /proc/self/ns/net)",
        ),
        (true, true) => capability(NET_NAMESPACES, true, "CAP_SYS_ADMIN is effective"),
        (true, false) => capability(
            NET_NAMESPACES,
            false,
            "needs CAP_SYS_ADMIN (run as root) or an unprivileged user namespace (`unshare -rn`)",
        ),
    }
}

fn multi_cpu(n: u32) -> Capability {
    if n >= 2 {
        capability(MULTI_CPU, true, format!("{n} usable CPUs"))
    } else {
        capability(
            MULTI_CPU,
            false,
            format!(
                "only {n} usable CPU: cross-CPU experiments are skipped (check taskset/cgroup cpuset)"
            ),
        )
    }
}

/// The CPU PMU among the event sources (`cpu` on x86, `cpu_core`/`cpu_atom` on hybrid
/// Intel, `armv8_pmuv3_0`, `armv8_cortex_a72`, `apple_*_pmu` on arm64).
pub fn find_cpu_pmu<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<String> {
    names
        .into_iter()
        .find(|n| {
            matches!(*n, "cpu" | "cpu_core" | "cpu_atom")
                || n.starts_with("armv8_")
                || n.starts_with("armv7_")
                || (n.starts_with("apple_") && n.ends_with("_pmu"))
        })
        .map(str::to_string)
}

fn read_i32(path: &str) -> Option<i32> {
    fs::read_to_string(path)
        .ok()
        .and_then(|t| t.trim().parse().ok())
}

fn probe_tracefs() -> TraceFs {
    for base in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        match fs::metadata(format!("{base}/events")) {
            Ok(_) if Path::new(&format!("{base}/events/raw_syscalls")).exists() => {
                return TraceFs::RawSyscalls(base.to_string());
            }
            Ok(_) => return TraceFs::NoRawSyscalls(base.to_string()),
            Err(e) if e.kind() == ErrorKind::PermissionDenied => return TraceFs::NotReadable,
            Err(_) => {}
        }
    }
    TraceFs::NotMounted
}

/// Reads the facts for [`evaluate`] from /proc and /sys. Never fails: unreadable files
/// leave facts unknown.
pub fn gather_facts(
    status: ProcStatus,
    usable_cpus: u32,
    paranoid: Option<i32>,
) -> CapabilityFacts {
    let pmu_names: Vec<String> = fs::read_dir("/sys/bus/event_source/devices")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    CapabilityFacts {
        status,
        ptrace_scope: read_i32("/proc/sys/kernel/yama/ptrace_scope"),
        perf_event_paranoid: paranoid,
        pmu: find_cpu_pmu(pmu_names.iter().map(String::as_str)),
        tracefs: probe_tracefs(),
        netns: Path::new("/proc/self/ns/net").exists(),
        usable_cpus,
    }
}

/// Tries O_DIRECT on a temporary file in `dir` (removed again on return).
pub fn probe_o_direct(dir: &Path) -> Capability {
    let shown = dir.display();
    let file = match tempfile::Builder::new()
        .prefix(".sysmeter-odirect-")
        .tempfile_in(dir)
    {
        Ok(f) => f,
        Err(e) => {
            let detail = format!("unknown: cannot create a test file in {shown}: {e}");
            return capability(O_DIRECT, false, detail);
        }
    };
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(file.path())
    {
        Ok(_) => capability(
            O_DIRECT,
            true,
            format!("the file system of {shown} accepts O_DIRECT"),
        ),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => capability(
            O_DIRECT,
            false,
            format!(
                "the file system of {shown} refuses O_DIRECT (tmpfs, some FUSE and overlay \
                 mounts do): uncached reads fall back to posix_fadvise(DONTNEED); choose a \
                 disk-backed --dir"
            ),
        ),
        Err(e) => capability(
            O_DIRECT,
            false,
            format!("unknown: opening a test file in {shown} with O_DIRECT failed: {e}"),
        ),
    }
}

/// The full capability list for this process, with O_DIRECT probed in `dir`.
pub fn probe_capabilities(
    status: ProcStatus,
    usable_cpus: u32,
    paranoid: Option<i32>,
    dir: &Path,
) -> Vec<Capability> {
    let mut caps = evaluate(&gather_facts(status, usable_cpus, paranoid));
    caps.insert(4, probe_o_direct(dir));
    caps
}

#[cfg(test)]
mod tests;
