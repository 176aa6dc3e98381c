//! The perf side of `calls`: every probe's tracepoint opened per CPU per target thread with
//! `inherit` (threads always, child processes with `-f`), all events of a CPU writing into one
//! ring (`PERF_EVENT_IOC_SET_OUTPUT`; an inherited event with cpu = -1 cannot be mmapped).
//! Samples carry `IDENTIFIER | TID | TIME` (24 bytes): the identifier says which probe fired
//! (inherited events report their parent's id), so entries and returns of every function
//! share the rings. Return probes are opened before entry probes, so no entry is seen whose
//! return could be missed. Records from all rings are merged by time before pairing (a
//! thread may enter on one CPU and return on another); only records older than the previous
//! drain are paired, as in `trace`'s tracepoint backend.

use std::collections::HashMap;
use std::io;

use perf_event::{Counter, SampleFlag};
use sysmeter_sys::clock::{ClockId, clock_gettime_ns};

use super::collector::{Collector, Event};
use crate::diagnose::observe::records::{RECORD_LOST, RECORD_SAMPLE, lost_in, u32_at, u64_at};
use crate::diagnose::observe::rings::{
    Drain, PerCpuRings, Placement, TimeMerge, paired_tracepoint,
};

/// Bytes per ring (a power of two).
const RING: usize = 4 << 20;

/// Where and how events are opened.
pub struct OpenSpec<'a> {
    /// CPUs to open one event per target on.
    pub cpus: &'a [usize],
    /// Inherit into child processes too (else new threads only).
    pub follow_forks: bool,
    /// Enable at the target's next execve.
    pub enable_on_exec: bool,
}

/// Open events and their rings.
pub struct Rings {
    events: PerCpuRings,
    /// Perf event id → (function index, is a return).
    by_id: HashMap<u64, (usize, bool)>,
    /// `(tracepoint id, function, is return)`, returns first.
    probes: Vec<(u64, usize, bool)>,
    merged: TimeMerge<Event>,
    /// Records the kernel dropped because a ring was full.
    pub lost: u64,
}

fn open_one(tp: u64, tid: i32, cpu: usize, spec: &OpenSpec) -> io::Result<Counter> {
    let at = Placement {
        tid,
        cpu,
        follow_forks: spec.follow_forks,
        enable_on_exec: spec.enable_on_exec,
    };
    paired_tracepoint(tp, at, SampleFlag::IDENTIFIER)
}

impl Rings {
    /// No events yet; `probes` lists `(entry tracepoint id, return tracepoint id)` per
    /// function, in function order.
    pub fn new(probes: &[(u64, u64)]) -> Rings {
        let mut list: Vec<(u64, usize, bool)> = probes
            .iter()
            .enumerate()
            .map(|(f, &(_, r))| (r, f, true))
            .collect();
        list.extend(probes.iter().enumerate().map(|(f, &(e, _))| (e, f, false)));
        Rings {
            events: PerCpuRings::default(),
            by_id: HashMap::new(),
            probes: list,
            merged: TimeMerge::new(),
            lost: 0,
        }
    }

    /// Opens every probe's event on thread `tid` on every CPU of `spec`.
    pub fn add(&mut self, tid: i32, spec: &OpenSpec) -> io::Result<()> {
        for &cpu in spec.cpus {
            for &(tp, func, ret) in &self.probes {
                let counter = open_one(tp, tid, cpu, spec)?;
                self.by_id.insert(counter.id(), (func, ret));
                self.events.attach(cpu, counter, RING)?;
            }
        }
        Ok(())
    }

    /// Enables every event now.
    pub fn enable(&mut self) -> io::Result<()> {
        self.events.enable()
    }
}

/// One sample body: `identifier: u64; pid, tid: u32; time: u64`.
fn parse(b: &[u8], by_id: &HashMap<u64, (usize, bool)>) -> Option<Event> {
    let &(func, ret) = by_id.get(&u64_at(b, 0)?)?;
    let tid = u32_at(b, 12)? as i32;
    let time = u64_at(b, 16)? as i64;
    Some(Event {
        time,
        tid,
        func,
        ret,
    })
}

impl Drain for Rings {
    type Collector = Collector;
    /// Drains every ring and feeds the records older than the previous drain (all of them
    /// with `all`) to the collector in time order.
    fn pump(&mut self, c: &mut Collector, all: bool) {
        let started = clock_gettime_ns(ClockId::Monotonic);
        for s in self.events.rings_mut() {
            while let Some(rec) = s.next_record() {
                let body = rec.to_contiguous();
                match rec.ty() {
                    RECORD_SAMPLE => self.merged.pending().extend(parse(&body, &self.by_id)),
                    RECORD_LOST => self.lost += lost_in(&body),
                    _ => {}
                }
            }
        }
        for e in self.merged.release(all, started, |e| e.time) {
            c.event(e);
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
    fn samples_name_their_probe_by_identifier() {
        let by_id = HashMap::from([(77u64, (3usize, true))]);
        let mut b = Vec::new();
        b.extend(77u64.to_ne_bytes());
        b.extend(5u32.to_ne_bytes());
        b.extend(6u32.to_ne_bytes());
        b.extend(999u64.to_ne_bytes());
        let e = parse(&b, &by_id).unwrap();
        assert_eq!((e.func, e.ret, e.tid, e.time), (3, true, 6, 999));
        b[0] = 1;
        assert!(parse(&b, &by_id).is_none(), "an unknown id is not ours");
        assert!(parse(&b[..20], &by_id).is_none());
    }

    #[test]
    fn returns_are_opened_before_entries() {
        let r = Rings::new(&[(10, 11), (20, 21)]);
        let order: Vec<u64> = r.probes.iter().map(|p| p.0).collect();
        assert_eq!(order, [11, 21, 10, 20]);
    }
}
