//! Noise warnings: the things about this machine that make measurements vary or mislead,
//! each as a full sentence that says why it matters and how to fix it.
//!
//! Pure: a [`HostInfo`] and the load average in, sentences out. No file access; depends
//! only on the host data types.

use crate::model::{HostInfo, units};

/// A load average above this means other work competes with the measurement.
const LOAD_THRESHOLD: f64 = 0.5;

/// Every noise source found in `host`, plus a busy machine when `load1` (the 1-minute
/// load average) is above 0.5. The `ht` cpuinfo flag is not used for SMT: VMs set it with
/// one thread per core; threads > cores is what matters.
pub fn noise_warnings(host: &HostInfo, load1: Option<f64>) -> Vec<String> {
    let mut out = Vec::new();
    frequency_warnings(host, &mut out);
    let cpu = &host.cpu;
    if cpu.cores > 0 && cpu.threads > cpu.cores {
        out.push(format!(
            "SMT is on ({} hardware threads on {} cores): a sibling thread shares the core's \
             caches and execution units with the measurement, so keep siblings idle or turn \
             SMT off (`echo off | sudo tee /sys/devices/system/cpu/smt/control`).",
            cpu.threads, cpu.cores
        ));
    }
    if let Some(hv) = &host.virtualization {
        out.push(format!(
            "Running under a hypervisor ({hv}): times include virtualization effects (VM \
             exits, stolen time, timer emulation) and cross-CPU wakeups cost VM exits, so \
             compare these results only with runs on the same kind of VM."
        ));
    }
    if let Some(load) = load1.filter(|l| *l > LOAD_THRESHOLD) {
        out.push(format!(
            "The 1-minute load average is {load:.2}: other work competes for the CPUs and \
             adds noise; stop other jobs or wait until the machine is idle."
        ));
    }
    memory_warnings(host, &mut out);
    cgroup_warnings(host, &mut out);
    out
}

/// Governor, boost, and the absence of cpufreq.
fn frequency_warnings(host: &HostInfo, out: &mut Vec<String>) {
    let cpu = &host.cpu;
    match cpu.governor.as_deref() {
        Some("performance") => {}
        Some(g) => out.push(format!(
            "The cpufreq governor is `{g}`, so the clock rate follows the load and early \
             samples run slower than later ones; for stable numbers run `sudo cpupower \
             frequency-set -g performance` (and restore `{g}` afterwards)."
        )),
        None if cpu.max_mhz.is_none() => out.push(
            "No cpufreq information (usual in VMs): frequency unknown, cycle figures use the \
             TSC rate, which is not the core clock if the host scales its frequency."
                .to_string(),
        ),
        None => {}
    }
    if cpu.boost == Some(true) {
        out.push(
            "Turbo/boost is on, so the clock rate depends on temperature and on how many \
             cores are busy; disable it for repeatable numbers (`echo 0 | sudo tee \
             /sys/devices/system/cpu/cpufreq/boost`, or `echo 1 | sudo tee \
             /sys/devices/system/cpu/intel_pstate/no_turbo`)."
                .to_string(),
        );
    }
}

/// Swap in use and THP `always`.
fn memory_warnings(host: &HostInfo, out: &mut Vec<String>) {
    let used = host.memory.swap_used_bytes;
    if used > 0 {
        out.push(format!(
            "{} of swap is in use: memory results may include page-in stalls; free memory \
             or run `sudo swapoff -a && sudo swapon -a` before measuring.",
            units::size(used)
        ));
    }
    if host.thp.as_deref() == Some("always") {
        out.push(
            "Transparent huge pages are `always`: large allocations may or may not get 2 MiB \
             pages, which changes TLB misses and memory latency from run to run; set \
             `madvise` (`echo madvise | sudo tee \
             /sys/kernel/mm/transparent_hugepage/enabled`)."
                .to_string(),
        );
    }
}

/// cgroup CPU quota and memory limit.
fn cgroup_warnings(host: &HostInfo, out: &mut Vec<String>) {
    if let Some(q) = host.cgroup.cpu_max {
        out.push(format!(
            "A cgroup CPU quota of {q:.2} CPUs applies: the scheduler throttles this process \
             once the quota of a period is spent, which shows up as long outliers; run \
             outside the limited cgroup or raise cpu.max."
        ));
    }
    if let Some(m) = host.cgroup.memory_max_bytes {
        out.push(format!(
            "A cgroup memory limit of {} applies: file-cache and memory experiments are \
             bounded by it rather than by RAM.",
            units::size(m)
        ));
    }
}

/// A warning when the kernel's clocksource is not a TSC-like counter read in user space
/// (`tsc` on x86, `arch_sys_counter` on arm64): then every clock_gettime is a system call.
pub fn clocksource_warning(current: &str) -> Option<String> {
    let cs = current.trim();
    if cs.is_empty() || cs == "tsc" || cs == "arch_sys_counter" {
        return None;
    }
    Some(format!(
        "The clocksource is `{cs}`, not `tsc`: clock_gettime cannot use the vDSO fast path \
         and every timestamp costs a system call; if `tsc` is listed in available_clocksource, \
         `echo tsc | sudo tee /sys/devices/system/clocksource/clocksource0/current_clocksource`."
    ))
}

#[cfg(test)]
mod tests;
