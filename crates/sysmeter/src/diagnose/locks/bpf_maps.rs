//! The maps of the in-kernel backend (`crates/sysmeter/bpf/locks.bpf.c`) turned into the
//! waits the perf backend's pairing makes (`waits::Paired`): each aggregated key becomes
//! its count of [`Wait`]s, their durations spread over the key's log2 histogram and scaled
//! to its exact sum (`observe::bpf::durations`: counts and totals exact, single waits within
//! their bucket). Each distinct user stack goes through the same unwinder as the perf
//! backend's stack copies (`events::Recorded::stack_chain`) with the registers and the 2 KiB
//! of stack the kernel kept at its first call, so frameless glibc leaves are repaired.
//!
//! The layouts below mirror the C structs; `bpf.rs` reads the maps, this file decodes them.

use std::collections::HashMap;

use super::events::Recorded;
use super::waits::{Paired, Wait};
use crate::diagnose::observe::bpf::{SNAPSHOT_HEAD, Snapshot, VALUE_WORDS};
use crate::diagnose::observe::bpf::{durations, u32_at, u64_at};

/// `struct key`: bytes.
pub const KEY_BYTES: usize = 40;
/// Words of user stack in `struct snapshot`.
pub const STACK_WORDS: usize = 256;
/// `struct snapshot`: ts, sp, bp, words.
pub const SNAPSHOT_WORDS: usize = SNAPSHOT_HEAD + STACK_WORDS;
/// Bytes of user stack in one snapshot.
pub const SNAPSHOT_BYTES: u32 = (STACK_WORDS * 8) as u32;

/// Counter slots of the `counters` map (the `C_*` of the C source).
pub mod slot {
    /// Waits aggregated.
    pub const WAITS: usize = 0;
    /// User stacks that could not be stored (stack map full or a hash collision).
    pub const USTACK_LOST: usize = 1;
    /// Futex calls of the targets, of any operation.
    pub const CALLS: usize = 2;
    /// Waits dropped: the aggregation map was full.
    pub const KEYS_FULL: usize = 3;
    /// Waiting calls not remembered: the table of waiting threads was full.
    pub const STARTS_FULL: usize = 4;
    /// Waking calls.
    pub const WAKES: usize = 5;
}

/// Everything read from the maps at the end of a run.
#[derive(Debug, Clone, Default)]
pub struct Maps {
    /// `waits`: key bytes and (count, sum, histogram).
    pub waits: Vec<([u8; KEY_BYTES], [u64; VALUE_WORDS])>,
    /// `stacks`: id → instruction pointers, innermost first.
    pub stacks: HashMap<i32, Vec<u64>>,
    /// `snapshots`: (thread, user stack id, word) → its snapshot (`first`: the time).
    pub snapshots: HashMap<(u32, i32, u64), Snapshot>,
    /// Threads still in a waiting call at the end (left in `starts`).
    pub unfinished: u64,
    /// The `counters` slots.
    pub counters: Vec<u64>,
}

impl Maps {
    /// Counter `slot` (0 when absent).
    pub fn counter(&self, slot: usize) -> u64 {
        self.counters.get(slot).copied().unwrap_or(0)
    }

    /// Waits the kernel could not keep (a missing stack is not a lost wait: it is counted,
    /// at an `[unknown]` site).
    pub fn lost(&self) -> u64 {
        [slot::KEYS_FULL, slot::STARTS_FULL]
            .iter()
            .map(|&s| self.counter(s))
            .sum()
    }

    /// The stack ids of every wait and waker.
    pub fn stack_ids(&self) -> Vec<i32> {
        let mut ids: Vec<i32> = (self.waits.iter())
            .flat_map(|(k, _)| [20, 32].map(|at| u32_at(k, at) as i32))
            .filter(|&id| id >= 0)
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }
}

/// One decoded `struct key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    uaddr: u64,
    pid: u32,
    tid: u32,
    op: u32,
    ustack: i32,
    ret: i64,
    waker: Option<(u32, i32)>,
}

fn key(k: &[u8; KEY_BYTES]) -> Key {
    let waker_tid = u32_at(k, 28);
    Key {
        uaddr: u64_at(k, 0),
        pid: u32_at(k, 8),
        tid: u32_at(k, 12),
        op: u32_at(k, 16),
        ustack: u32_at(k, 20) as i32,
        ret: i64::from(u32_at(k, 24) as i32),
        waker: (waker_tid != 0).then(|| (waker_tid, u32_at(k, 32) as i32)),
    }
}

/// Which call a chain is of: process, thread, user stack id, futex word (the snapshot is
/// the thread's: two threads can share a frame-pointer stack id, not a copy).
type Call = (u32, u32, i32, u64);

/// The chain of a call, unwound through its snapshot where there is one, and the time of
/// that snapshot (naming looks the address space up at a time).
fn chain(maps: &Maps, rec: &mut Recorded, call: Call, latest: u64) -> (u32, u64) {
    let (pid, tid, ustack, uaddr) = call;
    let frames = maps.stacks.get(&ustack).cloned().unwrap_or_default();
    let snap = maps.snapshots.get(&(tid, ustack, uaddr));
    let time = snap.map_or(latest, |s| s.first);
    let copy = snap
        .zip(frames.first())
        .map(|(s, &ip)| (s.regs(ip), s.stack.as_slice()));
    (rec.stack_chain(pid, time, &frames, copy), time)
}

/// The waits of `maps`, their chains interned in `rec` (whose side-band records are read).
pub fn into_paired(maps: &Maps, rec: &mut Recorded) -> Paired {
    let latest = maps.snapshots.values().map(|s| s.first).max().unwrap_or(0);
    let mut out = Paired {
        calls: maps.counter(slot::CALLS),
        wakes: maps.counter(slot::WAKES),
        ..Paired::default()
    };
    for (k, v) in &maps.waits {
        let k = key(k);
        let (chain, time) = chain(maps, rec, (k.pid, k.tid, k.ustack, k.uaddr), latest);
        let waker = k.waker.map(|(tid, ustack)| {
            let call = (k.pid, tid, ustack, k.uaddr);
            (tid, chain_of(maps, rec, call, latest))
        });
        let mut enter = time;
        for ns in durations(v[0], v[1], &v[2..]) {
            out.waits.push(Wait {
                pid: k.pid,
                tid: k.tid,
                uaddr: k.uaddr,
                op: k.op,
                enter,
                exit: enter + ns,
                ret: k.ret,
                chain,
                waker,
            });
            enter += ns;
        }
    }
    out.waits.sort_by_key(|w| w.exit);
    out
}

fn chain_of(maps: &Maps, rec: &mut Recorded, call: Call, latest: u64) -> u32 {
    chain(maps, rec, call, latest).0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::records::{PERF_CONTEXT_USER, frames};

    fn put(k: &mut [u8; KEY_BYTES], at: usize, v: &[u8]) {
        k[at..at + v.len()].copy_from_slice(v);
    }

    #[test]
    fn keys_become_waits_with_their_wakers_and_exact_totals() {
        let mut maps = Maps::default();
        maps.stacks.insert(1, vec![0x40_1000, 0x40_2000]);
        maps.stacks.insert(2, vec![0x40_3000]);
        let mut k = [0u8; KEY_BYTES];
        put(&mut k, 0, &0x1234u64.to_ne_bytes());
        for (at, v) in [(8, 10u32), (12, 11), (16, 128), (20, 1), (28, 12), (32, 2)] {
            put(&mut k, at, &v.to_ne_bytes());
        }
        let mut v = [0u64; VALUE_WORDS];
        (v[0], v[1], v[2 + 10], v[2 + 12]) = (3, 9_000, 2, 1);
        maps.waits.push((k, v));
        maps.counters = vec![3, 0, 8, 0, 0, 4];
        let mut rec = Recorded::default();
        let p = into_paired(&maps, &mut rec);
        assert_eq!((p.calls, p.wakes, p.waits.len()), (8, 4, 3));
        assert_eq!(p.waits.iter().map(Wait::ns).sum::<u64>(), 9_000);
        let w = p.waits[0];
        assert_eq!(
            (w.pid, w.tid, w.uaddr, w.op, w.ret),
            (10, 11, 0x1234, 128, 0)
        );
        let user = |c: u32| -> Vec<u64> {
            let chain = &rec.chains[c as usize];
            assert_eq!(chain[0], PERF_CONTEXT_USER);
            frames(chain).into_iter().map(|(a, _)| a).collect()
        };
        assert_eq!(user(w.chain), vec![0x40_1000, 0x40_2000]);
        let (waker, chain) = w.waker.expect("a waker");
        assert_eq!((waker, user(chain)), (12, vec![0x40_3000]));
        assert_eq!(maps.stack_ids(), vec![1, 2]);
        assert_eq!(maps.lost(), 0);
    }
}
