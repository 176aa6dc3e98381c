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

use super::collector::{Collector, Event};
use crate::diagnose::observe::pump::{Handler, Pump, Settle};
use crate::diagnose::observe::records::{Format, Record, Sample};
use crate::diagnose::observe::rings::{PerCpuRings, Placement, TimeMerge, paired_tracepoint};

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
}

/// What the samples carry: which probe fired, the thread, the time.
const SAMPLED: SampleFlag = SampleFlag::IDENTIFIER
    .union(SampleFlag::TID)
    .union(SampleFlag::TIME);

/// The handler of the rings: entries and returns merged by time across the rings, then
/// paired by the [`Collector`].
pub struct Calls {
    /// Perf event id → (function index, is a return).
    by_id: HashMap<u64, (usize, bool)>,
    merged: TimeMerge<Event>,
    /// The tally.
    pub collector: Collector,
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
    paired_tracepoint(tp, at, SAMPLED)
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
            events: PerCpuRings::new(Format::of(SAMPLED, 0)),
            by_id: HashMap::new(),
            probes: list,
        }
    }

    /// The handler that tallies this session's records into `collector` (once every
    /// thread's events are open: it names the probes by their events' ids).
    pub fn calls(&self, collector: Collector) -> Calls {
        Calls {
            by_id: self.by_id.clone(),
            merged: TimeMerge::new(),
            collector,
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

    /// Disables every event (the targets are not affected).
    pub fn disable(&mut self) {
        self.events.disable();
    }
}

/// Which probe fired, on which thread, when; `None` when the probe is not ours.
fn event(s: &Sample<'_>, by_id: &HashMap<u64, (usize, bool)>) -> Option<Event> {
    let &(func, ret) = by_id.get(&s.id?)?;
    Some(Event {
        time: s.time as i64,
        tid: s.tid as i32,
        func,
        ret,
    })
}

impl Pump<Calls> for Rings {
    fn pump(&mut self, h: &mut Calls, last: bool) {
        self.events.pump(h, last);
    }

    fn stop(&mut self) {
        self.disable();
    }
}

impl Handler for Calls {
    fn record(&mut self, r: Record<'_>) {
        match r {
            Record::Sample(s) => self.merged.pending().extend(event(&s, &self.by_id)),
            Record::Lost(n) => self.lost += n,
            _ => {}
        }
    }

    /// Feeds the records older than the previous drain (all of them at the last) to the
    /// collector in time order.
    fn settle(&mut self, drain: Settle) {
        for e in self.merged.release(drain.last, drain.started, |e| e.time) {
            self.collector.event(e);
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
    fn samples_name_their_probe_by_identifier() {
        let by_id = HashMap::from([(77u64, (3usize, true))]);
        let mut b = Vec::new();
        b.extend(77u64.to_ne_bytes());
        b.extend(5u32.to_ne_bytes());
        b.extend(6u32.to_ne_bytes());
        b.extend(999u64.to_ne_bytes());
        let parse = |b: &[u8]| event(&Sample::parse(b, Format::of(SAMPLED, 0))?, &by_id);
        let e = parse(&b).unwrap();
        assert_eq!((e.func, e.ret, e.tid, e.time), (3, true, 6, 999));
        b[0] = 1;
        assert!(parse(&b).is_none(), "an unknown id is not ours");
        assert!(parse(&b[..20]).is_none());
    }

    #[test]
    fn returns_are_opened_before_entries() {
        let r = Rings::new(&[(10, 11), (20, 21)]);
        let order: Vec<u64> = r.probes.iter().map(|p| p.0).collect();
        assert_eq!(order, [11, 21, 10, 20]);
    }
}
