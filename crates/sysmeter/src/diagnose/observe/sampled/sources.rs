//! The events of a sampled session as one source of the session loop (`observe::pump`):
//! the CPU-clock rings drained into `RawData` (their handler), the extra events (off-CPU's)
//! drained beside them, and the progress line; for an attached process also its state at
//! every drain (its CPU time so far, its end, zombies included) and the threads it started
//! since, opened at once.

use std::collections::HashSet;
use std::io;
use std::time::{Duration, Instant};

use super::SampledError;
use super::cpu_clock::EventSet;
use super::session::Extra;
use crate::diagnose::observe::proc;
use crate::diagnose::observe::pump::Pump;
use crate::diagnose::observe::records::RawData;

/// How often the progress callback runs.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// What a sampled session drains.
pub struct Sources<'a> {
    events: &'a mut EventSet,
    extra: &'a mut dyn Extra,
    progress: &'a mut dyn FnMut(u64, Duration),
    start: Instant,
    last_progress: Instant,
    /// The attached process, watched at every drain.
    pub attached: Option<Attached>,
    /// Called after every drain with the records so far (a live view's reader).
    pub each_drain: Option<EachDrain<'a>>,
}

/// A reader of the records after every drain (`last`: the final one): the live view takes
/// the new samples out as it aggregates them.
pub type EachDrain<'a> = &'a mut dyn FnMut(&mut RawData, bool);

/// An attached process as the session watches it.
pub struct Attached {
    pid: i32,
    on_cpu: bool,
    known: HashSet<i32>,
    /// Its CPU time at the last drain, ns.
    pub target_last: Option<u64>,
    /// Opening the events of a new thread failed: the session ends with this error.
    pub failed: Option<SampledError>,
}

impl Attached {
    /// Process `pid` with the threads `known` already observed, `target_cpu` ns of CPU time
    /// used so far.
    pub fn new(pid: i32, on_cpu: bool, known: HashSet<i32>, target_cpu: Option<u64>) -> Attached {
        Attached {
            pid,
            on_cpu,
            known,
            target_last: target_cpu,
            failed: None,
        }
    }
}

impl<'a> Sources<'a> {
    /// The events of a session that began at `start`.
    pub fn new(
        events: &'a mut EventSet,
        extra: &'a mut dyn Extra,
        progress: &'a mut dyn FnMut(u64, Duration),
        start: Instant,
    ) -> Sources<'a> {
        Sources {
            events,
            extra,
            progress,
            start,
            last_progress: start,
            attached: None,
            each_drain: None,
        }
    }
}

impl Pump<RawData> for Sources<'_> {
    fn pump(&mut self, raw: &mut RawData, last: bool) {
        self.events.drain(raw);
        self.extra.drain(last);
        if let Some(read) = self.each_drain.as_mut() {
            read(raw, last);
        }
        if !last {
            tick(
                (raw, &mut *self.extra),
                self.start,
                &mut self.last_progress,
                self.progress,
            );
        }
    }

    /// The attached process has ended; else its new threads are observed from now on.
    fn ended(&mut self) -> io::Result<bool> {
        let Some(a) = self.attached.as_mut() else {
            return Ok(false);
        };
        let Some((t, ended)) = stat_cpu_ns(a.pid) else {
            return Ok(true);
        };
        a.target_last = Some(t);
        if ended {
            return Ok(true);
        }
        if let Err(e) = attach_new_threads(a.pid, a.on_cpu, self.events, self.extra, &mut a.known) {
            a.failed = Some(e);
            return Err(io::Error::other(
                "the events of a new thread could not be opened",
            ));
        }
        Ok(false)
    }
}

/// Calls `progress` with the CPU samples so far, or without any the extra events' count.
fn tick(
    (raw, extra): (&RawData, &mut dyn Extra),
    start: Instant,
    last: &mut Instant,
    progress: &mut dyn FnMut(u64, Duration),
) {
    if last.elapsed() >= PROGRESS_EVERY {
        *last = Instant::now();
        let samples = raw.samples.len() as u64;
        let count = match samples {
            0 => extra.live().unwrap_or(0),
            n => n,
        };
        progress(count, start.elapsed());
    }
}

/// Thread ids of `pid` now.
fn threads(pid: i32) -> Vec<i32> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// User + system CPU time of all threads of `pid` so far, from `/proc/PID/stat`, ns, and
/// whether the process has ended: one read gives both. A zombie still has a /proc entry (and
/// its final CPU time) until its parent reaps it, which a parent that never waits never
/// does: it has ended all the same.
pub(super) fn stat_cpu_ns(pid: i32) -> Option<(u64, bool)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain spaces) in parentheses.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let (utime, stime): (u64, u64) = (fields.get(11)?.parse().ok()?, fields.get(12)?.parse().ok()?);
    let ended = proc::ended_state(rest);
    // /proc reports clock ticks of USER_HZ, which is 100 on every Linux architecture.
    Some(((utime + stime) * 10_000_000, ended))
}

/// Opens an event for each thread of `pid` not seen before. Threads that exit in between
/// are skipped; threads that live shorter than one rescan are missed (said in the report).
pub(super) fn attach_new_threads(
    pid: i32,
    on_cpu: bool,
    events: &mut EventSet,
    extra: &mut dyn Extra,
    known: &mut HashSet<i32>,
) -> Result<(), SampledError> {
    for tid in threads(pid) {
        if known.insert(tid) {
            if on_cpu {
                events.add_thread(tid)?;
            }
            extra.add_thread(tid)?;
        }
    }
    Ok(())
}
