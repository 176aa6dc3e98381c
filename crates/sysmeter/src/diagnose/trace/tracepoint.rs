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

pub(super) use setup::{Ids, probe};
pub(in crate::diagnose) use uprobes::{PathEvent, PathProbes};

use std::collections::HashMap;
use std::ffi::CString;
use std::io;
use std::os::fd::AsRawFd;

use perf_event::{Counter, SampleFlag, Sampler};
use sysmeter_sys::clock::{ClockId, clock_gettime_ns};

use super::names::Arch;
use super::summary::{Collector, PathArg};
use crate::diagnose::observe::records::{RECORD_LOST, RECORD_SAMPLE, lost_in};
use crate::diagnose::observe::rings::{PerCpuRings, Placement, TimeMerge, paired_tracepoint};
use records::{Event, Kind, parse_sample};

use crate::diagnose::observe::rings::Drain;
pub(super) use crate::diagnose::observe::rings::{DRAIN_PERIOD, follow};
/// Ring buffer memory for all rings together; each ring gets a power-of-two share. Rings
/// are drained every [`DRAIN_PERIOD`], so 2 MiB (≈ 35 000 exit records) per ring leaves a
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
    /// The last path each thread passed to a probed function, until its next call.
    last_path: HashMap<i32, Vec<u8>>,
    /// Bytes per ring.
    ring: usize,
    merged: TimeMerge<Event>,
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
            events: PerCpuRings::default(),
            ids,
            paths: Vec::new(),
            last_path: HashMap::new(),
            ring,
            merged: TimeMerge::new(),
            lost: 0,
        }
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

/// Moves every record of one ring into `out`; returns the number of lost records reported.
fn drain(s: &mut Sampler, ids: (Ids, &[PathEvent]), out: &mut Vec<Event>) -> u64 {
    let mut lost = 0;
    while let Some(rec) = s.next_record() {
        let body = rec.to_contiguous();
        match rec.ty() {
            RECORD_SAMPLE => out.extend(parse_sample(&body, ids)),
            RECORD_LOST => lost += lost_in(&body),
            _ => {}
        }
    }
    lost
}

impl Drain for Rings {
    type Collector = Collector;
    /// Drains every ring and feeds the records older than the previous drain to the
    /// collector in time order; `all` feeds everything (after the targets ended).
    fn pump(&mut self, c: &mut Collector, all: bool) {
        let started = clock_gettime_ns(ClockId::Monotonic);
        let ids = (self.ids, &self.paths[..]);
        for s in self.events.rings_mut() {
            self.lost += drain(s, ids, self.merged.pending());
        }
        let arch = Arch::native().audit();
        let with_paths = !self.paths.is_empty();
        for e in self.merged.release(all, started, |e| e.time) {
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

    fn events(&mut self) -> &mut PerCpuRings {
        &mut self.events
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
