//! Pure parsers of the kernel counters a [`super::Watch`] reads: one CPU's line of
//! `/proc/stat`, the `nonvoluntary_ctxt_switches` line of `/proc/thread-self/status`, and
//! `/proc/thread-self/schedstat`.
//!
//! Pure: text in, numbers out, no file access (the reading is in [`super::counters`]).
//! Independent of `diagnose::run::procfs`, which parses the aggregate `cpu` line only and
//! which the harness may not depend on.

/// `/proc/stat` reports clock ticks of USER_HZ, which the kernel ABI fixes at 100 per second
/// on every architecture Linux supports today, whatever CONFIG_HZ is.
pub const USER_HZ: u64 = 100;

/// Nanoseconds per USER_HZ tick.
pub const NS_PER_TICK: u64 = 1_000_000_000 / USER_HZ;

/// One CPU's line of `/proc/stat` (`cpuN user nice system idle iowait irq softirq steal …`),
/// in USER_HZ ticks since boot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CpuTicks {
    /// User mode (guest time included).
    pub user: u64,
    /// User mode at positive nice (guest_nice included).
    pub nice: u64,
    /// Kernel mode.
    pub system: u64,
    /// Idle.
    pub idle: u64,
    /// Idle with I/O outstanding.
    pub iowait: u64,
    /// Hard interrupts.
    pub irq: u64,
    /// Soft interrupts.
    pub softirq: u64,
    /// Time the hypervisor ran something else while this vCPU wanted to run (field 8).
    pub steal: u64,
}

impl CpuTicks {
    /// Ticks in which the CPU ran something: user + nice + system + irq + softirq (guest
    /// time is already inside user and nice; idle, iowait and steal are not running).
    pub fn busy(&self) -> u64 {
        self.user + self.nice + self.system + self.irq + self.softirq
    }
}

/// The `cpuN` line of `/proc/stat` for `cpu`; `None` when it is absent (offline CPU) or has
/// fewer than the 8 fields through steal (kernels before 2.6.11).
pub fn parse_cpu_line(stat: &str, cpu: usize) -> Option<CpuTicks> {
    ticks_of(stat, &format!("cpu{cpu}"))
}

/// The aggregate `cpu` line of `/proc/stat` (every CPU summed) and the number of `cpuN`
/// lines (online CPUs); `None` without the aggregate line.
pub fn parse_all_cpus(stat: &str) -> Option<(CpuTicks, usize)> {
    let is_cpu_n =
        |w: &str| w.len() > 3 && w.starts_with("cpu") && w[3..].bytes().all(|b| b.is_ascii_digit());
    let online = stat
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| is_cpu_n(w))
        .count();
    Some((ticks_of(stat, "cpu")?, online))
}

/// The ticks of the `/proc/stat` line whose first word is `name`.
fn ticks_of(stat: &str, name: &str) -> Option<CpuTicks> {
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse::<u64>().ok())
        .collect::<Option<Vec<u64>>>()?;
    let &[user, nice, system, idle, iowait, irq, softirq, steal, ..] = v.as_slice() else {
        return None;
    };
    Some(CpuTicks {
        user,
        nice,
        system,
        idle,
        iowait,
        irq,
        softirq,
        steal,
    })
}

/// `nonvoluntary_ctxt_switches` of a `/proc/*/status` text: how often the task was switched
/// out while it still wanted to run.
pub fn parse_nonvoluntary_switches(status: &str) -> Option<u64> {
    status.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        (key == "nonvoluntary_ctxt_switches").then(|| value.trim().parse().ok())?
    })
}

/// `/proc/*/schedstat`: the three numbers the scheduler keeps per task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SchedStat {
    /// Time on a CPU, ns (field 1).
    pub run_ns: u64,
    /// Time runnable but waiting on a run queue, ns (field 2).
    pub wait_ns: u64,
    /// Number of time slices run (field 3).
    pub timeslices: u64,
}

/// Parses `/proc/*/schedstat` (`run_ns wait_ns timeslices`).
pub fn parse_schedstat(text: &str) -> Option<SchedStat> {
    let mut f = text.split_whitespace().map(|s| s.parse::<u64>().ok());
    Some(SchedStat {
        run_ns: f.next()??,
        wait_ns: f.next()??,
        timeslices: f.next()??,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  41864 0 10220 73737 833 0 70 145 0 0\n\
        cpu0 19986 0 4407 38808 161 0 16 70 0 0\n\
        cpu1 21878 3 5813 34928 671 2 53 75 9 0\n\
        cpu10 1 2 3 4 5 6 7 8 0 0\n\
        intr 329768 0 0 0\n";

    #[test]
    fn cpu_lines_by_number() {
        let c1 = parse_cpu_line(STAT, 1).expect("cpu1");
        assert_eq!(
            c1,
            CpuTicks {
                user: 21878,
                nice: 3,
                system: 5813,
                idle: 34928,
                iowait: 671,
                irq: 2,
                softirq: 53,
                steal: 75,
            }
        );
        assert_eq!(c1.busy(), 21878 + 3 + 5813 + 2 + 53);
        // cpu1 must not match cpu10, nor cpu the aggregate.
        assert_eq!(parse_cpu_line(STAT, 10).expect("cpu10").steal, 8);
        assert_eq!(parse_cpu_line(STAT, 0).expect("cpu0").user, 19986);
        assert_eq!(parse_cpu_line(STAT, 2), None);
        assert_eq!(
            parse_cpu_line("cpu0 1 2 3 4 5 6 7\n", 0),
            None,
            "no steal field"
        );
        assert_eq!(parse_cpu_line("cpu0 1 2 x 4 5 6 7 8\n", 0), None);
        assert_eq!(NS_PER_TICK, 10_000_000);
    }

    #[test]
    fn the_aggregate_line_and_the_online_count() {
        let stat = "cpu  10 1 5 900 2 0 1 3 0 0\ncpu0 4 1 2 450 1 0 1 2 0 0\n\
                    cpu1 6 0 3 450 1 0 0 1 0 0\nintr 5\nctxt 9\ncpus_allowed 1\n";
        let (all, online) = parse_all_cpus(stat).expect("aggregate line");
        assert_eq!(online, 2);
        assert_eq!(all.busy(), 17, "user + nice + system + irq + softirq");
        assert_eq!(all.steal, 3);
        assert_eq!(parse_all_cpus("cpu0 1 2 3 4 5 6 7 8\n"), None);
    }

    #[test]
    fn status_and_schedstat() {
        let status = "Name:\tsysmeter\nvoluntary_ctxt_switches:\t12\n\
            nonvoluntary_ctxt_switches:\t34\n";
        assert_eq!(parse_nonvoluntary_switches(status), Some(34));
        assert_eq!(parse_nonvoluntary_switches("Name:\tx\n"), None);
        assert_eq!(
            parse_schedstat("296224 1500 7\n"),
            Some(SchedStat {
                run_ns: 296224,
                wait_ns: 1500,
                timeslices: 7,
            })
        );
        assert_eq!(parse_schedstat("296224 1500\n"), None);
        assert_eq!(parse_schedstat(""), None);
    }
}
