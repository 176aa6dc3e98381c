//! Pure parsers of the /proc files `sysmeter run` samples: the system-wide counters
//! (`/proc/stat` cpu line, `/proc/diskstats`, `/proc/net/dev`, `/proc/vmstat`) and the
//! per-process ones (`/proc/PID/stat`, `/proc/PID/io`, `/proc/PID/status`,
//! `/proc/PID/task/TID/schedstat`).
//!
//! Pure: text in, numbers out; no file access. Malformed lines are skipped, missing fields
//! are `None` or 0, so a kernel that lacks a field degrades a figure instead of the run.

/// The aggregate `cpu` line of /proc/stat, in clock ticks since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTimes {
    /// User mode, including nice.
    pub user: u64,
    /// Kernel mode, including hard and soft interrupts.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle while some task waited for block I/O.
    pub iowait: u64,
    /// Taken by the hypervisor for other guests.
    pub steal: u64,
}

impl CpuTimes {
    /// Sum of all the states (guest time is already inside user).
    pub fn total(&self) -> u64 {
        self.user + self.system + self.idle + self.iowait + self.steal
    }
}

/// Parses the `cpu ` line of /proc/stat.
pub fn parse_cpu_times(stat: &str) -> Option<CpuTimes> {
    let line = stat.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let at = |i: usize| v.get(i).copied().unwrap_or(0);
    if v.len() < 4 {
        return None;
    }
    Some(CpuTimes {
        user: at(0) + at(1),
        system: at(2) + at(5) + at(6),
        idle: at(3),
        iowait: at(4),
        steal: at(7),
    })
}

/// One block device's counters from /proc/diskstats.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiskCounters {
    /// Device name (`vda`, `nvme0n1`).
    pub name: String,
    /// Sectors read (always 512 bytes, whatever the device's sector size).
    pub read_sectors: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Milliseconds the device had I/O in flight (the basis of iostat's %util).
    pub io_ticks_ms: u64,
}

/// The counters of one named device (a disk or a network interface), which the sampler
/// keeps only for the chosen devices and the timeline pairs by name across samples.
pub trait Device {
    /// `vda`, `eth0`.
    fn name(&self) -> &str;
}

impl Device for DiskCounters {
    fn name(&self) -> &str {
        &self.name
    }
}

impl Device for NetCounters {
    fn name(&self) -> &str {
        &self.name
    }
}

/// Parses /proc/diskstats (every device, partitions included; the caller filters).
pub fn parse_diskstats(text: &str) -> Vec<DiskCounters> {
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            let num = |i: usize| f.get(i).and_then(|s| s.parse::<u64>().ok());
            Some(DiskCounters {
                name: (*f.get(2)?).to_string(),
                read_sectors: num(5)?,
                write_sectors: num(9)?,
                io_ticks_ms: num(12)?,
            })
        })
        .collect()
}

/// One network interface's byte counters from /proc/net/dev.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NetCounters {
    /// Interface name.
    pub name: String,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
}

/// Parses /proc/net/dev (skipping its two header lines).
pub fn parse_net_dev(text: &str) -> Vec<NetCounters> {
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.split_once(':')?;
            let f: Vec<u64> = rest
                .split_whitespace()
                .map(|s| s.parse().ok())
                .collect::<Option<Vec<u64>>>()?;
            Some(NetCounters {
                name: name.trim().to_string(),
                rx_bytes: *f.first()?,
                tx_bytes: *f.get(8)?,
            })
        })
        .collect()
}

/// The /proc/vmstat counters of the paging view.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VmCounters {
    /// Page faults (minor and major) since boot.
    pub pgfault: u64,
    /// Major page faults (needed I/O).
    pub pgmajfault: u64,
    /// Pages swapped in.
    pub pswpin: u64,
    /// Pages swapped out.
    pub pswpout: u64,
}

/// Parses the `pgfault`, `pgmajfault`, `pswpin` and `pswpout` lines of /proc/vmstat.
pub fn parse_vmstat(text: &str) -> VmCounters {
    let mut c = VmCounters::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(' ') else {
            continue;
        };
        let v = value.trim().parse().unwrap_or(0);
        match key {
            "pgfault" => c.pgfault = v,
            "pgmajfault" => c.pgmajfault = v,
            "pswpin" => c.pswpin = v,
            "pswpout" => c.pswpout = v,
            _ => {}
        }
    }
    c
}

/// Fields of /proc/PID/stat (or /proc/PID/task/TID/stat); times in clock ticks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PidStat {
    /// Scheduler state letter (R running, S sleeping, D disk wait, Z zombie, ...).
    pub state: char,
    /// Minor faults of the process.
    pub minflt: u64,
    /// Minor faults of its waited-for children.
    pub cminflt: u64,
    /// Major faults of the process.
    pub majflt: u64,
    /// Major faults of its waited-for children.
    pub cmajflt: u64,
    /// User time.
    pub utime: u64,
    /// System time.
    pub stime: u64,
    /// User time of waited-for children.
    pub cutime: u64,
    /// System time of waited-for children.
    pub cstime: u64,
}

/// Parses a stat line. The command name may hold spaces and parentheses, so fields are
/// counted from the *last* `)`.
pub fn parse_pid_stat(text: &str) -> Option<PidStat> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // f[0] is field 3 (state); field n is f[n - 3].
    let num = |field: usize| f.get(field - 3).and_then(|s| s.parse::<u64>().ok());
    Some(PidStat {
        state: f.first()?.chars().next()?,
        minflt: num(10)?,
        cminflt: num(11)?,
        majflt: num(12)?,
        cmajflt: num(13)?,
        utime: num(14)?,
        stime: num(15)?,
        cutime: num(16)?,
        cstime: num(17)?,
    })
}

/// /proc/PID/io: bytes through read/write-like calls (`rchar`/`wchar`, pipes and sockets
/// included) and bytes that reached the storage layer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PidIo {
    /// Bytes returned by read(2)-like calls.
    pub rchar: u64,
    /// Bytes passed to write(2)-like calls.
    pub wchar: u64,
    /// Bytes fetched from storage.
    pub read_bytes: u64,
    /// Bytes sent toward storage (page-cache dirtying counts here).
    pub write_bytes: u64,
    /// Written bytes later cancelled (truncated before writeback).
    pub cancelled_write_bytes: u64,
}

/// Parses /proc/PID/io; `None` when the file has none of its keys.
pub fn parse_pid_io(text: &str) -> Option<PidIo> {
    let mut io = PidIo::default();
    let mut seen = false;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Ok(v) = value.trim().parse::<u64>() else {
            continue;
        };
        let slot = match key {
            "rchar" => &mut io.rchar,
            "wchar" => &mut io.wchar,
            "read_bytes" => &mut io.read_bytes,
            "write_bytes" => &mut io.write_bytes,
            "cancelled_write_bytes" => &mut io.cancelled_write_bytes,
            _ => continue,
        };
        *slot = v;
        seen = true;
    }
    seen.then_some(io)
}

/// Fields of /proc/PID/status (or of one task's status).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PidStatus {
    /// Peak resident set (`VmHWM`), KiB.
    pub vm_hwm_kib: Option<u64>,
    /// `voluntary_ctxt_switches` (of this task only).
    pub voluntary: Option<u64>,
    /// `nonvoluntary_ctxt_switches` (of this task only).
    pub involuntary: Option<u64>,
    /// `Cpus_allowed_list`.
    pub cpus_allowed_list: Option<String>,
}

/// Parses the status fields `run` uses.
pub fn parse_pid_status(text: &str) -> PidStatus {
    let mut s = PidStatus::default();
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let num = || value.split_whitespace().next()?.parse::<u64>().ok();
        match key {
            "VmHWM" => s.vm_hwm_kib = num(),
            "voluntary_ctxt_switches" => s.voluntary = num(),
            "nonvoluntary_ctxt_switches" => s.involuntary = num(),
            "Cpus_allowed_list" => s.cpus_allowed_list = Some(value.to_string()),
            _ => {}
        }
    }
    s
}

/// /proc/PID/task/TID/schedstat: (ns on a CPU, ns runnable but waiting for a CPU).
pub fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut f = text.split_whitespace().map(|s| s.parse::<u64>().ok());
    Some((f.next()??, f.next()??))
}

/// The socket inodes listed in /proc/PID/net/{tcp,tcp6,udp,udp6} (the 10th column).
pub fn parse_socket_inodes(text: &str) -> Vec<u64> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(9)?.parse().ok())
        .collect()
}

#[cfg(test)]
mod tests;
