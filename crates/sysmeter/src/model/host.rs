//! The machine description's data types: what a run was measured on (CPU, caches, memory,
//! disks, NICs, cgroup limits, capabilities, noise warnings). Stored with every run.
//!
//! Pure data: depends on nothing but serde. Reading and parsing /proc and /sys into these
//! types is `host`'s job.

use serde::{Deserialize, Serialize};

/// Everything known about the machine a result was measured on. Stored with every run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HostInfo {
    /// Host name.
    pub hostname: String,
    /// `uname -m` (e.g. `x86_64`, `aarch64`).
    pub arch: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// PRETTY_NAME from os-release.
    pub os: String,
    /// The processor.
    pub cpu: CpuInfo,
    /// Cache levels from sysfs (cpu0's view).
    pub caches: Vec<CacheInfo>,
    /// Memory.
    pub memory: MemoryInfo,
    /// Block devices (disks).
    pub disks: Vec<DiskInfo>,
    /// Network interfaces.
    pub nics: Vec<NicInfo>,
    /// Hypervisor vendor when virtualised (e.g. `KVM`), `None` on bare metal.
    pub virtualization: Option<String>,
    /// Container / cgroup limits of this process.
    pub cgroup: CgroupLimits,
    /// CPU vulnerability mitigations: (name, status) from sysfs.
    pub vulnerabilities: Vec<(String, String)>,
    /// /proc/sys/kernel/perf_event_paranoid.
    pub perf_event_paranoid: Option<i32>,
    /// Transparent huge pages mode (the bracketed word of .../transparent_hugepage/enabled).
    pub thp: Option<String>,
    /// What this run can do here.
    pub capabilities: Vec<Capability>,
    /// Noise sources found.
    pub warnings: Vec<String>,
}

/// The processor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CpuInfo {
    /// Model name.
    pub model: String,
    /// Vendor (`AuthenticAMD`, `GenuineIntel`, or the aarch64 implementer).
    pub vendor: String,
    /// Physical packages.
    pub sockets: u32,
    /// Physical cores in total.
    pub cores: u32,
    /// Logical CPUs (hardware threads) online.
    pub threads: u32,
    /// CPUs this process may run on (affinity mask size).
    pub usable_cpus: u32,
    /// Base / nominal frequency, MHz, when known.
    pub base_mhz: Option<f64>,
    /// Current frequency of cpu0, MHz, when known.
    pub current_mhz: Option<f64>,
    /// Maximum frequency, MHz, when known.
    pub max_mhz: Option<f64>,
    /// cpufreq scaling governor, when cpufreq exists.
    pub governor: Option<String>,
    /// Turbo/boost enabled, when readable.
    pub boost: Option<bool>,
    /// Feature flags of interest (e.g. `constant_tsc`, `nonstop_tsc`, `rdtscp`).
    pub flags: Vec<String>,
}

/// One cache level as sysfs describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CacheInfo {
    /// 1, 2, 3...
    pub level: u32,
    /// `Data`, `Instruction` or `Unified`.
    pub kind: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Ways of associativity, when known.
    pub ways: Option<u32>,
    /// Line size in bytes.
    pub line_bytes: Option<u32>,
    /// CPUs sharing it (sysfs list syntax, e.g. `0-1`).
    pub shared_cpus: String,
}

/// Memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct MemoryInfo {
    /// MemTotal, bytes.
    pub total_bytes: u64,
    /// MemAvailable, bytes.
    pub available_bytes: u64,
    /// SwapTotal, bytes.
    pub swap_total_bytes: u64,
    /// Swap in use (SwapTotal - SwapFree), bytes.
    pub swap_used_bytes: u64,
    /// Memory speed in MT/s, when readable (usually needs root and DMI).
    pub speed_mts: Option<u32>,
}

/// A block device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DiskInfo {
    /// Kernel name (`vda`, `nvme0n1`).
    pub name: String,
    /// Model string, when the device reports one.
    pub model: Option<String>,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Rotational flag from sysfs (virtual disks often claim 1).
    pub rotational: Option<bool>,
}

/// A network interface.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct NicInfo {
    /// Interface name.
    pub name: String,
    /// Link speed in Mbit/s, when the driver reports it.
    pub speed_mbps: Option<u64>,
    /// MTU.
    pub mtu: Option<u32>,
    /// Operational state (`up`, `down`, `unknown`).
    pub state: String,
}

/// cgroup limits of this process (v1 or v2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct CgroupLimits {
    /// cgroup path of this process.
    pub path: Option<String>,
    /// Memory limit, bytes (`None` = unlimited or unknown).
    pub memory_max_bytes: Option<u64>,
    /// CPU quota as a number of CPUs (quota / period), `None` = unlimited.
    pub cpu_max: Option<f64>,
}

/// Something this run can or cannot do here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Capability {
    /// Short name (`ptrace`, `perf software events`, `tracepoints`, ...).
    pub name: String,
    /// Whether it is available.
    pub available: bool,
    /// Why not / how it was determined.
    pub detail: String,
}
