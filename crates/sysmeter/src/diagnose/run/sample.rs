//! Reading the /proc files `run` samples: the system-wide counters of the vmstat / iostat /
//! netstat view and the dentry cache's size, and one process's counters with every thread's state, context switches and
//! run-queue delay, and how many sockets it holds.
//!
//! The only file access of `run`'s sampling; the parsing is in [`super::procfs`]. A file
//! that cannot be read leaves its part empty (`None`), never an error: the timeline degrades.

use std::collections::BTreeMap;

use crate::host::procfs::DentryState;
use std::fs;
use std::time::Duration;

use super::procfs::{
    self, CpuTimes, Device, DiskCounters, NetCounters, PidIo, PidStat, PidStatus, VmCounters,
};

/// Most descriptors inspected per sample when counting sockets (a bound on sampling cost).
const MAX_FDS: usize = 4096;

/// The disks and interfaces the timeline sums over, chosen once at the start.
#[derive(Debug, Clone, Default)]
pub struct Devices {
    /// Whole physical disks: entries of /sys/block that are not under devices/virtual
    /// (so no partitions, loop, ram, zram, device-mapper or md, which would count twice).
    pub disks: Vec<String>,
    /// Network interfaces that are not under devices/virtual; when there is none (e.g. a
    /// container's veth), every interface but `lo`.
    pub nets: Vec<String>,
}

fn physical(class_dir: &str) -> Vec<(String, bool)> {
    let Ok(entries) = fs::read_dir(class_dir) else {
        return Vec::new();
    };
    let mut v: Vec<(String, bool)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_str()?.to_string();
            let link = fs::read_link(e.path()).ok()?;
            let virt = link.to_string_lossy().contains("/virtual/");
            Some((name, !virt))
        })
        .collect();
    v.sort();
    v
}

impl Devices {
    /// Looks at /sys/block and /sys/class/net.
    pub fn discover() -> Devices {
        let disks = physical("/sys/block")
            .into_iter()
            .filter_map(|(n, phys)| phys.then_some(n))
            .collect();
        let all_nets = physical("/sys/class/net");
        let mut nets: Vec<String> = all_nets
            .iter()
            .filter(|(_, phys)| *phys)
            .map(|(n, _)| n.clone())
            .collect();
        if nets.is_empty() {
            nets = all_nets
                .into_iter()
                .filter_map(|(n, _)| (n != "lo").then_some(n))
                .collect();
        }
        Devices { disks, nets }
    }
}

/// The system-wide counters at one instant.
#[derive(Debug, Clone, Default)]
pub struct SystemSample {
    /// Time since the start of the run.
    pub t: Duration,
    /// /proc/stat cpu line.
    pub cpu: Option<CpuTimes>,
    /// /proc/diskstats of [`Devices::disks`].
    pub disks: Vec<DiskCounters>,
    /// /proc/net/dev of [`Devices::nets`].
    pub nets: Vec<NetCounters>,
    /// /proc/vmstat paging counters.
    pub vm: Option<VmCounters>,
    /// /proc/sys/fs/dentry-state: the dentry cache's size.
    pub dentries: Option<DentryState>,
}

/// Reads the system-wide counters.
pub fn read_system(devices: &Devices, t: Duration) -> SystemSample {
    let read = |p: &str| fs::read_to_string(p).ok();
    SystemSample {
        t,
        cpu: read("/proc/stat").and_then(|s| procfs::parse_cpu_times(&s)),
        disks: chosen(
            read("/proc/diskstats"),
            procfs::parse_diskstats,
            &devices.disks,
        ),
        nets: chosen(read("/proc/net/dev"), procfs::parse_net_dev, &devices.nets),
        vm: read("/proc/vmstat").map(|s| procfs::parse_vmstat(&s)),
        dentries: read("/proc/sys/fs/dentry-state")
            .and_then(|s| crate::host::procfs::parse_dentry_state(&s)),
    }
}

/// The devices named in `keep` among those `parse` reads in `text` (none when it could not
/// be read).
fn chosen<T: Device>(text: Option<String>, parse: fn(&str) -> Vec<T>, keep: &[String]) -> Vec<T> {
    let mut all = text.map(|s| parse(&s)).unwrap_or_default();
    all.retain(|d| keep.iter().any(|k| k == d.name()));
    all
}

/// One thread of the watched process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreadSample {
    /// Scheduler state letter.
    pub state: char,
    /// Voluntary context switches so far.
    pub voluntary: u64,
    /// Involuntary context switches so far.
    pub involuntary: u64,
    /// Time runnable but waiting for a CPU so far, ns (`None` without schedstats).
    pub runqueue_ns: Option<u64>,
    /// Time on a CPU so far, ns (`None` without schedstats).
    pub oncpu_ns: Option<u64>,
    /// Sleeping in a futex wait (its `wchan`): a lock, a condition variable, a join.
    pub futex: bool,
}

/// The watched process at one instant.
#[derive(Debug, Clone, Default)]
pub struct ProcessSample {
    /// Time since the start of the run.
    pub t: Duration,
    /// /proc/PID/stat (process-wide: includes exited threads and reaped children).
    pub stat: PidStat,
    /// /proc/PID/io, when readable.
    pub io: Option<PidIo>,
    /// /proc/PID/status.
    pub status: PidStatus,
    /// Every live thread, by tid.
    pub threads: BTreeMap<u32, ThreadSample>,
    /// Sockets among its open descriptors (`None` when /proc/PID/fd is not readable).
    pub sockets: Option<usize>,
    /// Of those, TCP or UDP sockets (the rest are local: Unix, netlink, ...).
    pub inet_sockets: Option<usize>,
}

/// Reads process `pid`; `None` when its /proc/PID/stat cannot be read (gone or hidden).
pub fn read_process(pid: i32, t: Duration) -> Option<ProcessSample> {
    let base = format!("/proc/{pid}");
    let stat = procfs::parse_pid_stat(&fs::read_to_string(format!("{base}/stat")).ok()?)?;
    let read = |p: &str| fs::read_to_string(format!("{base}/{p}")).ok();
    let sockets = socket_inodes(&base);
    Some(ProcessSample {
        t,
        stat,
        io: read("io").and_then(|s| procfs::parse_pid_io(&s)),
        status: read("status")
            .map(|s| procfs::parse_pid_status(&s))
            .unwrap_or_default(),
        threads: read_threads(&base),
        sockets: sockets.as_ref().map(Vec::len),
        inet_sockets: sockets.map(|s| count_inet(&base, &s)),
    })
}

/// Whether a thread's `/proc/…/wchan` is a futex wait (`futex_wait_queue`, `futex_wait`,
/// …, as kernels name it).
pub fn is_futex_wchan(wchan: &str) -> bool {
    wchan.trim().starts_with("futex")
}

fn read_threads(base: &str) -> BTreeMap<u32, ThreadSample> {
    let Ok(entries) = fs::read_dir(format!("{base}/task")) else {
        return BTreeMap::new();
    };
    entries
        .filter_map(|e| {
            let tid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let dir = format!("{base}/task/{tid}");
            let read = |p: &str| fs::read_to_string(format!("{dir}/{p}")).ok();
            let stat = procfs::parse_pid_stat(&read("stat")?)?;
            let status = procfs::parse_pid_status(&read("status").unwrap_or_default());
            let sched = read("schedstat").and_then(|s| procfs::parse_schedstat(&s));
            let sample = ThreadSample {
                state: stat.state,
                voluntary: status.voluntary.unwrap_or(0),
                involuntary: status.involuntary.unwrap_or(0),
                runqueue_ns: sched.map(|(_, wait)| wait),
                oncpu_ns: sched.map(|(run, _)| run),
                futex: stat.state == 'S' && read("wchan").is_some_and(|w| is_futex_wchan(&w)),
            };
            Some((tid, sample))
        })
        .collect()
}

/// Inodes of the sockets among the open descriptors (`socket:[INODE]` links).
fn socket_inodes(base: &str) -> Option<Vec<u64>> {
    let entries = fs::read_dir(format!("{base}/fd")).ok()?;
    Some(
        entries
            .take(MAX_FDS)
            .filter_map(|e| fs::read_link(e.ok()?.path()).ok())
            .filter_map(|target| {
                let t = target.to_string_lossy().into_owned();
                t.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
            })
            .collect(),
    )
}

/// How many of `inodes` are TCP or UDP sockets, from the process's own network namespace
/// view (/proc/PID/net/...). Read only when it has sockets at all, to keep sampling cheap.
fn count_inet(base: &str, inodes: &[u64]) -> usize {
    if inodes.is_empty() {
        return 0;
    }
    let inet: Vec<u64> = ["tcp", "tcp6", "udp", "udp6"]
        .iter()
        .filter_map(|t| fs::read_to_string(format!("{base}/net/{t}")).ok())
        .flat_map(|text| procfs::parse_socket_inodes(&text))
        .collect();
    inodes.iter().filter(|i| inet.contains(i)).count()
}

#[cfg(test)]
mod tests {
    use super::is_futex_wchan;

    #[test]
    fn futex_waits_by_their_wchan() {
        assert!(is_futex_wchan("futex_wait_queue"));
        assert!(is_futex_wchan("futex_do_wait\n"));
        assert!(!is_futex_wchan("hrtimer_nanosleep"));
        assert!(!is_futex_wchan("pipe_read"));
        assert!(!is_futex_wchan("0"));
    }
}
