//! Records of an off-CPU profile kept as plain data: switch-outs (thread, time, call chain,
//! state, the top of the user stack), switch-ins, wakings of target threads, thread starts
//! and exits, plus the side-band records (mappings, execs, forks, names) in the floor's
//! [`RawData`]. No system calls here.

use std::collections::HashSet;

use perf_event::data::Record;

use crate::diagnose::observe::records::{
    MISC_SWITCH_OUT, RECORD_SAMPLE, RECORD_SWITCH, RawData, chain_sample, handle, u32_at, u64_at,
    user_copy,
};
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

/// `{ u32 pid, u32 tid, u64 time }` at the end of a non-sample record (`sample_id_all`
/// with TID | TIME and no other id fields).
fn trailer(bytes: &[u8]) -> Option<(u32, u64)> {
    let at = bytes.len().checked_sub(16)?;
    Some((u32_at(bytes, at + 4)?, u64_at(bytes, at + 8)?))
}

fn field_i64(raw: &[u8], offset: usize, width: usize) -> i64 {
    match (width, raw.get(offset..offset + width)) {
        (8, Some(b)) => b.try_into().map_or(0, i64::from_ne_bytes),
        (4, Some(b)) => b.try_into().map_or(0, |b| i32::from_ne_bytes(b) as i64),
        _ => 0,
    }
}

fn user_stack(s: &perf_event::data::Sample<'_>) -> Option<UserStack> {
    let (regs, bytes) = user_copy(s)?;
    Some(UserStack {
        regs,
        bytes: bytes.to_vec(),
    })
}

fn sample(rec: &perf_event::Record<'_>, offset: usize, width: usize) -> Option<Switch> {
    let s = match rec.parse_record() {
        Ok(Record::Sample(s)) => s,
        // perf-event-data expects a `dyn_size` after an empty user stack, which the kernel
        // does not write (a kernel thread or idle task has no user stack).
        Err(_) => return fallback(&rec.to_contiguous(), offset, width),
        Ok(_) => return None,
    };
    Some(Switch {
        pid: s.pid()?,
        tid: s.tid()?,
        time: s.time()?,
        chain: s.callchain().map(<[u64]>::to_vec).unwrap_or_default(),
        arg: s.raw().map_or(0, |r| field_i64(r, offset, width)),
        stack: user_stack(&s),
    })
}

/// Parses the fixed start of our samples by hand (the record's body, after its header):
/// `pid, tid`, `time`, the call chain, the raw record (no user registers or stack).
fn fallback(bytes: &[u8], offset: usize, width: usize) -> Option<Switch> {
    let s = chain_sample(bytes)?;
    Some(Switch {
        pid: s.pid,
        tid: s.tid,
        time: s.time,
        chain: s.chain,
        arg: field_i64(s.raw, offset, width),
        stack: None,
    })
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

    /// A record of a target's switch event.
    pub fn handle_switch(&mut self, rec: &perf_event::Record<'_>, prev_state: usize) {
        match rec.ty() {
            RECORD_SAMPLE => match sample(rec, prev_state, 8) {
                Some(s) => {
                    self.tids.insert(s.tid);
                    self.outs.push(s);
                }
                None => self.side.unparsed += 1,
            },
            RECORD_SWITCH if rec.misc() & MISC_SWITCH_OUT == 0 => {
                if let Some((tid, time)) = trailer(&rec.to_contiguous()) {
                    self.ins.push((tid, time));
                }
            }
            _ => self.side_band(rec),
        }
    }

    fn side_band(&mut self, rec: &perf_event::Record<'_>) {
        match rec.parse_record() {
            Ok(Record::Fork(f)) => {
                self.tids.insert(f.tid);
                self.starts.push((f.tid, f.time));
            }
            Ok(Record::Exit(e)) => self.exits.push((e.tid, e.time)),
            _ => {}
        }
        handle(rec, &mut self.side);
    }

    /// A record of a system-wide waking event: kept when it wakes a target thread.
    pub fn handle_waking(&mut self, rec: &perf_event::Record<'_>, woken_pid: usize) {
        if rec.ty() != RECORD_SAMPLE {
            return handle(rec, &mut self.side);
        }
        self.wakings_read += 1;
        let Some(s) = sample(rec, woken_pid, 4) else {
            self.side.unparsed += 1;
            return;
        };
        self.maybe.push(s);
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
    fn trailer_reads_tid_and_time() {
        let mut b = vec![0u8; 8];
        b.extend_from_slice(&7u32.to_ne_bytes());
        b.extend_from_slice(&9u32.to_ne_bytes());
        b.extend_from_slice(&42u64.to_ne_bytes());
        assert_eq!(trailer(&b), Some((9, 42)));
        assert_eq!(trailer(&[1, 2, 3]), None);
    }

    #[test]
    fn fields_of_raw_records() {
        let mut raw = vec![0u8; 32];
        raw.extend_from_slice(&1i64.to_ne_bytes());
        assert_eq!(field_i64(&raw, 32, 8), 1);
        assert_eq!(field_i64(&raw, 24, 4), 0);
        assert_eq!(field_i64(&raw, 40, 8), 0, "past the end");
    }
}
