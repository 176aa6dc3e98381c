//! Watching a running process for a while (`run -p PID --duration S`): sample it and the
//! machine every interval until the duration passes, the process exits, or Ctrl-C; the
//! figures are the differences between the first and the last sample of its /proc files.
//!
//! User and system time come from /proc/PID/stat `utime`/`stime` plus `cutime`/`cstime`
//! (children it reaped meanwhile), which cover every thread, live or exited; faults the same
//! way; context switches and run-queue delay are per thread only, so they are summed over
//! /proc/PID/task/* (a thread that starts and ends between two samples is missed); the peak
//! RSS is `VmHWM`, the peak over the process's whole life. The process is never signalled or
//! stopped: this is read-only.

use std::time::{Duration, Instant};

use sysmeter_sys::process::wait::PidFd;
use sysmeter_sys::process::{self, forward};

use super::RunError;
use super::launch::{Event, wait_until};
use super::measure::{Measurement, Sampler, allowed_cpus};
use super::procfs::{PidIo, PidStat};

fn check_target(pid: i32) -> Result<(), RunError> {
    let path = format!("/proc/{pid}/stat");
    match std::fs::read_to_string(&path) {
        Ok(text) if text.contains(')') => Ok(()),
        Ok(_) => Err(RunError::NoProcess { pid }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(RunError::NoProcess { pid }),
        Err(source) => Err(RunError::Unreadable { pid, source }),
    }
}

fn ticks_ns(ticks: u64) -> u64 {
    ticks.saturating_mul(1_000_000_000) / process::clock_ticks_per_sec()
}

fn io_delta(a: Option<PidIo>, b: Option<PidIo>) -> Option<PidIo> {
    let (a, b) = (a?, b?);
    Some(PidIo {
        rchar: b.rchar.saturating_sub(a.rchar),
        wchar: b.wchar.saturating_sub(a.wchar),
        read_bytes: b.read_bytes.saturating_sub(a.read_bytes),
        write_bytes: b.write_bytes.saturating_sub(a.write_bytes),
        cancelled_write_bytes: b
            .cancelled_write_bytes
            .saturating_sub(a.cancelled_write_bytes),
    })
}

/// Samples until `duration` passes, the process exits or a signal arrives. Returns the
/// sampler and whether the process exited meanwhile.
fn sample_loop(
    pid: i32,
    duration: Duration,
    interval: Duration,
) -> Result<(Sampler, bool), RunError> {
    let mut sampler = Sampler::new();
    sampler.watch(pid, None);
    let pidfd = PidFd::open(pid).ok();
    let gone = || !std::path::Path::new(&format!("/proc/{pid}/stat")).exists();
    let start = Instant::now();
    let end = start + duration;
    let mut tick = 1u32;
    let exited = loop {
        let deadline = (start + interval * tick).min(end);
        let event = wait_until(pidfd.as_ref(), deadline, &gone)
            .map_err(|source| RunError::Wait { pid, source })?;
        match event {
            Event::Tick => {
                if !sampler.sample() {
                    break true;
                }
                if Instant::now() >= end {
                    break false;
                }
                let due = (start.elapsed().as_nanos() / interval.as_nanos().max(1)) as u32;
                tick = (tick + 1).max(due + 1);
            }
            // An exited process can no longer be read: what the last sample saw is all.
            Event::Exited => break true,
            Event::Signal => {
                let _ = forward::take_pending();
                break !sampler.sample();
            }
        }
    };
    Ok((sampler, exited))
}

/// Watches process `pid` for `duration`, sampling every `interval`; the measurement and
/// whether the process exited meanwhile.
pub fn attach(
    pid: i32,
    duration: Duration,
    interval: Duration,
) -> Result<(Measurement, bool), RunError> {
    if pid <= 0 {
        return Err(RunError::NoProcess { pid });
    }
    check_target(pid)?;
    forward::install().map_err(RunError::Signal)?;
    let (sampler, exited) = sample_loop(pid, duration, interval)?;
    let (points, totals, tracker) = sampler.finish();
    let (Some(first), Some(last)) = (tracker.first.as_ref(), tracker.last.as_ref()) else {
        return Err(RunError::NoProcess { pid });
    };
    let mut notes = Vec::new();
    if exited {
        let after = u64::try_from(last.t.as_nanos()).unwrap_or(u64::MAX);
        let said = crate::diagnose::observe::session::exited_sentence(after);
        notes.push(format!("{said} The figures end at its last sample."));
    }
    if last.io.is_none() {
        notes.push(format!(
            "/proc/{pid}/io is not readable (another user's process needs root or \
             CAP_SYS_PTRACE): no byte counts"
        ));
    }
    let (a, b): (&PidStat, &PidStat) = (&first.stat, &last.stat);
    let d = |x: u64, y: u64| y.saturating_sub(x);
    let threads = tracker.thread_totals(false);
    let measurement = Measurement {
        real_ns: last.t.saturating_sub(first.t).as_nanos() as u64,
        user_ns: ticks_ns(d(a.utime + a.cutime, b.utime + b.cutime)),
        system_ns: ticks_ns(d(a.stime + a.cstime, b.stime + b.cstime)),
        cpus: allowed_cpus(last.status.cpus_allowed_list.as_deref()),
        max_rss_kib: last.status.vm_hwm_kib,
        minor_faults: Some(d(a.minflt + a.cminflt, b.minflt + b.cminflt)),
        major_faults: Some(d(a.majflt + a.cmajflt, b.majflt + b.cmajflt)),
        voluntary: Some(threads.voluntary),
        involuntary: Some(threads.involuntary),
        runqueue_ns: threads.runqueue_ns,
        io: io_delta(first.io, last.io),
        ..Measurement::from_samples((points, totals, &tracker), notes)
    };
    Ok((measurement, exited))
}
