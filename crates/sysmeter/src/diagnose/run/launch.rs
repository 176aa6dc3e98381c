//! Launching the command: a gated child (sysmeter_sys::process::child) with sysmeter's
//! stdin, stdout and stderr, on which the path-lookup trace ([`super::lookups`]) is opened
//! before it calls execve; sample every interval until it exits, then read what only a
//! not-yet-reaped child still shows, and reap it with `wait4` for its resource usage.
//!
//! The exit is noticed through a pidfd (`poll` wakes at once when it exits, or at the next
//! sampling tick, or on a signal); then `waitid(WEXITED|WNOWAIT)` confirms it without reaping,
//! so `/proc/PID/io` and `/proc/PID/task/*/schedstat` of the zombie can still be read (they
//! can: the zombie keeps its accounting until `wait4`). `wait4`'s rusage includes every
//! descendant the command waited for; `/proc/PID/io` of the zombie includes them as well (the
//! kernel adds a reaped child's I/O to its parent). A SIGINT/SIGTERM sent to sysmeter alone is
//! forwarded to the child; a terminal Ctrl-C already reached it (same process group). The
//! child is killed and reaped (by its `Child`) if anything fails before it was reaped.

use std::ffi::{OsStr, OsString};
use std::time::{Duration, Instant};

use sysmeter_sys::process::child::Child;
use sysmeter_sys::process::exit::{ChildUsage, Exit};
use sysmeter_sys::process::forward;
use sysmeter_sys::process::wait::{self, PidFd, PidWait};

use super::RunError;
use super::lookups::LookupCount;
use super::measure::{Measurement, Sampler, allowed_cpus};
use super::sample::ProcessSample;
use super::{LookupMode, LookupPlan};
use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::lookups::LookupTracer;
use crate::diagnose::observe::target::{Unresolved, resolve_program};

/// How long to sleep between exit checks when pidfds are not available (Linux < 5.3).
const FALLBACK_POLL: Duration = Duration::from_millis(2);

/// A launched command's measurement and how it ended.
#[derive(Debug)]
pub struct Launched {
    /// The measurement.
    pub measurement: Measurement,
    /// How the command ended.
    pub exit: Exit,
}

/// What woke the waiting loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Event {
    /// Time for the next sample.
    Tick,
    /// The process exited.
    Exited,
    /// SIGINT/SIGTERM arrived.
    Signal,
}

/// Sleeps until `deadline`, the exit of `pid` (seen by `pidfd`, or by `exited` when there is
/// no pidfd), or a signal.
pub(super) fn wait_until(
    pidfd: Option<&PidFd>,
    deadline: Instant,
    exited: &dyn Fn() -> bool,
) -> std::io::Result<Event> {
    loop {
        let now = Instant::now();
        let left = deadline.saturating_duration_since(now);
        match pidfd {
            Some(fd) => {
                return Ok(match fd.wait(left)? {
                    PidWait::Exited => Event::Exited,
                    PidWait::Timeout => Event::Tick,
                    PidWait::Interrupted => Event::Signal,
                });
            }
            None => {
                if exited() {
                    return Ok(Event::Exited);
                }
                if forward::received() != 0 {
                    return Ok(Event::Signal);
                }
                if left.is_zero() {
                    return Ok(Event::Tick);
                }
                std::thread::sleep(left.min(FALLBACK_POLL));
            }
        }
    }
}

/// sysmeter's own peak resident set, KiB.
fn own_peak_rss_kib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/status").ok()?;
    super::procfs::parse_pid_status(&text).vm_hwm_kib
}

/// The command's peak RSS. The kernel folds the high-water mark of the memory a process had
/// *before* exec into its `ru_maxrss` — for a spawned child that is sysmeter's own — so a
/// wait4 figure not above sysmeter's peak says nothing about the command: then the largest
/// `VmHWM` sampled while it ran is used instead (or none, for a command too short to sample).
fn max_rss(
    wait4_kib: u64,
    own_kib: Option<u64>,
    sampled_kib: Option<u64>,
    notes: &mut Vec<String>,
) -> Option<u64> {
    match own_kib {
        Some(own) if wait4_kib <= own => {
            let why = format!(
                "wait4's max RSS ({wait4_kib} KiB) is sysmeter's own peak at spawn (the \
                 kernel keeps the pre-exec high-water mark)"
            );
            match sampled_kib {
                Some(_) => notes.push(format!("{why}; max RSS is the largest VmHWM sampled")),
                None => notes.push(format!(
                    "{why}; the command ended before a sample: no max RSS"
                )),
            }
            sampled_kib
        }
        _ => Some(wait4_kib),
    }
}

/// Samples every `interval` until child `pid` has exited (not reaped), forwarding signals
/// sent to sysmeter alone. Returns the real time since `spawned_at`.
fn sample_until_exit(
    pid: i32,
    spawned_at: Instant,
    interval: Duration,
    sampler: &mut Sampler,
) -> Result<Duration, RunError> {
    let pidfd = PidFd::open(pid).ok();
    let exited = || wait::wait_exited(pid, false).unwrap_or(true);
    let mut tick = 1u32;
    loop {
        // A signal that came while the child was being set up, or between two waits, wakes
        // no wait: forward it here, at the latest one tick later.
        let sig = forward::take_pending();
        if sig != 0 {
            let _ = wait::send_signal(pid, sig);
        }
        let deadline = spawned_at + interval * tick;
        let event = wait_until(pidfd.as_ref(), deadline, &exited)
            .map_err(|source| RunError::Wait { pid, source })?;
        match event {
            Event::Exited => {
                if exited() {
                    return Ok(spawned_at.elapsed());
                }
                // Readable pidfd but no exit to collect should not happen; never spin on it.
                std::thread::sleep(FALLBACK_POLL);
            }
            Event::Signal => {} // forwarded at the top of the loop
            Event::Tick => {
                sampler.sample();
                // If sampling fell behind, skip the ticks already past.
                let due = (spawned_at.elapsed().as_nanos() / interval.as_nanos().max(1)) as u32;
                tick = (tick + 1).max(due + 1);
            }
        }
    }
}

/// The lookup trace of a launched command, or why there is none.
type Tracing = Option<Result<Box<dyn LookupTracer>, Reason>>;

/// Starts `argv` as a gated child, with the lookup trace opened on it before its exec;
/// also returns when the gate was opened (the start of the command's real time: forking,
/// resolving the program and opening the trace — tens of ms under load — are sysmeter's).
fn start(argv: &[OsString], plan: LookupPlan) -> Result<(Child, Tracing, Instant), RunError> {
    let program = argv.first().ok_or(RunError::NoCommand)?;
    let path = resolve_program(program).map_err(|e| {
        let errno = match e {
            Unresolved::NotFound => libc::ENOENT,
            Unresolved::NotExecutable(_) => libc::EACCES,
        };
        RunError::spawn(program, std::io::Error::from_raw_os_error(errno))
    })?;
    let args: Vec<&OsStr> = argv.iter().map(OsString::as_os_str).collect();
    let mut child = Child::spawn(&path, &args).map_err(|e| RunError::spawn(program, e))?;
    let tracing = match plan.mode {
        LookupMode::Off => None,
        LookupMode::Calls => Some((plan.start)(child.pid(), false)),
        LookupMode::Paths => Some((plan.start)(child.pid(), true)),
    };
    let released_at = Instant::now();
    child.release().map_err(|e| RunError::spawn(program, e))?;
    Ok((child, tracing, released_at))
}

/// Runs `argv` to completion, sampling every `interval`, tracing its lookups as `plan` says.
pub fn launch(
    argv: &[OsString],
    interval: Duration,
    plan: LookupPlan,
) -> Result<Launched, RunError> {
    forward::install().map_err(RunError::Signal)?;
    let mut sampler = Sampler::new();
    let (mut child, tracing, spawned_at) = start(argv, plan)?;
    let pid = child.pid();
    // Read after the spawn: the high-water mark only grows, so this bounds what the kernel
    // folded into the child's ru_maxrss at its exec.
    let own_hwm_kib = own_peak_rss_kib();
    sampler.watch(pid, Some(ProcessSample::default()));
    let real = sample_until_exit(pid, spawned_at, interval, &mut sampler)?;
    // The zombie still shows its I/O accounting and per-thread schedstats: sample it once
    // more before reaping.
    sampler.sample();
    let (exit, usage) = child
        .wait(true)
        .map_err(|source| RunError::Wait { pid, source })?
        .ok_or_else(|| RunError::Wait {
            pid,
            source: std::io::Error::from(std::io::ErrorKind::WouldBlock),
        })?;
    let mut measurement = measurement(pid, real, &usage, own_hwm_kib, sampler);
    measurement.lookups = tracing.map(|t| match t {
        Ok(t) => LookupCount::Traced(Box::new(t.finish(measurement.system_ns))),
        Err(why) => LookupCount::Unavailable(why.0),
    });
    Ok(Launched { measurement, exit })
}

/// The measurement of a reaped child from its rusage and the samples.
fn measurement(
    pid: i32,
    real: Duration,
    usage: &ChildUsage,
    own_hwm_kib: Option<u64>,
    sampler: Sampler,
) -> Measurement {
    let (points, totals, tracker) = sampler.finish();
    let threads = tracker.thread_totals(true);
    let last = tracker.last.as_ref();
    let mut notes = Vec::new();
    let io = last.and_then(|s| s.io);
    if io.is_none() {
        notes.push(format!(
            "/proc/{pid}/io could not be read (kernel without task I/O accounting?): no byte \
             counts"
        ));
    }
    let max_rss_kib = max_rss(
        usage.max_rss_kib,
        own_hwm_kib,
        tracker.max_hwm_kib(),
        &mut notes,
    );
    let cpus_list = tracker
        .first
        .iter()
        .chain(last)
        .find_map(|s| s.status.cpus_allowed_list.clone());
    Measurement {
        real_ns: real.as_nanos() as u64,
        user_ns: usage.user_ns,
        system_ns: usage.system_ns,
        cpus: allowed_cpus(cpus_list.as_deref()),
        max_rss_kib,
        minor_faults: Some(usage.minor_faults),
        major_faults: Some(usage.major_faults),
        voluntary: Some(usage.voluntary_switches),
        involuntary: Some(usage.involuntary_switches),
        runqueue_ns: threads.runqueue_ns,
        io,
        ..Measurement::from_samples((points, totals, &tracker), notes)
    }
}
