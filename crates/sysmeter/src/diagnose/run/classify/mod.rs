//! The verdict of `sysmeter run`: is the program CPU-bound, kernel-bound, I/O-bound (and then
//! waiting on the disk, the network, paging or something else), or mixed — with the numbers
//! that led there, the next command to run and the usual remedies. This is the workload
//! characterisation of the time-performance chapter of D. Spinellis, Code Quality (r ≫ u+s
//! I/O-bound, s > u kernel-bound, u ≃ r CPU-bound), made precise for processes with several threads and for
//! machines where other load competes for the CPUs.
//!
//! # Rules
//!
//! With real time *r*, user time *u*, system time *s* and the time *q* the command's threads
//! were runnable but waiting for a CPU (run-queue delay, when known), the **CPU demand** is
//! `d = (u + s + q) / r`: how many CPUs the command used or wanted, on average. Counting *q*
//! keeps a CPU spin CPU-bound on a machine where other load delays it.
//!
//! 1. `d ≥ 0.8` ([`COMPUTE_DEMAND_MIN`]): it computed (or wanted to) ≥ 80% of the time.
//!    **Kernel-bound** when `s > u` (the book's rule), otherwise **CPU-bound** (u ≈ r × busy
//!    CPUs). Next: `sysmeter trace -- CMD` resp. `sysmeter profile -- CMD`.
//! 2. `d < 1/3` ([`IO_DEMAND_MAX`], i.e. r > 3·(u+s+q), the chapter's r ≫ u+s): **I/O-bound**,
//!    with the first cause that matches:
//!    - *paging*: ≥ [`PAGING_FAULTS_PER_S`] major faults per second of real time, or the
//!      machine swapped ≥ [`SWAP_PAGES_PER_S`] pages/s while the command had major faults;
//!    - *disk*: the command's threads were in uninterruptible disk wait (state D) in
//!      ≥ [`DISK_WAIT_SHARE`] of the samples, or it moved ≥ [`DISK_MIN_BYTES`] to or from
//!      storage while the busiest disk was busy ≥ [`DISK_BUSY_PCT`] % of the run;
//!    - *network*: it held at least one TCP or UDP socket (a Unix socket is a local peer);
//!    - otherwise *waiting*: sleeping on a timer, a pipe, a lock or another process
//!      (voluntary context switches and the machine's idle share are given).
//!
//!    Whatever the cause, Next names `sysmeter profile --off-cpu` (where it waits, for what,
//!    who wakes it) — or first `sysmeter locks` when ≥ [`FUTEX_WAIT_SHARE`] of the waiting
//!    thread samples slept in a futex wait (their `wchan`).
//! 3. In between: **mixed** — the compute part (user CPU, kernel CPU when `s > u`, or
//!    *waiting for a CPU* when `q > u + s`: other load) and the wait cause are both named,
//!    with both next commands.
//!
//! Pure: numbers in, a [`Verdict`] out; no OS access. Depends on nothing but `model::units`
//! for number formatting (in `advice`, the words of each verdict).

mod advice;

use advice::{
    contention_fix, contention_next, cpu_parts, kernel_parts, time_split, wait_parts, wait_reason,
};

/// CPU demand at or above which a command counts as computing (CPU- or kernel-bound).
pub const COMPUTE_DEMAND_MIN: f64 = 0.8;
/// CPU demand below which a command counts as I/O-bound (r > 3·(u+s+q)).
pub const IO_DEMAND_MAX: f64 = 1.0 / 3.0;
/// Major faults per second of real time that make waiting count as paging.
pub const PAGING_FAULTS_PER_S: f64 = 10.0;
/// Pages swapped in+out per second that, with any major fault, count as paging.
pub const SWAP_PAGES_PER_S: f64 = 10.0;
/// Share of samples in disk wait (state D) that makes waiting count as disk.
pub const DISK_WAIT_SHARE: f64 = 0.25;
/// Bytes to or from storage that, with a busy disk, make waiting count as disk.
pub const DISK_MIN_BYTES: u64 = 1 << 20;
/// Busy percentage of the busiest disk that, with the command's own storage I/O, counts.
pub const DISK_BUSY_PCT: f64 = 20.0;
/// Share of the waiting thread samples in a futex wait from which futex waits dominate:
/// the next command is then `sysmeter locks`.
pub const FUTEX_WAIT_SHARE: f64 = 0.5;
/// Share of real time spent waiting for a CPU from which the reason warns of contention.
pub const CONTENTION_SHARE: f64 = 0.2;

/// Load on one device (disk or network interface) over the run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeviceLoad {
    /// Device or interface name.
    pub name: String,
    /// Share of the run the device had I/O in flight, % (disks only).
    pub busy_pct: Option<f64>,
    /// Bytes per second moved (read+write, or received+sent).
    pub bytes_per_s: f64,
}

/// Everything the verdict looks at, measured by `run`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Evidence {
    /// How the next commands name the target: `-- CMD ARGS` or `-p PID` (empty: `-- CMD`).
    pub target: String,
    /// Real (wall-clock) time, s.
    pub real_s: f64,
    /// User CPU time, s.
    pub user_s: f64,
    /// System CPU time, s.
    pub system_s: f64,
    /// CPUs the command may run on (its affinity).
    pub cpus: usize,
    /// Time runnable but waiting for a CPU, s, when known.
    pub runqueue_s: Option<f64>,
    /// Major page faults of the command.
    pub major_faults: u64,
    /// Voluntary context switches of the command.
    pub voluntary_switches: u64,
    /// Bytes the command read from and wrote to storage, when known.
    pub storage_bytes: Option<u64>,
    /// Share of the command's thread samples in disk wait (state D), when sampled.
    pub disk_wait_share: Option<f64>,
    /// Share of its waiting thread samples sleeping in a futex wait (`wchan`), when sampled.
    pub futex_wait_share: Option<f64>,
    /// The busiest disk during the run.
    pub disk: Option<DeviceLoad>,
    /// The busiest network interface during the run.
    pub net: Option<DeviceLoad>,
    /// Most TCP or UDP sockets the command held at once (Unix sockets do not count).
    pub sockets: usize,
    /// Pages swapped in+out per second, machine-wide.
    pub swap_pages_per_s: f64,
    /// Idle share of the machine's CPUs during the run, %.
    pub idle_pct: Option<f64>,
}

/// The class of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Computing in user space most of the time.
    Cpu,
    /// Computing in the kernel (system calls) most of the time.
    Kernel,
    /// Waiting most of the time, on this.
    Io(Wait),
    /// Partly computing (or waiting for a CPU), partly waiting on something else.
    Mixed {
        /// What the computing part was.
        compute: Compute,
        /// What the waiting part waited on.
        wait: Wait,
    },
}

/// The computing part of a mixed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compute {
    /// Mostly user time.
    User,
    /// More system than user time.
    Kernel,
    /// More time waiting for a CPU than running on one: other load.
    Contention,
}

/// What an I/O-bound command waited on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Storage.
    Disk,
    /// Sockets.
    Network,
    /// Major page faults and swapping.
    Paging,
    /// Timers, pipes, locks, other processes.
    Other,
}

/// The verdict with its reasons.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The class.
    pub class: Class,
    /// Short label (`CPU-bound`, `I/O-bound (disk)`).
    pub label: String,
    /// The numbers that led to it, in a sentence or two.
    pub reason: String,
    /// The next command(s) to run.
    pub next: String,
    /// The usual remedies.
    pub remedies: String,
    /// CPU demand `(u + s + q) / r`.
    pub demand: f64,
    /// Share of real time spent neither running nor runnable, 0..1 (single-threaded view).
    pub wait_share: f64,
}

/// Classifies a run (see the module documentation for the rules).
pub fn classify(e: &Evidence) -> Verdict {
    let real = e.real_s.max(1e-9);
    let cpu = e.user_s + e.system_s;
    let demand = (cpu + e.runqueue_s.unwrap_or(0.0)) / real;
    let wait_share = (1.0 - demand).clamp(0.0, 1.0);
    let kernel = e.system_s > e.user_s;
    let class = if demand >= COMPUTE_DEMAND_MIN {
        if kernel { Class::Kernel } else { Class::Cpu }
    } else if demand < IO_DEMAND_MAX {
        Class::Io(wait_cause(e))
    } else {
        let compute = if e.runqueue_s.unwrap_or(0.0) > cpu {
            Compute::Contention
        } else if kernel {
            Compute::Kernel
        } else {
            Compute::User
        };
        Class::Mixed {
            compute,
            wait: wait_cause(e),
        }
    };
    let mut reason = time_split(e, demand);
    let (label, next, remedies) = words(e, class, &mut reason);
    Verdict {
        class,
        label,
        reason,
        next,
        remedies,
        demand,
        wait_share,
    }
}

/// Label, next commands and remedies of `class`; appends the wait reason to `reason`.
fn words(e: &Evidence, class: Class, reason: &mut String) -> (String, String, String) {
    let target = if e.target.is_empty() {
        "-- CMD"
    } else {
        e.target.as_str()
    };
    let wait = match class {
        Class::Io(w) | Class::Mixed { wait: w, .. } => Some(w),
        Class::Cpu | Class::Kernel => None,
    };
    if let Some(w) = wait {
        reason.push(' ');
        reason.push_str(&wait_reason(e, w));
    }
    match class {
        Class::Cpu => cpu_parts(target),
        Class::Kernel => kernel_parts(target),
        Class::Io(w) => {
            let (what, next, remedies) = wait_parts(e, w, target);
            (format!("I/O-bound ({what})"), next, remedies)
        }
        Class::Mixed { compute, wait } => {
            let (what, wnext, wrem) = wait_parts(e, wait, target);
            let (part, (_, cnext, crem)) = match compute {
                Compute::User => ("user CPU", cpu_parts(target)),
                Compute::Kernel => ("kernel CPU", kernel_parts(target)),
                Compute::Contention => (
                    "waiting for a CPU",
                    (String::new(), contention_next(), contention_fix()),
                ),
            };
            let label = format!("mixed ({part} and waiting on {what})");
            (
                label,
                format!("{cnext}; {wnext}"),
                format!("{crem}; {wrem}"),
            )
        }
    }
}

/// Whether futex waits (locks, condition variables, joins) dominate the waiting.
pub fn futex_dominated(e: &Evidence) -> bool {
    e.futex_wait_share.is_some_and(|s| s >= FUTEX_WAIT_SHARE)
}

/// The first wait cause that matches (paging, disk, network, other).
fn wait_cause(e: &Evidence) -> Wait {
    let real = e.real_s.max(1e-9);
    let faults_per_s = e.major_faults as f64 / real;
    if faults_per_s >= PAGING_FAULTS_PER_S
        || (e.major_faults > 0 && e.swap_pages_per_s >= SWAP_PAGES_PER_S)
    {
        return Wait::Paging;
    }
    let d_state = e.disk_wait_share.is_some_and(|s| s >= DISK_WAIT_SHARE);
    let busy_disk = e
        .disk
        .as_ref()
        .and_then(|d| d.busy_pct)
        .is_some_and(|b| b >= DISK_BUSY_PCT);
    let own_io = e.storage_bytes.is_some_and(|b| b >= DISK_MIN_BYTES);
    if d_state || (own_io && busy_disk) {
        return Wait::Disk;
    }
    if e.sockets > 0 {
        return Wait::Network;
    }
    Wait::Other
}

#[cfg(test)]
mod tests;
