//! The uprobe backend's maps made the preload backend's [`Outcome`]: one process record
//! (its loaded objects from the last `/proc/PID/maps` read while it ran, each with the load
//! bias `names` places addresses by), the counters per stack, and each stack's return
//! addresses. A stack is walked from its snapshot with the floor's unwinder (DWARF CFI,
//! frame pointers where no table covers the code), which finds the callers that code
//! without frame pointers hides from the kernel's walk; where the snapshot walks no further
//! than one frame, the kernel's walk is kept. Stack id -1 (no room in the stack map) becomes
//! stack 0, the lump site. Pure apart from reading ELF files.

use std::collections::HashMap;
use std::path::Path;

use super::maps::Maps;
use crate::diagnose::alloc::Outcome;
use crate::diagnose::alloc::region::{DEPTH, Header, Object, Proc, Stack};
use crate::diagnose::observe::elf;
use crate::diagnose::observe::maps::{AddressSpaces, MapEvent, parse_proc_maps};
use crate::diagnose::observe::unwind::{StackCopy, Unwinder};

/// The code mappings of `events` as objects with their load bias (runtime address less the
/// address the file states), for files whose ELF layout reads.
pub fn objects(events: &[MapEvent]) -> Vec<Object> {
    let mut layouts = HashMap::new();
    events
        .iter()
        .filter(|m| m.path.starts_with('/'))
        .filter_map(|m| {
            let layout = layouts
                .entry(m.path.clone())
                .or_insert_with(|| elf::read_layout(Path::new(&m.path)))
                .as_ref()?;
            let svma = layout.svma_of_offset(m.pgoff)?;
            Some(Object {
                bias: m.start.wrapping_sub(svma),
                lo: m.start,
                hi: m.start + m.len,
                path: m.path.clone(),
            })
        })
        .collect()
}

/// The return addresses of every stack id with counters, by the index `Outcome` keeps them
/// at (id + 1).
fn walk_all(maps: &Maps, pid: u32, events: &[MapEvent]) -> HashMap<usize, Stack> {
    let spaces = AddressSpaces::new(events, &[], &[]);
    let mut unwinder = Unwinder::default();
    let mut out = HashMap::new();
    for &(id, _) in &maps.sites {
        if id < 0 {
            continue;
        }
        let kernel = maps.walks.get(&id).cloned().unwrap_or_default();
        let dwarf = maps.snapshots.get(&id).map(|s| {
            let copy = StackCopy {
                pid,
                time: 0,
                regs: s.regs(s.first),
                stack: &s.stack,
            };
            unwinder.unwind(&spaces, &copy).frames
        });
        let mut pcs = match dwarf {
            Some(d) if d.len() > 1 || kernel.len() <= 1 => d,
            _ => kernel,
        };
        pcs.truncate(DEPTH);
        out.insert(id as usize + 1, Stack { image: 0, pcs });
    }
    out
}

/// The outcome of a uprobe session on `pid`: `maps_text` its last `/proc/PID/maps`, `exe`
/// its program (the one object known when no mapping was read).
pub fn outcome(maps: &Maps, pid: u32, maps_text: Option<&str>, exe: Option<&Path>) -> Outcome {
    let events = maps_text
        .map(|t| parse_proc_maps(pid, t))
        .unwrap_or_default();
    let mut objs = objects(&events);
    if objs.is_empty() {
        // Exited before its mappings were read: a static program at its stated addresses.
        if let Some(layout) = exe.and_then(elf::read_layout) {
            let path = exe.map(|p| p.display().to_string()).unwrap_or_default();
            objs.extend(layout.loads.iter().map(|&(va, len, _)| Object {
                bias: 0,
                lo: va,
                hi: va + len,
                path: path.clone(),
            }));
        }
    }
    let s = &maps.stats;
    let exe_name = objs.first().map(|o| o.path.clone()).unwrap_or_default();
    let proc = Proc {
        pid,
        heap: s.heap,
        exe: exe_name,
        hist: s.hist.clone(),
        objects: objs,
        ..Proc::default()
    };
    let stacks = walk_all(maps, pid, &events);
    let counters = maps
        .sites
        .iter()
        .map(|&(id, c)| (0, (id.max(-1) + 1) as usize, c))
        .collect();
    Outcome {
        header: Header {
            procs: 1,
            stacks: stacks.len() as u32,
            lost_stacks: s.lost_stacks as u32,
            ..Header::default()
        },
        procs: vec![proc],
        stacks,
        counters,
        pid,
        ..Outcome::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::alloc::region::{Counters, Heap};
    use crate::diagnose::alloc::uprobe::maps::Stats;

    #[test]
    fn stack_ids_become_indexes_and_the_kernel_walk_stands_in_for_a_missing_snapshot() {
        let c = Counters {
            allocs: 3,
            bytes: 30,
            ..Counters::default()
        };
        let maps = Maps {
            stats: Stats {
                heap: Heap {
                    allocs: 4,
                    peak: 40,
                    ..Heap::default()
                },
                ..Stats::default()
            },
            sites: vec![(5, c), (-1, c)],
            walks: HashMap::from([(5, vec![0x401234, 0x401100])]),
            snapshots: HashMap::new(),
        };
        let out = outcome(&maps, 42, None, None);
        assert_eq!(out.stacks[&6].pcs, vec![0x401234, 0x401100]);
        let idx: Vec<usize> = out.counters.iter().map(|c| c.1).collect();
        assert_eq!(idx, vec![6, 0]);
        assert_eq!((out.procs[0].heap.allocs, out.procs[0].heap.peak), (4, 40));
    }

    #[test]
    fn a_mapping_gets_the_bias_of_its_segment() {
        let Some(libc) = elf::own_libc() else {
            return;
        };
        let text = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let events = parse_proc_maps(std::process::id(), &text);
        let objs = objects(&events);
        let o = objs
            .iter()
            .find(|o| Path::new(&o.path) == libc)
            .expect("libc's code is mapped");
        // A shared library states addresses from 0: its bias is where it was loaded.
        assert!(o.bias > 0 && o.bias <= o.lo, "{o:?}");
    }
}
