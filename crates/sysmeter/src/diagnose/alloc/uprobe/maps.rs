//! The maps of `crates/sysmeter/bpf/alloc.bpf.c` read back once observation stopped: the
//! `stats` slots (live and peak bytes, totals, what could not be kept, the size histogram),
//! the counters per stack id (`sites`), the kernel's frame-pointer walk of each stack id
//! (`stacks`) and the register and stack snapshot taken at each stack id's first
//! allocation (`snapshots`). The slot numbers and struct layouts mirror the C; keep both in
//! step. Decoding is pure; reading goes through `observe::bpf`.

use std::collections::HashMap;

use crate::diagnose::alloc::region::{Counters, HIST, Heap};
use crate::diagnose::observe::bpf::{BpfError, Loaded, SNAPSHOT_HEAD, Snapshot};

/// Slots of `stats` (S_* in the C).
pub const S_LIVE: usize = 0;
const S_LIVE_COUNT: usize = 1;
const S_PEAK: usize = 2;
const S_PEAK_NS: usize = 3;
const S_ALLOCS: usize = 4;
const S_FREES: usize = 5;
const S_TEMPS: usize = 6;
const S_FOREIGN: usize = 7;
const S_UNTRACKED: usize = 8;
const S_LOST_STACKS: usize = 9;
const S_SNAPSHOT_FAILED: usize = 10;
const S_THREADS_FULL: usize = 11;
const S_SITES_FULL: usize = 12;
/// Probe hits of the target's threads (entries, returns and frees).
pub const S_HITS: usize = 13;
const S_REPLACED: usize = 14;
const S_HIST: usize = 16;
/// Words of a snapshot's stack copy (STACK_WORDS).
const STACK_WORDS: usize = 256;

/// The run-wide values of `stats`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// The heap as counted.
    pub heap: Heap,
    /// Allocations whose stack found no room in the stack map.
    pub lost_stacks: u64,
    /// Stacks whose snapshot could not be read (kept with the kernel's walk only).
    pub snapshot_failed: u64,
    /// Calls of threads beyond the thread table (not counted).
    pub threads_full: u64,
    /// Allocations beyond the site table (not counted per site).
    pub sites_full: u64,
    /// Probe hits of the target.
    pub hits: u64,
    /// Blocks handed out again before their free was seen (freed by a path not probed).
    pub replaced: u64,
    /// Allocations per log2 size class.
    pub hist: Vec<u64>,
}

/// The values of the `stats` slots `s`.
pub fn stats(s: &[u64]) -> Stats {
    let at = |i: usize| s.get(i).copied().unwrap_or(0);
    Stats {
        heap: Heap {
            live: at(S_LIVE),
            live_count: at(S_LIVE_COUNT),
            peak: at(S_PEAK),
            peak_ns: at(S_PEAK_NS),
            allocs: at(S_ALLOCS),
            frees: at(S_FREES),
            temps: at(S_TEMPS),
            foreign_frees: at(S_FOREIGN),
            untracked: at(S_UNTRACKED),
        },
        lost_stacks: at(S_LOST_STACKS),
        snapshot_failed: at(S_SNAPSHOT_FAILED),
        threads_full: at(S_THREADS_FULL),
        sites_full: at(S_SITES_FULL),
        hits: at(S_HITS),
        replaced: at(S_REPLACED),
        hist: (0..HIST).map(|i| at(S_HIST + i)).collect(),
    }
}

/// Everything the kernel kept.
#[derive(Debug, Default)]
pub struct Maps {
    /// Run-wide values.
    pub stats: Stats,
    /// Counters per stack id (-1: no stack).
    pub sites: Vec<(i32, Counters)>,
    /// The kernel's walk per stack id, innermost first.
    pub walks: HashMap<i32, Vec<u64>>,
    /// The snapshot per stack id: the registers at its first allocation's return (`first`:
    /// the return address, in the allocating function) and the stack above them.
    pub snapshots: HashMap<i32, Snapshot>,
}

fn counters(v: &[u64; 6]) -> Counters {
    Counters {
        allocs: v[0],
        bytes: v[1],
        frees: v[2],
        freed: v[3],
        temps: v[4],
        mmaps: v[5],
    }
}

/// Reads every map of the loaded program.
pub fn read(l: &mut Loaded) -> Result<Maps, BpfError> {
    let stats = stats(&l.counters("stats")?);
    let sites: Vec<(i32, Counters)> = l
        .entries::<[u8; 4], [u64; 6]>("sites")?
        .into_iter()
        .map(|(k, v)| (i32::from_ne_bytes(k), counters(&v)))
        .collect();
    let ids: Vec<i32> = sites.iter().map(|s| s.0).filter(|&id| id >= 0).collect();
    let walks = l.stacks("stacks", &ids)?;
    let snapshots = l
        .entries::<[u8; 4], [u64; SNAPSHOT_HEAD + STACK_WORDS]>("snapshots")?
        .into_iter()
        .map(|(k, v)| (i32::from_ne_bytes(k), Snapshot::from_words(&v)))
        .collect();
    Ok(Maps {
        stats,
        sites,
        walks,
        snapshots,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_and_snapshots_decode_in_the_c_order() {
        let mut s = vec![0u64; S_HIST + HIST];
        s[S_PEAK] = 99;
        s[S_HITS] = 7;
        s[S_HIST + 7] = 3;
        let st = stats(&s);
        assert_eq!((st.heap.peak, st.hits, st.hist[7]), (99, 7, 3));
        let mut v = [0u64; SNAPSHOT_HEAD + STACK_WORDS];
        v[0] = 0x401000;
        v[3] = 0x1122;
        let snap = Snapshot::from_words(&v);
        assert_eq!(snap.regs(snap.first).ip, 0x401000);
        assert_eq!(snap.stack.len(), STACK_WORDS * 8);
        assert_eq!(&snap.stack[..2], &[0x22, 0x11]);
    }
}
