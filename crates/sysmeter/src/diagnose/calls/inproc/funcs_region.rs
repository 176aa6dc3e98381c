//! The area of the shared region that the -finstrument-functions hooks write for
//! `calls --functions` (its C layout is `struct sm_fhead` and `struct sm_fthread` in
//! `crates/sysmeter-sys/preload/layout.h`; keep both in step): the calibration (a histogram
//! of the ticks inside one empty hooked call, and paired blocks of hooked against plain
//! calls, at start and at exit), then per thread its load bias and its calling-context tree, one node per
//! (calling context, function) with exact counts and tick sums.
//!
//! Pure bytes in, nodes out: no I/O here. Depends on nothing but std and the sibling
//! `region` (the histogram's bucket count and the region's size, where this area starts).

use super::region::BUCKETS;
use crate::diagnose::observe::bytes::{Claim, claimed as claimed_records, u32_at, u64_at};

/// Threads with a tree.
pub const THREADS: usize = 64;
const DEPTH: usize = 4096;
const ACTIVE: usize = 4096;
/// Nodes per thread.
pub const NODES: usize = 16384;
const CAL_BLOCKS: usize = 64;
/// Calls per calibration block.
pub const CAL_CALLS: f64 = 256.0;
const HEAD: usize = 4096;
const THREAD_HEAD: usize = 64;
const NODE_SIZE: usize = 80;
const NODES_AT: usize = THREAD_HEAD + DEPTH * 56 + ACTIVE * 16;
const THREAD_SIZE: usize = NODES_AT + NODES * NODE_SIZE;
/// Bytes of the area (it starts at `region::SIZE`).
pub const SIZE: usize = HEAD + THREADS * THREAD_SIZE;

/// One node of a thread's calling-context tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    /// Runtime address of the function's first instruction.
    pub fn_addr: u64,
    /// Index + 1 of the calling context's node in the same thread (0: the root).
    pub parent: u32,
    /// Calls (exact).
    pub count: u64,
    /// Calls that returned through the exit hook.
    pub timed: u64,
    /// Ticks in the function itself, over the timed calls.
    pub self_ticks: u64,
    /// Direct calls made by the timed calls.
    pub kids: u64,
    /// Ticks of the outermost activations (with callees; recursion counted once).
    pub incl_ticks: u64,
    /// Outermost activations timed.
    pub outer: u64,
    /// Calls made inside the outermost activations, at any depth.
    pub outer_desc: u64,
    /// Activations left by longjmp.
    pub unwound: u64,
}

/// One thread's tree.
#[derive(Debug, Clone, Default)]
pub struct Thread {
    /// Its process, thread and process image (1: the launched program before any exec).
    pub claim: Claim,
    /// Load bias of the program (0 for a program that is not PIE).
    pub base: u64,
    /// Calls not recorded because the tree was full.
    pub full: u32,
    /// Calls not recorded because the stack was deeper than the shadow stack.
    pub deep: u32,
    /// The tree, indexed as in the library (empty nodes have `fn_addr` 0).
    pub nodes: Vec<Node>,
}

/// What the hooks left: the calibration and the threads' trees.
#[derive(Debug, Clone, Default)]
pub struct Functions {
    /// Ticks inside one empty hooked call, per bucket of the `region` histogram.
    pub cal_hist: Vec<u32>,
    /// Ticks of `CAL_CALLS` hooked calls less as many plain ones, per block (the first half
    /// at the start, the second at the program's exit when it exits normally).
    pub cal_blocks: Vec<i64>,
    /// Ticks inside all the empty hooked calls of the histogram.
    pub cal_sum: u64,
    /// Threads that found no free area.
    pub lost: u32,
    /// Area 0 (the calibration) excluded.
    pub threads: Vec<Thread>,
}

/// The number of areas claimed, from the area's first bytes.
pub fn claimed(head: &[u8]) -> usize {
    (u32_at(head, 0) as usize).min(THREADS)
}

/// Bytes to read for `claimed` areas.
pub fn used_len(claimed: usize) -> usize {
    HEAD + claimed.min(THREADS) * THREAD_SIZE
}

fn node(b: &[u8], at: usize) -> Node {
    let q = |i: usize| u64_at(b, at + 8 * i);
    Node {
        fn_addr: q(0),
        parent: u32_at(b, at + 8),
        count: q(2),
        timed: q(3),
        self_ticks: q(4),
        kids: q(5),
        incl_ticks: q(6),
        outer: q(7),
        outer_desc: q(8),
        unwound: q(9),
    }
}

fn thread(b: &[u8], at: usize, claim: Claim) -> Thread {
    Thread {
        claim,
        base: u64_at(b, at + 16),
        full: u32_at(b, at + 32),
        deep: u32_at(b, at + 36),
        nodes: (0..NODES)
            .map(|i| node(b, at + NODES_AT + i * NODE_SIZE))
            .collect(),
    }
}

/// Reads the area (`b` may be cut short after the last claimed thread).
pub fn parse(b: &[u8]) -> Functions {
    let n = claimed(b);
    Functions {
        cal_hist: (0..BUCKETS)
            .map(|i| u32_at(b, 16 + 8 * CAL_BLOCKS + 4 * i))
            .collect(),
        cal_blocks: (0..(u32_at(b, 12) as usize).min(CAL_BLOCKS))
            .map(|i| u64_at(b, 16 + 8 * i) as i64)
            .collect(),
        cal_sum: u64_at(b, 16 + 8 * CAL_BLOCKS + 4 * BUCKETS),
        lost: u32_at(b, 4),
        threads: claimed_records(b, HEAD, THREAD_SIZE, 1..n)
            .map(|(_, at, claim)| thread(b, at, claim))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_reads_back_from_its_offsets() {
        let mut b = vec![0u8; used_len(2)];
        b[0..4].copy_from_slice(&2u32.to_le_bytes());
        let t = HEAD + THREAD_SIZE;
        b[t..t + 4].copy_from_slice(&1u32.to_le_bytes());
        b[t + 16..t + 24].copy_from_slice(&0x5555_0000u64.to_le_bytes());
        let n = t + NODES_AT + 3 * NODE_SIZE;
        b[n..n + 8].copy_from_slice(&0x5555_1139u64.to_le_bytes());
        b[n + 8..n + 12].copy_from_slice(&1u32.to_le_bytes());
        b[n + 16..n + 24].copy_from_slice(&12u64.to_le_bytes());
        let f = parse(&b);
        assert_eq!(f.threads.len(), 1);
        let th = &f.threads[0];
        assert_eq!(th.base, 0x5555_0000);
        assert_eq!(
            (th.nodes[3].fn_addr, th.nodes[3].parent, th.nodes[3].count),
            (0x5555_1139, 1, 12)
        );
    }
}
