//! The kernel's counters at one moment ([`Counters`]: the measuring CPU's `/proc/stat` line
//! and the measuring thread's context switches and schedstat) and what ran beside an
//! experiment between two such moments ([`Beside`]).
//!
//! Other tasks' CPU time on the measuring CPU is the CPU's busy time from `/proc/stat` minus
//! the measuring thread's own CPU time (`CLOCK_THREAD_CPUTIME_ID`, exact to the ns; the
//! schedstat run time is not used for this because it is only brought up to date when the
//! thread is switched out or at a tick, so the running thread reads a value up to a tick
//! old). The thread's figure is used rather than the process's CPU time because the
//! process's other threads and children may run on other CPUs, and subtracting their time
//! would hide real intruders.
//! Consequence: helpers an experiment itself runs on the measuring CPU (an echo child pinned
//! there) count as "other tasks"; the caller judges such experiments with that in mind.
//! `/proc/stat` is in 10 ms ticks, so `other_ns` and `steal_ns` are only good to ± 1 tick.
//!
//! [`Counters::read`] must be called on the measuring thread (`/proc/thread-self`); the
//! rest is pure.

use sysmeter_sys::clock::{self, ClockId};

use super::MachineError;
use super::procfs::{self, CpuTicks, NS_PER_TICK, SchedStat};

const STAT: &str = "/proc/stat";
const STATUS: &str = "/proc/thread-self/status";
const SCHEDSTAT: &str = "/proc/thread-self/schedstat";

/// The counters at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counters {
    /// The measuring CPU.
    pub cpu: usize,
    /// Its `/proc/stat` line.
    pub ticks: CpuTicks,
    /// The aggregate `/proc/stat` line (every CPU).
    pub all: CpuTicks,
    /// Online CPUs (`cpuN` lines).
    pub online: usize,
    /// The measuring thread's involuntary context switches so far.
    pub involuntary: u64,
    /// The measuring thread's schedstat (its `wait_ns` is the run-queue wait).
    pub sched: SchedStat,
    /// The measuring thread's CPU time so far, ns (`CLOCK_THREAD_CPUTIME_ID`).
    pub own_cpu_ns: u64,
}

impl Counters {
    /// Read the counters for `cpu` and the calling thread.
    pub fn read(cpu: usize) -> Result<Counters, MachineError> {
        let (stat, status, schedstat) = (read(STAT)?, read(STATUS)?, read(SCHEDSTAT)?);
        let own = clock::clock_gettime_ns(ClockId::ThreadCputime);
        let own_cpu_ns = u64::try_from(own).unwrap_or(0);
        Counters::from_text(cpu, &stat, &status, &schedstat, own_cpu_ns)
    }

    /// Parse the three texts (pure); `own_cpu_ns` is the thread's CPU time.
    pub fn from_text(
        cpu: usize,
        stat: &str,
        status: &str,
        schedstat: &str,
        own_cpu_ns: u64,
    ) -> Result<Counters, MachineError> {
        let ticks = procfs::parse_cpu_line(stat, cpu)
            .ok_or_else(|| format_error(STAT, &format!("line for cpu{cpu}")))?;
        let (all, online) =
            procfs::parse_all_cpus(stat).ok_or_else(|| format_error(STAT, "aggregate cpu line"))?;
        Ok(Counters {
            cpu,
            ticks,
            all,
            online,
            involuntary: procfs::parse_nonvoluntary_switches(status)
                .ok_or_else(|| format_error(STATUS, "nonvoluntary_ctxt_switches line"))?,
            sched: procfs::parse_schedstat(schedstat)
                .ok_or_else(|| format_error(SCHEDSTAT, "three numbers"))?,
            own_cpu_ns,
        })
    }
}

fn read(path: &str) -> Result<String, MachineError> {
    std::fs::read_to_string(path).map_err(|source| MachineError::Read {
        path: path.to_string(),
        source,
    })
}

fn format_error(path: &str, what: &str) -> MachineError {
    MachineError::Format {
        path: path.to_string(),
        what: what.to_string(),
    }
}

/// What ran beside an experiment, over its interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Beside {
    /// The measuring CPU.
    pub cpu: usize,
    /// Length of the interval, ns.
    pub interval_ns: u64,
    /// Steal time on the measuring CPU, ns (10 ms resolution).
    pub steal_ns: u64,
    /// CPU time of everything but the measuring thread on the measuring CPU, ns (10 ms
    /// resolution).
    pub other_ns: u64,
    /// Times the measuring thread was switched out while it wanted to run.
    pub involuntary_switches: u64,
    /// Time the measuring thread waited on a run queue, ns.
    pub runqueue_wait_ns: u64,
    /// Busy time of all the *other* CPUs together, ns (10 ms resolution).
    pub other_cpus_busy_ns: u64,
    /// How many other CPUs were online.
    pub other_cpus: usize,
}

impl Beside {
    /// The differences between `start` and `end` over an interval of `interval_ns`.
    /// Counters that went backwards (not possible for these) give 0.
    pub fn between(start: &Counters, end: &Counters, interval_ns: u64) -> Beside {
        let ticks = |f: fn(&CpuTicks) -> u64| {
            f(&end.ticks)
                .saturating_sub(f(&start.ticks))
                .saturating_mul(NS_PER_TICK)
        };
        let own_ns = end.own_cpu_ns.saturating_sub(start.own_cpu_ns);
        Beside {
            cpu: end.cpu,
            interval_ns,
            steal_ns: ticks(|t| t.steal),
            other_ns: ticks(CpuTicks::busy).saturating_sub(own_ns),
            involuntary_switches: end.involuntary.saturating_sub(start.involuntary),
            runqueue_wait_ns: end.sched.wait_ns.saturating_sub(start.sched.wait_ns),
            other_cpus_busy_ns: (end.all.busy().saturating_sub(start.all.busy()))
                .saturating_sub(end.ticks.busy().saturating_sub(start.ticks.busy()))
                .saturating_mul(NS_PER_TICK),
            other_cpus: end.online.saturating_sub(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(busy_user: u64, steal: u64, invol: u64, run: u64, wait: u64) -> Counters {
        let stat = format!(
            "cpu  {} 9 19 509 9 9 9 {}\ncpu0 9 9 9 9 9 9 9 9\ncpu1 {busy_user} 0 10 500 0 0 0 {steal}\n",
            9 + busy_user,
            9 + steal
        );
        let status = format!("voluntary_ctxt_switches:\t3\nnonvoluntary_ctxt_switches:\t{invol}\n");
        Counters::from_text(1, &stat, &status, &format!("7 {wait} 5\n"), run).expect("parses")
    }

    #[test]
    fn differences_over_an_interval() {
        let a = counters(100, 7, 2, 1_000_000_000, 50);
        // 50 busy ticks (500 ms) of which the thread ran 450 ms; 3 ticks of steal.
        let b = counters(150, 10, 5, 1_450_000_000, 20_050);
        let d = Beside::between(&a, &b, 1_000_000_000);
        assert_eq!(
            d,
            Beside {
                cpu: 1,
                interval_ns: 1_000_000_000,
                steal_ns: 30_000_000,
                other_ns: 50_000_000,
                involuntary_switches: 3,
                runqueue_wait_ns: 20_000,
                other_cpus_busy_ns: 0,
                other_cpus: 1,
            }
        );
        // The thread's exact run time may exceed the sampled ticks: clamp, never wrap.
        let c = counters(101, 7, 2, 1_100_000_000, 50);
        assert_eq!(Beside::between(&a, &c, 100_000_000).other_ns, 0);
        assert_eq!(Beside::between(&b, &a, 1).steal_ns, 0);
    }

    #[test]
    fn the_other_cpus_busy_time_excludes_the_measuring_cpu() {
        let stat = |cpu0: u64, cpu1: u64| {
            format!(
                "cpu  {} 0 0 900 0 0 0 0\ncpu0 {cpu0} 0 0 450 0 0 0 0\ncpu1 {cpu1} 0 0 450 0 0 0 0\n",
                cpu0 + cpu1
            )
        };
        let c = |cpu0, cpu1| {
            let status = "nonvoluntary_ctxt_switches:\t0\n";
            Counters::from_text(1, &stat(cpu0, cpu1), status, "0 0 0", 0).expect("parses")
        };
        // CPU 0 busy 85 ticks, the measuring CPU 1 busy 20: only CPU 0's count.
        let d = Beside::between(&c(10, 10), &c(95, 30), 1_000_000_000);
        assert_eq!((d.other_cpus_busy_ns, d.other_cpus), (850_000_000, 1));
    }

    #[test]
    fn missing_lines_are_format_errors() {
        let e = Counters::from_text(3, "cpu0 1 2 3 4 5 6 7 8\n", "", "1 2 3", 0).unwrap_err();
        assert!(e.to_string().contains("cpu3"), "{e}");
        let e = Counters::from_text(0, "cpu0 1 2 3 4 5 6 7 8\n", "x: 1\n", "1 2 3", 0).unwrap_err();
        assert!(e.to_string().contains("aggregate"), "{e}");
        let stat = "cpu  1 2 3 4 5 6 7 8\ncpu0 1 2 3 4 5 6 7 8\n";
        let e = Counters::from_text(0, stat, "x: 1\n", "1 2 3", 0).unwrap_err();
        assert!(e.to_string().contains("nonvoluntary"), "{e}");
    }

    #[test]
    fn reads_this_thread_on_this_machine() {
        let cpu = sysmeter_sys::sched::current_cpu().unwrap_or(0);
        let c = Counters::read(cpu).expect("/proc is mounted");
        assert_eq!(c.cpu, cpu);
        assert!(c.own_cpu_ns > 0, "{c:?}");
    }
}
