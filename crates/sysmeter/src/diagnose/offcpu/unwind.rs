//! The whole user stack of every switch-out (and of every waking by a target thread), from
//! its registers and stack copy, through the one unwinder of `observe::unwind`. Done at each
//! drain, so the copies are dropped as soon as they are read; wakers outside the target keep
//! the kernel's frame-pointer chain (their mappings are not followed).

use super::raw::{OffRaw, Switch, UserStack};
use crate::diagnose::observe::maps::MapEvent;
use crate::diagnose::observe::records::PERF_CONTEXT_USER;
use crate::diagnose::observe::unwind::{Live, StackCopy, Stops};

/// The unwinder of a session and how far it got through the records.
pub struct Unwinding {
    live: Live,
    /// Switch-outs and wakings already unwound.
    done: (usize, usize),
}

/// Replaces the user part of `s`'s chain by its unwound stack, and drops the copy.
fn unwind_one(live: &mut Live, s: &mut Switch) {
    if let Some(st) = s.stack.take() {
        s.chain = live.chain(&s.chain, &copy_of(s, &st));
    }
}

/// The stack copy of switch `s` for the unwinder.
fn copy_of<'a>(s: &Switch, st: &'a UserStack) -> StackCopy<'a> {
    StackCopy {
        pid: s.pid,
        time: s.time,
        regs: st.regs,
        stack: &st.bytes,
    }
}

/// The in-kernel backend's stacks: the kernel's frame-pointer walk, and one small user-stack
/// copy per distinct stack (`bpf_maps`). Unwinding the copy puts back the callers that a
/// frameless leaf (glibc's `clock_nanosleep`, `read`, …) hides from the frame-pointer walk;
/// past the copy's end the frame-pointer walk goes on from the last frame both walks hold.
pub fn repair_leaves(raw: &mut OffRaw, copy_bytes: u32) {
    let mut live = Live::new(&[], copy_bytes);
    live.catch_up(&raw.side);
    for s in raw.outs.iter_mut().chain(raw.wakings.iter_mut()) {
        let Some(st) = s.stack.take() else {
            continue;
        };
        let unwound = live.unwind(&copy_of(s, &st));
        s.chain = joined(&s.chain, &unwound.frames);
    }
}

/// `chain` (kernel part, then the frame-pointer user walk) with its user part led by the
/// `unwound` frames and continued by the frame-pointer walk after the last frame both hold;
/// `chain` as it is when the two share no frame and the unwound walk is not longer.
fn joined(chain: &[u64], unwound: &[u64]) -> Vec<u64> {
    let at = chain.iter().position(|&e| e == PERF_CONTEXT_USER);
    let (kernel, user) = match at {
        Some(i) => (&chain[..i], &chain[i + 1..]),
        None => (chain, &[][..]),
    };
    let shared = unwound
        .iter()
        .rev()
        .find_map(|f| user.iter().position(|u| u == f));
    let rest = match shared {
        Some(i) => &user[i + 1..],
        None if unwound.len() > user.len() => &[][..],
        None => return chain.to_vec(),
    };
    let mut out = kernel.to_vec();
    out.push(PERF_CONTEXT_USER);
    out.extend_from_slice(unwound);
    out.extend_from_slice(rest);
    out
}

impl Unwinding {
    /// An unwinder that knows `maps_at_start` and copies `copy_bytes` per switch.
    pub fn new(maps_at_start: &[MapEvent], copy_bytes: u32) -> Unwinding {
        Unwinding {
            live: Live::new(maps_at_start, copy_bytes),
            done: (0, 0),
        }
    }

    /// Unwinds what `raw` gained since the last call.
    pub fn settle(&mut self, raw: &mut OffRaw) {
        self.live.catch_up(&raw.side);
        let (outs, wakings) = self.done;
        for s in raw.outs.iter_mut().skip(outs) {
            unwind_one(&mut self.live, s);
        }
        // A waker's copy is short (`events::WAKING_STACK_BYTES`): its walks are not counted
        // with the switch-outs', whose stops the truncation finding reports.
        let counted = self.live.stops;
        for w in raw.wakings.iter_mut().skip(wakings) {
            if raw.tids.contains(&w.tid) {
                unwind_one(&mut self.live, w);
            } else {
                w.stack = None;
            }
        }
        self.live.stops = Stops {
            unwind_ns: self.live.stops.unwind_ns,
            ..counted
        };
        self.done = (raw.outs.len(), raw.wakings.len());
        raw.side.stops = self.live.stops;
    }
}

#[cfg(test)]
mod joined_tests {
    use super::*;

    #[test]
    fn the_unwound_leaf_is_continued_by_the_frame_pointer_walk() {
        let k = crate::diagnose::observe::records::PERF_CONTEXT_KERNEL;
        let u = PERF_CONTEXT_USER;
        // The frame-pointer walk skipped `nap` (0x20) behind a frameless leaf (0x10).
        let chain = [k, 0xffff_0001, u, 0x10, 0x30, 0x40, 0x50];
        let unwound = [0x10, 0x20, 0x30];
        assert_eq!(
            joined(&chain, &unwound),
            vec![k, 0xffff_0001, u, 0x10, 0x20, 0x30, 0x40, 0x50]
        );
        assert_eq!(joined(&chain, &[]), chain.to_vec());
        assert_eq!(
            joined(&chain, &[0x99]),
            chain.to_vec(),
            "nothing shared, not longer"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::records::PERF_CONTEXT_USER;
    use crate::diagnose::observe::unwind::Regs;

    fn switch(tid: u32, stack: Option<super::super::raw::UserStack>) -> Switch {
        Switch {
            pid: 1,
            tid,
            time: 5,
            chain: vec![PERF_CONTEXT_USER, 0x40_1000],
            arg: 0,
            stack,
        }
    }

    /// Two frame-pointer frames: the leaf at 0x40_1000 and its caller's 0x40_2000.
    fn copy() -> super::super::raw::UserStack {
        let bytes: Vec<u8> = [0u64, 0, 0, 0x40_2000]
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        let regs = Regs {
            ip: 0x40_1000,
            sp: 0x1000,
            bp: 0x1010,
        };
        super::super::raw::UserStack { regs, bytes }
    }

    #[test]
    fn copies_are_unwound_once_and_dropped() {
        let mut raw = OffRaw::default();
        raw.outs.push(switch(7, Some(copy())));
        raw.wakings.push(switch(8, Some(copy())));
        let mut u = Unwinding::new(&[], 32);
        u.settle(&mut raw);
        let whole = vec![PERF_CONTEXT_USER, 0x40_1000, 0x40_2000];
        assert_eq!(raw.outs[0].chain, whole);
        assert!(raw.outs[0].stack.is_none() && raw.wakings[0].stack.is_none());
        // Thread 8 is not the target's: its waking keeps the kernel's chain.
        assert_eq!(raw.wakings[0].chain, vec![PERF_CONTEXT_USER, 0x40_1000]);
        assert_eq!(raw.side.stops.total(), 1);
        // A target thread's waking is unwound, but its walk is not counted.
        raw.tids.insert(9);
        raw.wakings.push(switch(9, Some(copy())));
        u.settle(&mut raw);
        assert_eq!(raw.wakings[1].chain, whole);
        assert_eq!(raw.side.stops.total(), 1, "nothing is unwound twice");
    }
}
