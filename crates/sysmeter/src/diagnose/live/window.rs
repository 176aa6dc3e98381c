//! The live view's memory: one entry per whole second for the last [`KEEP_SECONDS`] (the
//! stacks sampled in it, each thread's CPU and run-queue time, the system calls, sysmeter's
//! own CPU) and the stacks since the start merged into one table. Frames are interned once
//! for the whole session, so a second holds only frame ids. Bounded: what the window
//! keeps, never every sample.
//!
//! Depends on `observe::sampled` (frames and stacks).

use std::collections::{HashMap, VecDeque};

use crate::diagnose::observe::sampled::aggregate::Analysis;
use crate::diagnose::observe::sampled::stacks::{Frame, Stacks};

/// Seconds kept one by one (the longest window but "since start").
pub const KEEP_SECONDS: usize = 60;

/// One thread's time in one second.
#[derive(Debug, Clone, PartialEq)]
pub struct ThreadTick {
    /// Thread id.
    pub tid: i32,
    /// On a CPU, ns.
    pub cpu_ns: u64,
    /// Runnable but waiting for a CPU, ns.
    pub runq_ns: u64,
}

/// One whole second of the session.
#[derive(Debug, Clone, Default)]
pub struct Second {
    /// Seconds since the start at its end.
    pub t: u64,
    /// Its length, ns (about one second; the last one of a session may be shorter).
    pub length_ns: u64,
    /// Samples per stack (frame ids of the session's interner, outermost first).
    pub stacks: HashMap<Vec<u32>, u64>,
    /// Each thread's time.
    pub threads: Vec<ThreadTick>,
    /// System calls per name (empty when they are not counted).
    pub syscalls: HashMap<String, u64>,
    /// Whether system calls were counted in this second.
    pub syscalls_counted: bool,
    /// sysmeter's own CPU time, ns.
    pub own_cpu_ns: u64,
}

impl Second {
    /// Samples in this second.
    pub fn samples(&self) -> u64 {
        self.stacks.values().sum()
    }
}

/// What the session has seen, in the form the view reads.
#[derive(Debug, Clone, Default)]
pub struct Window {
    /// Every frame seen, with no counts: the interner of the session.
    frames: Stacks,
    /// The last seconds, oldest first.
    pub seconds: VecDeque<Second>,
    /// Samples per stack since the start.
    since_start: HashMap<Vec<u32>, u64>,
    /// Samples since the start.
    pub samples_total: u64,
    /// Samples lost to full rings since the start.
    pub lost: u64,
    /// Thread names by id (the last seen).
    pub names: HashMap<i32, String>,
}

impl Window {
    /// Adds one second: `analysis` names its samples (its own frame ids are re-interned).
    pub fn push(&mut self, analysis: &Analysis, mut second: Second) {
        let ids: Vec<u32> = analysis
            .stacks
            .frames()
            .iter()
            .map(|f| self.frames.intern(f.clone()))
            .collect();
        for (stack, count) in analysis.stacks.counts() {
            let global: Vec<u32> = stack.iter().map(|&i| ids[i as usize]).collect();
            *self.since_start.entry(global.clone()).or_default() += count;
            *second.stacks.entry(global).or_default() += count;
            self.samples_total += count;
        }
        self.seconds.push_back(second);
        while self.seconds.len() > KEEP_SECONDS {
            self.seconds.pop_front();
        }
    }

    /// The seconds of the last `span` seconds (`None`: every second kept).
    pub fn last(&self, span: Option<u64>) -> impl Iterator<Item = &Second> {
        let keep = span.map_or(self.seconds.len(), |s| s as usize);
        let skip = self.seconds.len().saturating_sub(keep);
        self.seconds.iter().skip(skip)
    }

    /// The seconds after second `t` (a profile of "the next N seconds" from `t` on).
    pub fn after(&self, t: u64) -> impl Iterator<Item = &Second> {
        self.seconds.iter().filter(move |s| s.t > t)
    }

    /// The last whole second seen (0 before the first).
    pub fn now(&self) -> u64 {
        self.seconds.back().map_or(0, |s| s.t)
    }

    /// The stacks of the last `span` seconds, or since the start (`None`), as an analysis
    /// a profile can be drawn from.
    pub fn analysis(&self, span: Option<u64>) -> Analysis {
        match span {
            None => self.analysis_of(self.since_start.iter()),
            Some(_) => self.analysis_of(self.last(span).flat_map(|s| s.stacks.iter())),
        }
    }

    /// The stacks of `seconds`, as an analysis.
    pub fn analysis_of_seconds<'s>(&self, seconds: impl Iterator<Item = &'s Second>) -> Analysis {
        self.analysis_of(seconds.flat_map(|s| s.stacks.iter()))
    }

    fn analysis_of<'s>(&self, stacks: impl Iterator<Item = (&'s Vec<u32>, &'s u64)>) -> Analysis {
        let mut out = self.frames.clone();
        for (stack, &count) in stacks {
            out.add(stack.clone(), count);
        }
        Analysis {
            stacks: out,
            ..Analysis::default()
        }
    }

    /// Whether a kernel frame was ever sampled (kernel call chains are recorded).
    pub fn kernel(&self) -> bool {
        self.frames.frames().iter().any(|f: &Frame| f.kernel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::sampled::stacks::fixture::stacks;

    /// An analysis of `list` (names, outermost first), its frames interned in the order
    /// given so each second's ids differ from the window's.
    fn analysis(list: &[(&[&str], u64)]) -> Analysis {
        Analysis {
            stacks: stacks(list),
            ..Analysis::default()
        }
    }

    fn second(t: u64) -> Second {
        Second {
            t,
            length_ns: 1_000_000_000,
            ..Second::default()
        }
    }

    #[test]
    fn seconds_merge_by_name_and_only_the_last_minute_is_kept_one_by_one() {
        let mut w = Window::default();
        w.push(&analysis(&[(&["main", "hot"], 5)]), second(1));
        w.push(
            &analysis(&[(&["cold"], 1), (&["main", "hot"], 2)]),
            second(2),
        );
        let all = w.analysis(None);
        let hot = all.stacks.flat()[0];
        assert_eq!(all.stacks.frame(hot.frame).name, "hot");
        assert_eq!((hot.self_samples, all.stacks.total()), (7, 8));
        assert_eq!(w.analysis(Some(1)).stacks.total(), 3);
        for t in 3..=(KEEP_SECONDS as u64 + 10) {
            w.push(&analysis(&[(&["main"], 1)]), second(t));
        }
        assert_eq!(w.seconds.len(), KEEP_SECONDS, "bounded");
        assert_eq!(w.samples_total, 8 + KEEP_SECONDS as u64 + 8);
        assert_eq!(w.analysis(None).stacks.total(), w.samples_total);
        assert_eq!(w.after(w.now() - 2).count(), 2);
    }
}
