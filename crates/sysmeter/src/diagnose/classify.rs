//! The verdict of `sysmeter run`: is the program CPU-bound, kernel-bound, I/O-bound (and then
//! waiting on the disk, the network, paging or something else), or mixed — with the numbers
//! that led there, the next command to run and the usual remedies. This is the workload
//! characterisation of the time-performance chapter (Table 4.1: r ≫ u+s I/O-bound, s > u
//! kernel-bound, u ≃ r CPU-bound), made precise for processes with several threads and for
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
//!    - *network*: it held at least one socket;
//!    - otherwise *waiting*: sleeping on a timer, a pipe, a lock or another process
//!      (voluntary context switches and the machine's idle share are given).
//! 3. In between: **mixed** — the compute part (user or kernel) and the wait cause are both
//!    named, and both next commands.
//!
//! Pure: numbers in, a [`Verdict`] out; no OS access. Depends on nothing but `report::format`
//! for number formatting.

use crate::report::format;

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
    /// The busiest disk during the run.
    pub disk: Option<DeviceLoad>,
    /// The busiest network interface during the run.
    pub net: Option<DeviceLoad>,
    /// Most sockets the command held at once.
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
    /// Partly computing (`kernel`: mostly in the kernel), partly waiting.
    Mixed {
        /// Whether system time exceeds user time.
        kernel: bool,
        /// What the waiting part waited on.
        wait: Wait,
    },
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
        Class::Mixed {
            kernel,
            wait: wait_cause(e),
        }
    };
    let mut reason = time_split(e, demand);
    let (label, next, remedies) = match class {
        Class::Cpu => cpu_parts(),
        Class::Kernel => kernel_parts(),
        Class::Io(w) => {
            reason.push(' ');
            reason.push_str(&wait_reason(e, w));
            let (what, next, remedies) = wait_parts(e, w);
            (format!("I/O-bound ({what})"), next, remedies)
        }
        Class::Mixed { kernel, wait } => {
            reason.push(' ');
            reason.push_str(&wait_reason(e, wait));
            let (what, wnext, wrem) = wait_parts(e, wait);
            let (_, cnext, crem) = if kernel { kernel_parts() } else { cpu_parts() };
            let part = if kernel { "kernel" } else { "user" };
            let label = format!("mixed ({part} CPU and waiting on {what})");
            (
                label,
                format!("{cnext}; {wnext}"),
                format!("{crem}; {wrem}"),
            )
        }
    };
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

fn secs(s: f64) -> String {
    format::duration_ns(s * 1e9)
}

/// "real 2.00 s, user 1.98 s, system 10.0 ms: 0.99 CPUs busy of 2 usable".
fn time_split(e: &Evidence, demand: f64) -> String {
    let cpu = e.user_s + e.system_s;
    let busy = cpu / e.real_s.max(1e-9);
    let mut text = format!(
        "real {}, user {}, system {}: on average {} CPUs busy",
        secs(e.real_s),
        secs(e.user_s),
        secs(e.system_s),
        format::sig3(busy),
    );
    if e.cpus > 0 {
        text.push_str(&format!(" of {} usable", e.cpus));
    }
    if let Some(q) = e.runqueue_s.filter(|&q| q > 0.0) {
        text.push_str(&format!(
            "; it also waited {} for a CPU (demand {} CPUs)",
            secs(q),
            format::sig3(demand)
        ));
    }
    text.push('.');
    text
}

fn cpu_parts() -> (String, String, String) {
    (
        "CPU-bound".into(),
        "`sysmeter profile -- CMD` to see which functions take the time".into(),
        "a better algorithm or data structure, less work per item, caching of computed \
         results, a faster CPU or memory system, or more threads if the work can be split"
            .into(),
    )
}

fn kernel_parts() -> (String, String, String) {
    (
        "kernel-bound".into(),
        "`sysmeter trace -- CMD` to see which system calls take the time".into(),
        "fewer system calls (bigger buffers, batching, user-level caching of results such as \
         stat or time), cheaper ones, or a faster CPU"
            .into(),
    )
}

/// What, concretely, the command waited on.
fn wait_reason(e: &Evidence, w: Wait) -> String {
    let real = e.real_s.max(1e-9);
    match w {
        Wait::Paging => format!(
            "It waited on paging: {} major faults ({}/s), {} pages/s swapped.",
            e.major_faults,
            format::sig3(e.major_faults as f64 / real),
            format::sig3(e.swap_pages_per_s)
        ),
        Wait::Disk => {
            let mut t = "It waited on the disk".to_string();
            if let Some(s) = e.disk_wait_share {
                t.push_str(&format!(
                    ": in disk wait (state D) in {:.0}% of the samples",
                    s * 100.0
                ));
            }
            if let Some(b) = e.storage_bytes {
                t.push_str(&format!("; {} to or from storage", format::bytes(b as f64)));
            }
            if let Some(d) = &e.disk {
                t.push_str(&format!("; {} {}", d.name, device_load(d)));
            }
            t.push('.');
            t
        }
        Wait::Network => {
            let mut t = format!("It waited with {} socket(s) open", e.sockets);
            if let Some(n) = &e.net {
                t.push_str(&format!(
                    "; busiest interface {} {}",
                    n.name,
                    device_load(n)
                ));
            }
            t.push('.');
            t
        }
        Wait::Other => {
            let mut t = format!(
                "It slept on something else (a timer, a pipe, a lock or another process): {} \
                 voluntary context switches ({}/s)",
                e.voluntary_switches,
                format::sig3(e.voluntary_switches as f64 / real)
            );
            if let Some(idle) = e.idle_pct {
                t.push_str(&format!(", while the CPUs were {idle:.0}% idle"));
            }
            t.push('.');
            t
        }
    }
}

fn device_load(d: &DeviceLoad) -> String {
    match d.busy_pct {
        Some(b) => format!("busy {b:.0}%, {}", format::rate(d.bytes_per_s)),
        None => format!("moved {}", format::rate(d.bytes_per_s)),
    }
}

/// (what, next, remedies) of a wait cause.
fn wait_parts(e: &Evidence, w: Wait) -> (String, String, String) {
    match w {
        Wait::Paging => (
            "paging".into(),
            "`vmstat 1` while it runs, and `sysmeter bench mem.pagefault` for the cost of one \
             fault"
                .into(),
            "more memory, a smaller working set, better locality, or less competing memory use"
                .into(),
        ),
        Wait::Disk => {
            let dev = e.disk.as_ref().map_or("DEVICE", |d| d.name.as_str());
            (
                format!("disk {dev}"),
                format!("`iostat -x {dev} 1` while it runs, `sysmeter trace -e file -- CMD`"),
                "caching (page cache, application cache), fewer and larger I/Os, better disk \
                 data structures, or a faster device"
                    .into(),
            )
        }
        Wait::Network => {
            let dev = e.net.as_ref().map_or("the network", |n| n.name.as_str());
            (
                format!("network {dev}"),
                format!("`sysmeter trace -e network -- CMD` and the interface {dev} (`ss -tin`)"),
                "caching of remote results, fewer round trips (batching, pipelining), a more \
                 efficient protocol, or a faster link"
                    .into(),
            )
        }
        Wait::Other => (
            "waiting".into(),
            "`sysmeter trace -- CMD` to see which calls block (read, poll, futex, wait4, \
             nanosleep)"
                .into(),
            "overlap the waiting with useful work, remove sleeps and polling, or speed up the \
             process or service it waits for"
                .into(),
        ),
    }
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
