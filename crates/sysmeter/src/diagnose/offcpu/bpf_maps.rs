//! The maps of the in-kernel backend (`crates/sysmeter/bpf/offcpu.bpf.c`) turned into the
//! records the perf backend produces (pure): one switch-out per aggregated key (its thread,
//! state and stacks as a perf call chain, with the user-stack snapshot for `unwind`), one
//! waking per distinct waker, thread spans as starts and exits, and one [`Block`] per
//! interval (spread over the key's log2 histogram by `observe::bpf::durations`).
//!
//! The layouts below mirror the C structs; `bpf.rs` reads the maps, this file decodes them.

use std::collections::HashMap;

use super::blocks::{Block, Blocks};
use super::raw::{OffRaw, Switch, UserStack};
use crate::diagnose::observe::bpf::{SNAPSHOT_HEAD, Snapshot, VALUE_WORDS};
use crate::diagnose::observe::bpf::{durations, u32_at, u64_at};
use crate::diagnose::observe::records::{PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER};

/// `struct key`: bytes.
pub const KEY_BYTES: usize = 48;
/// `struct span`: bytes.
pub const SPAN_BYTES: usize = 24;
/// Words of user stack in `struct snapshot`.
pub const STACK_WORDS: usize = 64;
/// `struct snapshot`: ts, sp, bp, words.
pub const SNAPSHOT_WORDS: usize = SNAPSHOT_HEAD + STACK_WORDS;

/// Counter slots of the `counters` map (the `C_*` of the C source).
pub mod slot {
    /// Intervals aggregated.
    pub const INTERVALS: usize = 0;
    /// User stacks that could not be stored (stack map full or a hash collision).
    pub const USTACK_LOST: usize = 1;
    /// Kernel stacks that could not be stored.
    pub const KSTACK_LOST: usize = 2;
    /// Intervals dropped: the aggregation map was full.
    pub const KEYS_FULL: usize = 3;
    /// Switch-outs not remembered: the table of blocked threads was full.
    pub const STARTS_FULL: usize = 4;
    /// Wakings of blocked target threads.
    pub const WAKINGS: usize = 5;
    /// Intervals whose switch-in the kernel did not report, closed at their waking.
    pub const CLOSED_AT_WAKING: usize = 7;
    /// Intervals lost: a switch-in not reported and no waking seen after the switch-out.
    pub const IN_MISSED: usize = 8;
    /// Intervals lost: a switch-out not reported (seen from the switch-in that followed).
    pub const OUT_MISSED: usize = 9;
}

/// Everything read from the maps at the end of a run.
#[derive(Debug, Clone, Default)]
pub struct Maps {
    /// `blocked`: key bytes and (count, sum, histogram).
    pub blocked: Vec<([u8; KEY_BYTES], [u64; VALUE_WORDS])>,
    /// `stacks`: id → instruction pointers, innermost first.
    pub stacks: HashMap<i32, Vec<u64>>,
    /// `snapshots`: (thread, user stack id) → its snapshot (`first`: the time).
    pub snapshots: HashMap<(u32, i32), Snapshot>,
    /// `spans`: tid → (first, last, pid).
    pub spans: Vec<(u32, [u8; SPAN_BYTES])>,
    /// `comms`: pid → name (wakers).
    pub comms: Vec<(u32, [u8; 16])>,
    /// Threads still off the CPU at the end (left in `starts`).
    pub unfinished: u64,
    /// The `counters` slots.
    pub counters: Vec<u64>,
}

impl Maps {
    /// Counter `slot` (0 when absent).
    pub fn counter(&self, slot: usize) -> u64 {
        self.counters.get(slot).copied().unwrap_or(0)
    }

    /// The stack ids a run needs: every stack of every key.
    pub fn stack_ids(&self) -> Vec<i32> {
        let mut ids: Vec<i32> = self
            .blocked
            .iter()
            .flat_map(|(k, _)| [8, 12, 36, 40].map(|at| u32_at(k, at) as i32))
            .filter(|&id| id >= 0)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// One decoded `struct key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    pid: u32,
    tid: u32,
    ustack: i32,
    kstack: i32,
    state: u64,
    waker: Option<(u32, u32, i32, i32)>,
}

fn key(k: &[u8; KEY_BYTES]) -> Key {
    let seen = u32_at(k, 24) != 0;
    Key {
        pid: u32_at(k, 0),
        tid: u32_at(k, 4),
        ustack: u32_at(k, 8) as i32,
        kstack: u32_at(k, 12) as i32,
        state: u64_at(k, 16),
        waker: seen.then(|| {
            let at = |o| u32_at(k, o);
            (at(28), at(32), at(36) as i32, at(40) as i32)
        }),
    }
}

/// A perf call chain from a kernel and a user stack id (missing ids: that part is empty).
fn chain(maps: &Maps, kstack: i32, ustack: i32) -> Vec<u64> {
    let mut c = Vec::new();
    if let Some(k) = maps.stacks.get(&kstack).filter(|s| !s.is_empty()) {
        c.push(PERF_CONTEXT_KERNEL);
        c.extend_from_slice(k);
    }
    if let Some(u) = maps.stacks.get(&ustack).filter(|s| !s.is_empty()) {
        c.push(PERF_CONTEXT_USER);
        c.extend_from_slice(u);
    }
    c
}

fn spans_into(maps: &Maps, raw: &mut OffRaw) -> HashMap<u32, u64> {
    let mut first = HashMap::new();
    for (tid, s) in &maps.spans {
        let (a, b) = (u64_at(s, 0), u64_at(s, 8));
        raw.tids.insert(*tid);
        raw.starts.push((*tid, a));
        raw.exits.push((*tid, b));
        first.insert(*tid, a);
    }
    for (pid, comm) in &maps.comms {
        let end = comm.iter().position(|&b| b == 0).unwrap_or(comm.len());
        let name = String::from_utf8_lossy(&comm[..end]).into_owned();
        raw.other_comms.entry(*pid).or_insert(name);
    }
    first
}

/// Bytes of user stack in one snapshot (`STACK_WORDS` words in offcpu.bpf.c).
pub const SNAPSHOT_BYTES: u32 = 64 * 8;

/// The snapshot of (thread, user stack): its time and the registers and stack bytes the
/// unwinder needs (the instruction pointer is the stack's first frame).
fn snapshot(maps: &Maps, tid: u32, ustack: i32) -> Option<(u64, UserStack)> {
    let s = maps.snapshots.get(&(tid, ustack))?;
    let ip = *maps.stacks.get(&ustack)?.first()?;
    let stack = UserStack {
        regs: s.regs(ip),
        bytes: s.stack.clone(),
    };
    Some((s.first, stack))
}

/// Fills `raw` (whose side-band records are already there) from `maps` and returns the
/// intervals.
pub fn into_raw(maps: &Maps, raw: &mut OffRaw) -> Blocks {
    let first = spans_into(maps, raw);
    let mut blocks = Blocks {
        unfinished: maps.unfinished,
        ..Blocks::default()
    };
    let mut wakers: HashMap<(u32, u32, i32, i32), usize> = HashMap::new();
    for (k, v) in &maps.blocked {
        let k = key(k);
        let snap = snapshot(maps, k.tid, k.ustack);
        let time = snap
            .as_ref()
            .map_or_else(|| first.get(&k.tid).copied().unwrap_or(0), |s| s.0);
        let waker = k.waker.map(|w| {
            *wakers.entry(w).or_insert_with(|| {
                let snap = snapshot(maps, w.1, w.2);
                raw.wakings.push(Switch {
                    pid: w.0,
                    tid: w.1,
                    time: snap.as_ref().map_or(time, |s| s.0),
                    chain: chain(maps, w.3, w.2),
                    arg: i64::from(k.tid),
                    stack: snap.map(|s| s.1),
                });
                raw.wakings.len() - 1
            })
        });
        raw.outs.push(Switch {
            pid: k.pid,
            tid: k.tid,
            time,
            chain: chain(maps, k.kstack, k.ustack),
            arg: k.state as i64,
            stack: snap.map(|s| s.1),
        });
        let out = raw.outs.len() - 1;
        for ns in durations(v[0], v[1], &v[2..]) {
            blocks.list.push(Block { out, ns, waker });
        }
    }
    blocks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(k: &mut [u8; KEY_BYTES], at: usize, v: u32) {
        k[at..at + 4].copy_from_slice(&v.to_ne_bytes());
    }

    #[test]
    fn keys_become_switches_wakers_and_intervals() {
        let mut maps = Maps::default();
        maps.stacks.insert(1, vec![0x40_1000, 0x40_2000]);
        maps.stacks.insert(2, vec![0xffff_0001]);
        let mut k = [0u8; KEY_BYTES];
        for (at, v) in [
            (0, 10),
            (4, 11),
            (8, 1),
            (12, 2),
            (24, 1),
            (28, 10),
            (32, 12),
        ] {
            put(&mut k, at, v);
        }
        put(&mut k, 36, u32::MAX);
        put(&mut k, 40, u32::MAX);
        let mut v = [0u64; VALUE_WORDS];
        (v[0], v[1], v[2 + 20]) = (2, 4_000_000, 2);
        maps.blocked.push((k, v));
        let mut span = [0u8; SPAN_BYTES];
        span[..8].copy_from_slice(&5u64.to_ne_bytes());
        maps.spans.push((11, span));
        let mut raw = OffRaw::default();
        let b = into_raw(&maps, &mut raw);
        assert_eq!(b.list.len(), 2);
        assert_eq!(b.list.iter().map(|b| b.ns).sum::<u64>(), 4_000_000);
        let out = &raw.outs[0];
        assert_eq!((out.pid, out.tid, out.time), (10, 11, 5));
        assert_eq!(
            out.chain,
            vec![
                PERF_CONTEXT_KERNEL,
                0xffff_0001,
                PERF_CONTEXT_USER,
                0x40_1000,
                0x40_2000
            ]
        );
        assert_eq!(raw.wakings.len(), 1);
        assert_eq!((raw.wakings[0].tid, raw.wakings[0].arg), (12, 11));
        assert!(raw.wakings[0].chain.is_empty(), "stack ids -1: no frames");
        assert!(raw.tids.contains(&11));
        assert_eq!(maps.stack_ids(), vec![1, 2]);
    }
}
