//! The tracepoint backend: `raw_syscalls:sys_enter` and `sys_exit` sampled on every call
//! through perf_event_open, one event per CPU per target thread, with `inherit` so threads
//! (and with `-f` child processes, else `inherit_thread` only) created later are covered.
//! The tracee never stops: the kernel writes a small record per entry and exit into ring
//! buffers that this process drains every few milliseconds.
//!
//! All events of one CPU write into one ring (`PERF_EVENT_IOC_SET_OUTPUT`): fewer rings to
//! drain, and fewer to tear down (each munmap of a perf ring waited ~10 ms here). Entry
//! samples carry the thread id and time (16 bytes); exit samples also the raw record (call
//! number and return value, at offsets read from tracefs), which is how they are told apart. Records from all rings are merged
//! by time (CLOCK_MONOTONIC, `use_clockid`) before pairing, because a thread that migrates
//! between CPUs may enter on one ring and exit on another; only records older than the
//! previous drain are paired, so a record still being written elsewhere cannot be skipped.
//! With `-e`, a tracepoint filter (`id == N || …`) makes the kernel drop the other calls.
//! Lost records (full ring) are counted and reported.

mod records;
mod setup;
mod uprobes;
pub(in crate::diagnose) mod view;

pub(super) use setup::{Ids, probe};
pub(in crate::diagnose) use uprobes::{PathEvent, PathProbes};

use std::collections::HashMap;
use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;

use perf_event::{Counter, SampleFlag};

use super::names::Arch;
use super::summary::{Collector, PathArg};
use crate::diagnose::observe::pump::{Handler, Pump, Settle};
use crate::diagnose::observe::records::{Format, Record};
use crate::diagnose::observe::rings::{PerCpuRings, Placement, TimeMerge, paired_tracepoint};
use records::{Event, Kind, event};

/// Ring buffer memory for all rings together; each ring gets a power-of-two share. Rings
/// are drained every `observe::rings::DRAIN_PERIOD`, so 2 MiB (≈ 35 000 exit records) per ring leaves a
/// wide margin even when the reader is kept off the CPU for a while; larger rings cost
/// start-up and tear-down time (the kernel allocates, zeroes and frees every page: ~10 ms
/// per 8 MiB munmap measured in this VM).
const RING_BUDGET: usize = 16 << 20;
const RING_MIN: usize = 128 << 10;
const RING_MAX: usize = 2 << 20;

/// What to trace.
pub(super) struct OpenSpec<'a> {
    /// Threads to attach to (a launched child: its pid).
    pub targets: &'a [i32],
    /// CPUs to open one event per target on.
    pub cpus: &'a [usize],
    /// Inherit into child processes too (else into new threads only).
    pub follow_forks: bool,
    /// Enable at the target's next execve (launched commands) instead of right away.
    pub enable_on_exec: bool,
    /// Kernel filter expression, if any (on the system-call events).
    pub filter: Option<CString>,
    /// Path events ([`PathProbes`]) to open beside the system-call events.
    pub paths: &'a [PathEvent],
}

/// The open events and their rings.
pub(super) struct Rings {
    /// The events, one ring per CPU (owned by the first exit event opened on that CPU).
    events: PerCpuRings,
    ids: Ids,
    paths: Vec<PathEvent>,
    /// Bytes per ring.
    ring: usize,
}

/// What the samples carry: thread and time; exits and path events add their raw record.
fn format() -> Format {
    Format::of(SampleFlag::TID | SampleFlag::TIME | SampleFlag::RAW, 0)
}

/// The handler of the rings: entries, exits and paths merged by time across the rings, then
/// paired by the [`Collector`].
pub(super) struct Calls {
    ids: Ids,
    paths: Vec<PathEvent>,
    /// The last path each thread passed to a probed function, until its next call.
    last_path: HashMap<i32, Vec<u8>>,
    merged: TimeMerge<Event>,
    /// The tally.
    pub collector: Collector,
    /// Records the kernel dropped because a ring was full.
    pub lost: u64,
}

/// The kernel filter for a set of call numbers; `None` when it would not fit a page.
pub(super) fn filter_for(numbers: &[u32]) -> Option<CString> {
    let expr = numbers
        .iter()
        .map(|n| format!("id == {n}"))
        .collect::<Vec<_>>()
        .join(" || ");
    (expr.len() < 4000)
        .then(|| CString::new(expr).ok())
        .flatten()
}

/// One event on `tid` and `cpu`; `raw` adds the tracepoint record to each sample; `filter`
/// is set on system-call events only (a path event has no `id` field).
fn open_one(
    (id, tid, cpu): (u64, i32, usize),
    raw: bool,
    filter: Option<&CString>,
    spec: &OpenSpec,
) -> io::Result<Counter> {
    let at = Placement {
        tid,
        cpu,
        follow_forks: spec.follow_forks,
        enable_on_exec: spec.enable_on_exec,
    };
    let extra = match raw {
        true => SampleFlag::RAW,
        false => SampleFlag::empty(),
    };
    let counter = paired_tracepoint(id, at, extra)?;
    if let Some(f) = filter {
        sysmeter_sys::tracepoint::set_filter(counter.as_raw_fd(), f)?;
    }
    Ok(counter)
}

/// Bytes per ring when `rings` rings share [`RING_BUDGET`] (a power of two, at least
/// [`RING_MIN`], at most [`RING_MAX`]).
pub(super) fn ring_size(rings: usize) -> usize {
    let share = (RING_BUDGET / rings.max(1)).clamp(RING_MIN, RING_MAX);
    // Round down to a power of two so the budget is not exceeded by rounding up.
    1usize << (usize::BITS - 1 - share.leading_zeros())
}

impl Rings {
    /// No events yet; rings of `ring` bytes will be opened by [`Rings::add`].
    pub fn empty(ids: Ids, ring: usize) -> Rings {
        Rings {
            events: PerCpuRings::new(format()),
            ids,
            paths: Vec::new(),
            ring,
        }
    }

    /// The handler that tallies this session's records into `collector`.
    pub fn calls(&self, collector: Collector) -> Calls {
        Calls::new(self.ids, self.paths.clone(), collector)
    }

    /// Opens the entry and exit events of thread `tid` on every CPU of `spec`, writing into
    /// that CPU's ring (created with the first exit event of the CPU).
    pub fn add(&mut self, tid: i32, spec: &OpenSpec) -> io::Result<()> {
        let filter = spec.filter.as_ref();
        for &cpu in spec.cpus {
            let exit = open_one((self.ids.exit, tid, cpu), true, filter, spec)?;
            let enter = open_one((self.ids.enter, tid, cpu), false, filter, spec)?;
            let ring_fd = self.events.attach(cpu, exit, self.ring)?;
            self.events.redirect(enter, ring_fd)?;
            for p in spec.paths {
                let path = open_one((p.id, tid, cpu), true, None, spec)?;
                self.events.redirect(path, ring_fd)?;
            }
        }
        Ok(())
    }

    /// Opens the events of every target of `spec` (disabled unless `enable_on_exec` fires
    /// later; see [`Rings::enable`]).
    pub fn open(ids: Ids, spec: &OpenSpec) -> io::Result<Rings> {
        let mut rings = Rings::empty(ids, ring_size(spec.cpus.len()));
        rings.paths = spec.paths.to_vec();
        for &tid in spec.targets {
            rings.add(tid, spec)?;
        }
        Ok(rings)
    }

    /// Enables every event now.
    pub fn enable(&mut self) -> io::Result<()> {
        self.events.enable()
    }
}

impl Pump<Calls> for Rings {
    fn pump(&mut self, h: &mut Calls, last: bool) {
        self.events.pump(h, last);
    }

    fn stop(&mut self) {
        self.events.disable();
    }
}

impl Calls {
    /// Tallies into `collector` the calls of system-call events `ids` and path events
    /// `paths`.
    fn new(ids: Ids, paths: Vec<PathEvent>, collector: Collector) -> Calls {
        Calls {
            ids,
            paths,
            last_path: HashMap::new(),
            merged: TimeMerge::new(),
            collector,
            lost: 0,
        }
    }
}

impl Handler for Calls {
    fn record(&mut self, r: Record<'_>) {
        match r {
            Record::Sample(s) => {
                let e = event(&s, (self.ids, &self.paths));
                self.merged.pending().extend(e);
            }
            Record::Lost(n) => self.lost += n,
            _ => {}
        }
    }

    /// Feeds the records older than the previous drain to the collector in time order;
    /// the last drain feeds everything (after the targets ended).
    fn settle(&mut self, drain: Settle) {
        let arch = Arch::native().audit();
        let with_paths = !self.paths.is_empty();
        let c = &mut self.collector;
        for e in self.merged.release(drain.last, drain.started, |e| e.time) {
            match e.kind {
                Kind::Enter if with_paths => {
                    let path = self.last_path.remove(&e.tid).map(PathArg::Read);
                    c.enter_with_path(e.tid, None, e.time, path);
                }
                Kind::Enter => c.enter(e.tid, None, e.time),
                Kind::Exit(nr, ret) => {
                    let is_error = (-4095..=-1).contains(&ret);
                    c.exit(e.tid, Some((arch, nr)), ret, is_error, e.time);
                }
                Kind::Path(p) => {
                    self.last_path.insert(e.tid, p);
                }
            }
        }
    }

    fn cut(&mut self) {
        self.collector.drop_open();
    }

    fn count(&self) -> u64 {
        self.collector.total_calls()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_list_the_numbers() {
        let f = filter_for(&[0, 3]).unwrap();
        assert_eq!(f.to_str().unwrap(), "id == 0 || id == 3");
        let many: Vec<u32> = (0..500).collect();
        assert!(filter_for(&many).is_none());
    }
}
