//! The sampling loop's state: the [`Sampler`] takes a system and a process sample every
//! interval and turns consecutive ones into timeline points; the [`Tracker`] keeps what the
//! process samples add up to (per-thread context switches and run-queue delay, also of
//! threads that have exited since they were last seen; how often its threads were in disk
//! wait; the most sockets held). [`Measurement`] is what a launch or an attach produced.

use std::collections::BTreeMap;
use std::time::Instant;

use super::procfs::PidIo;
use super::sample::{self, Devices, ProcessSample, SystemSample, ThreadSample};
use super::timeline::{self, Point, Totals};

/// What the process samples add up to.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    /// The first sample of the process.
    pub first: Option<ProcessSample>,
    /// The latest sample of the process.
    pub last: Option<ProcessSample>,
    first_threads: BTreeMap<u32, ThreadSample>,
    last_threads: BTreeMap<u32, ThreadSample>,
    /// Thread samples seen running, in disk wait (D), otherwise (sleeping, stopped), and of
    /// those sleeping in a futex wait.
    states: [u64; 4],
    max_sockets: Option<usize>,
    max_inet: Option<usize>,
    max_hwm_kib: Option<u64>,
}

/// Per-thread sums of a [`Tracker`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ThreadTotals {
    /// Voluntary context switches.
    pub voluntary: u64,
    /// Involuntary context switches.
    pub involuntary: u64,
    /// Run-queue delay, ns (`None` without schedstats).
    pub runqueue_ns: Option<u64>,
}

impl Tracker {
    /// Adds one sample.
    pub fn add(&mut self, s: ProcessSample) {
        for (&tid, t) in &s.threads {
            self.first_threads.entry(tid).or_insert(*t);
            self.last_threads.insert(tid, *t);
            match t.state {
                'R' => self.states[0] += 1,
                'D' => self.states[1] += 1,
                'Z' | 'X' => {}
                _ => self.states[2] += 1,
            }
            self.states[3] += u64::from(t.futex);
        }
        if let Some(k) = s.status.vm_hwm_kib {
            self.max_hwm_kib = Some(self.max_hwm_kib.map_or(k, |m| m.max(k)));
        }
        if let Some(n) = s.sockets {
            self.max_sockets = Some(self.max_sockets.map_or(n, |m| m.max(n)));
        }
        if let Some(n) = s.inet_sockets {
            self.max_inet = Some(self.max_inet.map_or(n, |m| m.max(n)));
        }
        if self.first.is_none() {
            self.first = Some(s.clone());
        }
        self.last = Some(s);
    }

    /// Share of thread samples in disk wait; `None` before any live thread was seen.
    pub fn disk_wait_share(&self) -> Option<f64> {
        let n: u64 = self.states[..3].iter().sum();
        (n > 0).then(|| self.states[1] as f64 / n as f64)
    }

    /// Share of the waiting thread samples (not running) sleeping in a futex wait; `None`
    /// before any waiting thread was seen.
    pub fn futex_wait_share(&self) -> Option<f64> {
        let waiting = self.states[1] + self.states[2];
        (waiting > 0).then(|| self.states[3] as f64 / waiting as f64)
    }

    /// Largest peak resident set (`VmHWM`) seen in a sample, KiB.
    pub fn max_hwm_kib(&self) -> Option<u64> {
        self.max_hwm_kib
    }

    /// Most sockets held at once.
    pub fn max_sockets(&self) -> Option<usize> {
        self.max_sockets
    }

    /// Most TCP/UDP sockets held at once.
    pub fn max_inet_sockets(&self) -> Option<usize> {
        self.max_inet
    }

    /// Sums over every thread ever seen: from zero (`from_start`, a launched command) or
    /// from each thread's first sample (an attached process).
    pub fn thread_totals(&self, from_start: bool) -> ThreadTotals {
        let mut t = ThreadTotals::default();
        let mut rq = Some(0u64);
        for (tid, last) in &self.last_threads {
            let first = match (from_start, self.first_threads.get(tid)) {
                (false, Some(f)) => *f,
                _ => ThreadSample {
                    runqueue_ns: Some(0),
                    ..ThreadSample::default()
                },
            };
            t.voluntary += last.voluntary.saturating_sub(first.voluntary);
            t.involuntary += last.involuntary.saturating_sub(first.involuntary);
            rq = match (rq, last.runqueue_ns, first.runqueue_ns) {
                (Some(sum), Some(b), Some(a)) => Some(sum + b.saturating_sub(a)),
                _ => None,
            };
        }
        t.runqueue_ns = rq.filter(|_| !self.last_threads.is_empty());
        t
    }
}

/// Samples the machine and one process every interval.
#[derive(Debug)]
pub struct Sampler {
    devices: Devices,
    start: Instant,
    pid: Option<i32>,
    ticks_per_s: u64,
    first_sys: SystemSample,
    prev_sys: SystemSample,
    prev_proc: Option<ProcessSample>,
    points: Vec<Point>,
    /// What the process samples add up to.
    pub tracker: Tracker,
}

impl Default for Sampler {
    fn default() -> Sampler {
        Sampler::new()
    }
}

impl Sampler {
    /// Chooses the devices and takes the first system sample; the run starts now.
    pub fn new() -> Sampler {
        let devices = Devices::discover();
        let start = Instant::now();
        let first_sys = sample::read_system(&devices, start.elapsed());
        Sampler {
            devices,
            start,
            pid: None,
            ticks_per_s: sysmeter_sys::process::clock_ticks_per_sec(),
            prev_sys: first_sys.clone(),
            first_sys,
            prev_proc: None,
            points: Vec::new(),
            tracker: Tracker::default(),
        }
    }

    /// Starts watching `pid`. `baseline` is its counters at the start (a fresh launch: all
    /// zero), or `None` to take a first sample of it now.
    pub fn watch(&mut self, pid: i32, baseline: Option<ProcessSample>) {
        self.pid = Some(pid);
        let first = baseline.or_else(|| sample::read_process(pid, self.start.elapsed()));
        if let Some(p) = &first {
            self.tracker.add(p.clone());
        }
        self.prev_proc = first;
    }

    /// Takes one sample of both and adds a timeline point. Returns whether the process
    /// could still be read.
    pub fn sample(&mut self) -> bool {
        let sys = sample::read_system(&self.devices, self.start.elapsed());
        let proc = self
            .pid
            .and_then(|pid| sample::read_process(pid, self.start.elapsed()));
        let pair = self.prev_proc.as_ref().zip(proc.as_ref());
        self.points.push(timeline::point(
            &self.prev_sys,
            &sys,
            pair,
            self.ticks_per_s,
        ));
        self.prev_sys = sys;
        let alive = proc.is_some();
        if let Some(p) = proc {
            self.tracker.add(p.clone());
            self.prev_proc = Some(p);
        }
        alive
    }

    /// The timeline points, the whole-run totals and the tracker.
    pub fn finish(self) -> (Vec<Point>, Totals, Tracker) {
        let totals = timeline::totals(&self.first_sys, &self.prev_sys);
        (self.points, totals, self.tracker)
    }
}

/// What one launch or attach measured.
#[derive(Debug, Clone, Default)]
pub struct Measurement {
    /// Real (wall-clock) time, ns.
    pub real_ns: u64,
    /// User CPU time, ns.
    pub user_ns: u64,
    /// System CPU time, ns.
    pub system_ns: u64,
    /// CPUs the target may run on.
    pub cpus: usize,
    /// Peak resident set, KiB.
    pub max_rss_kib: Option<u64>,
    /// Minor page faults.
    pub minor_faults: Option<u64>,
    /// Major page faults.
    pub major_faults: Option<u64>,
    /// Voluntary context switches.
    pub voluntary: Option<u64>,
    /// Involuntary context switches.
    pub involuntary: Option<u64>,
    /// Run-queue delay of the sampled threads, ns.
    pub runqueue_ns: Option<u64>,
    /// /proc/PID/io counters over the run.
    pub io: Option<PidIo>,
    /// Share of thread samples in disk wait.
    pub disk_wait_share: Option<f64>,
    /// Share of the waiting thread samples in a futex wait.
    pub futex_wait_share: Option<f64>,
    /// Most sockets held at once.
    pub sockets: usize,
    /// Most TCP/UDP sockets held at once.
    pub inet_sockets: usize,
    /// The timeline.
    pub points: Vec<Point>,
    /// Whole-run system totals.
    pub totals: Totals,
    /// Remarks for the methodology text (what could not be read, early exits).
    pub notes: Vec<String>,
    /// SIGINT/SIGTERM received by sysmeter during the run (0 = none).
    pub signal: i32,
    /// Path-taking system calls counted by tracepoints (launched commands only), or why not.
    pub lookups: Option<super::lookups::LookupCount>,
}

impl Measurement {
    /// The fields a launch and an attach fill the same way, from the sampler's timeline,
    /// totals and tracker; the caller adds the times, counters and limits it has its own
    /// source for (rusage for a reaped child, /proc deltas for an attached process).
    pub fn from_samples(
        (points, totals, tracker): (Vec<Point>, Totals, &Tracker),
        notes: Vec<String>,
    ) -> Measurement {
        Measurement {
            disk_wait_share: tracker.disk_wait_share(),
            futex_wait_share: tracker.futex_wait_share(),
            sockets: tracker.max_sockets().unwrap_or(0),
            inet_sockets: tracker.max_inet_sockets().unwrap_or(0),
            points,
            totals,
            notes,
            signal: sysmeter_sys::process::forward::received(),
            ..Measurement::default()
        }
    }
}

/// CPUs allowed by a `Cpus_allowed_list`, or this process's own affinity.
pub fn allowed_cpus(list: Option<&str>) -> usize {
    list.and_then(crate::host::cpulist::parse_cpu_list)
        .map(|v| v.len())
        .filter(|&n| n > 0)
        .or_else(|| sysmeter_sys::sched::allowed_cpus().ok().map(|v| v.len()))
        .unwrap_or(1)
}
