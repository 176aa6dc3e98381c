//! Pairs entry and return records per thread into one inclusive duration per call and
//! tallies them per function: count, total, min, max, the durations (a reservoir beyond
//! [`MAX_SAMPLES`]) and the calling threads.
//!
//! Each thread has a stack, so a probed function called inside another (a `qsort`
//! comparator calling `strlen`) pairs correctly; a return that does not match the top pops
//! the frames above its own (left by `longjmp` or a thread cancelled inside). From every
//! duration the calibrated tracing cost inside the interval is subtracted, plus the whole
//! added cost of each probed call nested inside it. Pure: records come from the caller.

use std::collections::{BTreeSet, HashMap};

pub use crate::diagnose::observe::reservoir::MAX_SAMPLES;
use crate::diagnose::observe::reservoir::keep_sample;

/// One probe hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// CLOCK_MONOTONIC, ns.
    pub time: i64,
    /// The thread.
    pub tid: i32,
    /// Index of the function.
    pub func: usize,
    /// A return (else an entry).
    pub ret: bool,
}

/// What was seen of one function.
#[derive(Debug, Clone, Default)]
pub struct FnStats {
    /// Completed calls.
    pub count: u64,
    /// Sum of durations after overhead subtraction, ns.
    pub total_ns: f64,
    /// Shortest, ns.
    pub min_ns: f64,
    /// Longest, ns.
    pub max_ns: f64,
    /// Durations, ns.
    pub samples: Vec<f64>,
    /// Threads that called it.
    pub threads: BTreeSet<i32>,
}

struct Frame {
    func: usize,
    at: i64,
    /// Probed calls completed inside this one.
    nested: u64,
}

/// Pairs and tallies.
pub struct Collector {
    stats: Vec<FnStats>,
    stacks: HashMap<i32, Vec<Frame>>,
    inside_ns: f64,
    added_ns: f64,
    /// Returns without an entry (the call began before tracing did).
    pub unmatched: u64,
    /// Entries whose return never came (longjmp, thread ended inside).
    pub unfinished: u64,
    rng: fastrand::Rng,
}

impl Collector {
    /// A collector of `functions` functions; `inside_ns` is subtracted from each duration,
    /// `added_ns` more per probed call nested inside it (both clamped at 0).
    pub fn new(functions: usize, inside_ns: f64, added_ns: f64) -> Collector {
        Collector {
            stats: vec![FnStats::default(); functions],
            stacks: HashMap::new(),
            inside_ns: inside_ns.max(0.0),
            added_ns: added_ns.max(0.0),
            unmatched: 0,
            unfinished: 0,
            rng: fastrand::Rng::with_seed(0x5eed),
        }
    }

    /// Feeds one record (in time order).
    pub fn event(&mut self, e: Event) {
        let stack = self.stacks.entry(e.tid).or_default();
        if !e.ret {
            stack.push(Frame {
                func: e.func,
                at: e.time,
                nested: 0,
            });
            return;
        }
        let Some(pos) = stack.iter().rposition(|f| f.func == e.func) else {
            self.unmatched += 1;
            return;
        };
        self.unfinished += (stack.len() - pos - 1) as u64;
        stack.truncate(pos + 1);
        let Some(frame) = stack.pop() else { return };
        if let Some(parent) = stack.last_mut() {
            parent.nested += 1 + frame.nested;
        }
        let raw = (e.time - frame.at) as f64;
        let d = (raw - self.inside_ns - frame.nested as f64 * self.added_ns).max(0.0);
        self.record(e.func, d, e.tid);
    }

    fn record(&mut self, func: usize, d: f64, tid: i32) {
        let Some(s) = self.stats.get_mut(func) else {
            return;
        };
        if s.count == 0 || d < s.min_ns {
            s.min_ns = d;
        }
        s.max_ns = s.max_ns.max(d);
        s.count += 1;
        s.total_ns += d;
        s.threads.insert(tid);
        keep_sample(&mut s.samples, s.count, d, &mut self.rng);
    }

    /// Per function, in function order.
    pub fn stats(&self) -> &[FnStats] {
        &self.stats
    }

    /// Completed calls in all.
    pub fn total_calls(&self) -> u64 {
        self.stats.iter().map(|s| s.count).sum()
    }

    /// Forgets the calls that entered and will never be seen to return (the trace was cut):
    /// those calls were cut off, not unfinished.
    pub fn drop_open(&mut self) {
        self.stacks.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(time: i64, tid: i32, func: usize, ret: bool) -> Event {
        Event {
            time,
            tid,
            func,
            ret,
        }
    }

    #[test]
    fn calls_pair_per_thread_and_nested_cost_is_removed() {
        let mut c = Collector::new(2, 10.0, 100.0);
        c.event(ev(0, 1, 0, false));
        c.event(ev(5, 2, 1, false));
        c.event(ev(100, 1, 1, false));
        c.event(ev(300, 1, 1, true));
        c.event(ev(305, 2, 1, true));
        c.event(ev(1000, 1, 0, true));
        let s = c.stats();
        assert_eq!(s[0].count, 1);
        assert_eq!(s[0].total_ns, 1000.0 - 10.0 - 100.0);
        assert_eq!(s[1].count, 2);
        assert_eq!(s[1].samples, vec![190.0, 290.0]);
        assert_eq!(s[1].threads.len(), 2);
    }

    #[test]
    fn stray_returns_and_lost_frames_are_counted() {
        let mut c = Collector::new(2, 0.0, 0.0);
        c.event(ev(0, 1, 1, true));
        assert_eq!(c.unmatched, 1);
        c.event(ev(1, 1, 0, false));
        c.event(ev(2, 1, 1, false));
        c.event(ev(9, 1, 0, true));
        assert_eq!(
            (c.unfinished, c.stats()[0].count, c.total_calls()),
            (1, 1, 1)
        );
    }
}
