//! The shared region the preload library's allocation hooks write (its C layout is
//! `crates/sysmeter-sys/preload/alloc.h`; keep both in step): a header, one record per
//! process image (live and peak bytes, totals, the size histogram, its loaded objects), the
//! table of call stacks, and each process's counters per stack.
//!
//! Pure bytes in, values out: no I/O here (the reading is `mod.rs`'s, through
//! `observe::inject::read_at`). Depends on nothing but std.

use crate::diagnose::observe::bytes::{Claim, claimed, header_with_magic, text_at, u32_at, u64_at};

/// Identifies an initialised region ("SMALLOC1").
pub const MAGIC: u64 = 0x3143_4f4c_4c41_4d53;
/// Process images of a run.
pub const PROCS: usize = 32;
/// Distinct call stacks of a run.
pub const STACKS: usize = 32768;
/// Return addresses kept per stack.
pub const DEPTH: usize = 32;
const OBJS: usize = 128;
const PATH: usize = 120;
/// Log2 size classes of the histogram.
pub const HIST: usize = 48;
const HEADER: usize = 4096;
const OBJ_SIZE: usize = 24 + PATH;
const PROC_SIZE: usize = 544 + OBJS * OBJ_SIZE;
const STACK_SIZE: usize = 24 + 8 * DEPTH;
const SITE_SIZE: usize = 64;
/// Where the process records start.
pub const PROCS_AT: usize = HEADER;
/// Where the stack table starts.
pub const STACKS_AT: usize = PROCS_AT + PROCS * PROC_SIZE;
/// Where the per-process counters start.
pub const SITES_AT: usize = STACKS_AT + STACKS * STACK_SIZE;
/// Bytes of the whole region.
pub const SIZE: usize = SITES_AT + PROCS * STACKS * SITE_SIZE;

/// The header counts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Header {
    /// Process records claimed.
    pub procs: usize,
    /// Stacks inserted.
    pub stacks: u32,
    /// Processes that found no record.
    pub lost_procs: u32,
    /// Allocations whose stack found no room (counted at stack 0).
    pub lost_stacks: u32,
    /// 0: libgcc's DWARF walk, 1: frame pointers, 2: libunwind.
    pub unwinder: u32,
}

/// A loaded object of a process image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// Runtime address less the address stated in the file.
    pub bias: u64,
    /// Runtime range of its loaded segments.
    pub lo: u64,
    /// End of that range.
    pub hi: u64,
    /// Its file.
    pub path: String,
}

/// A process's heap as counted, by the preload library's hooks (its record in the region)
/// or by the uprobe fallback's BPF programs (their `stats` map).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Heap {
    /// Bytes live now (at the end: leaked, or live when observation stopped).
    pub live: u64,
    /// Blocks live now.
    pub live_count: u64,
    /// Most bytes live at once.
    pub peak: u64,
    /// When the peak was reached (CLOCK_MONOTONIC ns).
    pub peak_ns: u64,
    /// Allocations.
    pub allocs: u64,
    /// Frees of blocks seen allocated.
    pub frees: u64,
    /// Temporary allocations.
    pub temps: u64,
    /// Frees of blocks not seen allocated (before the library started or the probes were
    /// attached, the parent's, or by a path not probed).
    pub foreign_frees: u64,
    /// Allocations not kept (the block table was full).
    pub untracked: u64,
}

/// One process image.
#[derive(Debug, Clone, Default)]
pub struct Proc {
    /// Record index (the counters' row).
    pub index: usize,
    /// Process id, parent's id.
    pub pid: u32,
    /// The parent.
    pub ppid: u32,
    /// Which load of the library (exec'd images differ; a forked child keeps its parent's).
    pub image: u32,
    /// A forked child (it shares its parent's image).
    pub forked: bool,
    /// CLOCK_MONOTONIC at the library's start in this image.
    pub start_ns: u64,
    /// Its heap as counted.
    pub heap: Heap,
    /// Program name.
    pub exe: String,
    /// Allocations per log2 size class.
    pub hist: Vec<u64>,
    /// Loaded objects.
    pub objects: Vec<Object>,
}

/// A call stack: the image it belongs to and its return addresses, innermost first.
#[derive(Debug, Clone, Default)]
pub struct Stack {
    /// The image whose objects name the addresses.
    pub image: u32,
    /// Return addresses.
    pub pcs: Vec<u64>,
}

/// One process's counters at one stack.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Allocations and their bytes.
    pub allocs: u64,
    /// Bytes allocated.
    pub bytes: u64,
    /// Of those, freed, and their bytes.
    pub frees: u64,
    /// Bytes freed.
    pub freed: u64,
    /// Freed by the allocating thread before its next allocation.
    pub temps: u64,
    /// Anonymous maps among the allocations.
    pub mmaps: u64,
}

/// The launched process `pid` as it is now: the record of its last image (a program
/// started through a script or a shim execs, and every image gets a record of its own; the
/// first is the script's), never a forked child's.
pub fn launched(procs: &[Proc], pid: u32) -> Option<&Proc> {
    procs
        .iter()
        .filter(|p| p.pid == pid && !p.forked)
        .max_by_key(|p| (p.image, p.index))
}

/// A fresh header (magic set, everything else 0).
pub fn header() -> Vec<u8> {
    header_with_magic(HEADER, MAGIC)
}

/// The header's counts; `None` without the magic.
pub fn parse_header(b: &[u8]) -> Option<Header> {
    (u64_at(b, 0) == MAGIC).then(|| Header {
        procs: (u32_at(b, 8) as usize).min(PROCS),
        stacks: u32_at(b, 12),
        lost_procs: u32_at(b, 16),
        lost_stacks: u32_at(b, 20),
        unwinder: u32_at(b, 24),
    })
}

/// Bytes of the process records to read for `procs` of them.
pub fn procs_len(procs: usize) -> usize {
    procs.min(PROCS) * PROC_SIZE
}

/// The claimed process records in `b` (the records area, from its start).
pub fn parse_procs(b: &[u8], procs: usize) -> Vec<Proc> {
    claimed(b, 0, PROC_SIZE, 0..procs.min(PROCS))
        .map(|(index, at, claim)| parse_proc(b, index, at, claim))
        .collect()
}

fn parse_proc(b: &[u8], index: usize, at: usize, claim: Claim) -> Proc {
    let nobjs = (u32_at(b, at + 100) as usize).min(OBJS);
    Proc {
        index,
        pid: claim.pid,
        ppid: claim.tid,
        image: claim.image,
        start_ns: u64_at(b, at + 16),
        heap: Heap {
            live: u64_at(b, at + 24),
            live_count: u64_at(b, at + 32),
            peak: u64_at(b, at + 40),
            peak_ns: u64_at(b, at + 48),
            allocs: u64_at(b, at + 56),
            frees: u64_at(b, at + 64),
            temps: u64_at(b, at + 72),
            foreign_frees: u64_at(b, at + 80),
            untracked: u64_at(b, at + 88),
        },
        forked: u32_at(b, at + 104) != 0,
        exe: text_at(b, at + 112, 48),
        hist: (0..HIST).map(|i| u64_at(b, at + 160 + 8 * i)).collect(),
        objects: (0..nobjs)
            .map(|k| {
                let o = at + 544 + k * OBJ_SIZE;
                Object {
                    bias: u64_at(b, o),
                    lo: u64_at(b, o + 8),
                    hi: u64_at(b, o + 16),
                    path: text_at(b, o + 24, PATH),
                }
            })
            .collect(),
    }
}

/// The stack at slot `i` of the stack table `b`; `None` when the slot is not filled.
pub fn parse_stack(b: &[u8], i: usize) -> Option<Stack> {
    let at = i * STACK_SIZE;
    if u32_at(b, at + 8) != 2 {
        return None;
    }
    let depth = (u32_at(b, at + 12) as usize).min(DEPTH);
    Some(Stack {
        image: u32_at(b, at + 16),
        pcs: (0..depth).map(|k| u64_at(b, at + 24 + 8 * k)).collect(),
    })
}

/// Bytes of the stack table.
pub const STACKS_LEN: usize = STACKS * STACK_SIZE;
/// Bytes of one process's counters.
pub const SITES_LEN: usize = STACKS * SITE_SIZE;

/// The counters of stack `i` in one process's counters `b`.
pub fn parse_counters(b: &[u8], i: usize) -> Counters {
    let at = i * SITE_SIZE;
    Counters {
        allocs: u64_at(b, at),
        bytes: u64_at(b, at + 8),
        frees: u64_at(b, at + 16),
        freed: u64_at(b, at + 24),
        temps: u64_at(b, at + 32),
        mmaps: u64_at(b, at + 40),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_layout_matches_the_c_header() {
        // Printed by a C program from alloc.h's offsetof and sizeof.
        assert_eq!(PROC_SIZE, 18976);
        assert_eq!(STACKS_AT, 611_328);
        assert_eq!(SITES_AT, 9_786_368);
        assert_eq!(SIZE, 76_895_232);
    }

    #[test]
    fn a_fresh_header_has_no_process() {
        let h = parse_header(&header()).expect("magic");
        assert_eq!(h.procs, 0);
        assert!(parse_header(&[0u8; 64]).is_none());
    }

    #[test]
    fn the_launched_process_is_its_last_image_never_a_fork() {
        let p = |index, pid, image, forked| Proc {
            index,
            pid,
            image,
            forked,
            ..Proc::default()
        };
        let procs = [
            p(0, 7, 1, false),
            p(1, 7, 2, false),
            p(2, 7, 2, true),
            p(3, 8, 3, false),
        ];
        assert_eq!(launched(&procs, 7).map(|p| p.index), Some(1));
        assert!(launched(&procs, 9).is_none());
    }
}
