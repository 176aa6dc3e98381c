//! Records of an off-CPU profile kept as plain data: switch-outs (thread, time, call chain,
//! state, the top of the user stack), switch-ins, wakings of target threads, thread starts
//! and exits, plus the side-band records (mappings, execs, forks, names) in the floor's
//! [`RawData`]. No system calls here.

use std::collections::HashSet;

use crate::diagnose::observe::pump::Handler;
use crate::diagnose::observe::records::{RawData, Record, Sample};
use crate::diagnose::observe::unwind::Regs;

/// The user registers and stack copy `unwind` turns into the user stack.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserStack {
    /// The user registers at the kernel entry.
    pub regs: Regs,
    /// The stack from `regs.sp` up (at most [`super::events::STACK_BYTES`]).
    pub bytes: Vec<u8>,
}

/// One sample of a switch-out (`sched_switch`) or a waking (`sched_waking`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    /// Process of the current task (the one blocking, or the waker).
    pub pid: u32,
    /// Thread of the current task.
    pub tid: u32,
    /// Kernel timestamp, ns.
    pub time: u64,
    /// Call chain, leaf first, context markers kept.
    pub chain: Vec<u64>,
    /// `prev_state` (switch) or the thread woken (waking).
    pub arg: i64,
    /// User registers and stack, when the kernel copied them and until they are unwound
    /// (at the drain that read them).
    pub stack: Option<UserStack>,
}

/// Everything read from the rings.
#[derive(Debug, Default, Clone)]
pub struct OffRaw {
    /// Side-band records (and nothing in `samples`).
    pub side: RawData,
    /// Switch-outs of target threads.
    pub outs: Vec<Switch>,
    /// Switch-ins of target threads: (tid, time).
    pub ins: Vec<(u32, u64)>,
    /// Wakings of target threads (`arg` is the thread woken).
    pub wakings: Vec<Switch>,
    /// Wakings of threads not seen yet, checked once more at the next drain.
    maybe: Vec<Switch>,
    /// Wakings already checked once.
    retry: Vec<Switch>,
    /// Thread starts (FORK records, threads included): (tid, time).
    pub starts: Vec<(u32, u64)>,
    /// Thread exits: (tid, time).
    pub exits: Vec<(u32, u64)>,
    /// Threads of the target seen so far.
    pub tids: HashSet<u32>,
    /// Names of waker processes outside the target, read from /proc when first seen.
    pub other_comms: std::collections::HashMap<u32, String>,
    /// Waking records read (all processes), for the overhead report.
    pub wakings_read: u64,
    /// In-kernel backend: intervals whose switch-in the kernel did not report, closed at
    /// their waking (their wait for a CPU after it is not counted).
    pub closed_at_waking: u64,
}

fn field_i64(raw: &[u8], offset: usize, width: usize) -> i64 {
    match (width, raw.get(offset..offset + width)) {
        (8, Some(b)) => b.try_into().map_or(0, i64::from_ne_bytes),
        (4, Some(b)) => b.try_into().map_or(0, |b| i32::from_ne_bytes(b) as i64),
        _ => 0,
    }
}

/// A switch-out or waking sample; `arg` is its raw record's field at `offset` (`width`
/// bytes).
fn switch(s: &Sample<'_>, offset: usize, width: usize) -> Switch {
    let stack = s
        .regs
        .filter(|_| !s.stack.is_empty())
        .map(|regs| UserStack {
            regs,
            bytes: s.stack.to_vec(),
        });
    Switch {
        pid: s.pid,
        tid: s.tid,
        time: s.time,
        chain: s.chain.to_vec(),
        arg: s.raw.map_or(0, |r| field_i64(r, offset, width)),
        stack,
    }
}

/// The handler of the target's switch rings (`prev_state` at its offset in the raw record).
pub struct Switches<'r> {
    /// What is read.
    pub raw: &'r mut OffRaw,
    /// Offset of `prev_state` in a `sched_switch` record.
    pub prev_state: usize,
}

impl Handler for Switches<'_> {
    fn record(&mut self, r: Record<'_>) {
        let raw = &mut *self.raw;
        match r {
            Record::Sample(s) => {
                raw.tids.insert(s.tid);
                raw.outs.push(switch(&s, self.prev_state, 8));
            }
            Record::Switch {
                out: false,
                tid,
                time,
            } => raw.ins.push((tid, time)),
            Record::Fork { tid, time, .. } => {
                raw.tids.insert(tid);
                raw.starts.push((tid, time));
                raw.side.record(r);
            }
            Record::Exit { tid, time, .. } => raw.exits.push((tid, time)),
            side => raw.side.record(side),
        }
    }
}

/// The handler of the system-wide waking rings (`pid` of the woken thread at its offset).
pub struct Wakings<'r> {
    /// What is read.
    pub raw: &'r mut OffRaw,
    /// Offset of `pid` in a `sched_waking` record.
    pub woken_pid: usize,
}

impl Handler for Wakings<'_> {
    /// A waking is kept when it wakes a target thread (see [`OffRaw::settle`]).
    fn record(&mut self, r: Record<'_>) {
        match r {
            Record::Sample(s) => {
                self.raw.wakings_read += 1;
                self.raw.maybe.push(switch(&s, self.woken_pid, 4));
            }
            side => self.raw.side.record(side),
        }
    }
}

impl OffRaw {
    /// The name of process `pid`: from the records, or read from /proc for wakers outside
    /// the target.
    pub fn comm(&self, pid: u32) -> String {
        self.side
            .comms
            .get(&pid)
            .or_else(|| self.other_comms.get(&pid))
            .cloned()
            .unwrap_or_else(|| format!("pid {pid}"))
    }

    fn name_waker(&mut self, pid: u32, tid: u32) {
        if pid == 0 || self.tids.contains(&tid) || self.other_comms.contains_key(&pid) {
            return;
        }
        if let Ok(c) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
            self.other_comms.insert(pid, c.trim_end().to_string());
        }
    }

    /// Keeps the pending wakings of target threads; the others get one more drain (their
    /// thread's first switch-out may still be in another ring) unless `last`.
    pub fn settle(&mut self, last: bool) {
        let retried = std::mem::take(&mut self.retry);
        let fresh = std::mem::take(&mut self.maybe);
        for w in retried {
            if self.tids.contains(&(w.arg as u32)) {
                self.wakings.push(w);
            }
        }
        for w in fresh {
            if self.tids.contains(&(w.arg as u32)) {
                self.name_waker(w.pid, w.tid);
                self.wakings.push(w);
            } else if !last {
                self.retry.push(w);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_of_raw_records() {
        let mut raw = vec![0u8; 32];
        raw.extend_from_slice(&1i64.to_ne_bytes());
        assert_eq!(field_i64(&raw, 32, 8), 1);
        assert_eq!(field_i64(&raw, 24, 4), 0);
        assert_eq!(field_i64(&raw, 40, 8), 0, "past the end");
    }
}
