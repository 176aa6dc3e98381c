//! From raw samples to symbolised [`Stacks`]: every call-chain address is placed in its
//! module (by the process's mappings at the sample's time, see `maps`), named by
//! `symbolize` in one batch per module, and counted per distinct stack.
//!
//! Return addresses (every frame but the sampled instruction itself) are looked up one byte
//! earlier, inside the call instruction, so a call that is the last instruction of a
//! function is not charged to the next function. Also finds hot leaf functions that set up
//! no frame pointer (x86-64 prologue check): the kernel's frame-pointer walk then skips
//! their caller, which a reader must know.

use std::collections::{HashMap, HashSet};

use super::stacks::{Frame, Stacks};
use crate::diagnose::observe::maps::{AddressSpaces, Location, MapEvent};
use crate::diagnose::observe::records::{RawData, RawSample, frames};
use crate::diagnose::observe::scan::pushes_frame_pointer;
use crate::diagnose::observe::symbolize::{Resolved, Symbols, read_bytes, short_module};

/// The symbolised profile and facts about its quality.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Stacks with sample counts.
    pub stacks: Stacks,
    /// Samples whose leaf could not be named.
    pub unknown_leaf: u64,
    /// Samples whose leaf is in the kernel.
    pub kernel_leaf: u64,
    /// Hot leaf functions (≥ 1% self) that set up no frame pointer, with their self samples:
    /// their immediate caller is missing from those stacks.
    pub frameless: Vec<(u32, u64)>,
    /// Distinct processes sampled.
    pub processes: usize,
    /// Distinct threads sampled.
    pub threads: usize,
}

/// A call-chain entry before naming.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Place {
    User(Option<Location>),
    Kernel(u64),
}

/// Symbolises `raw` (with `maps_at_start`, the mappings of an attached process).
pub fn analyse(raw: &RawData, maps_at_start: &[MapEvent]) -> Analysis {
    analyse_each(raw, maps_at_start).0
}

/// Every sample of a [`RawData`], in order, as symbolised stacks.
#[derive(Debug, Clone, Default)]
pub struct EachSample {
    /// Frame ids, outermost first, per sample.
    pub stacks: Vec<Vec<u32>>,
    /// Where each of those frames is in its module (`None`: a kernel or unmapped frame).
    pub places: Vec<Vec<Option<Location>>>,
    /// The module paths a [`Location::module`] indexes.
    pub modules: Vec<String>,
}

/// [`analyse`], and the symbolised stack (frame ids, outermost first, with where each
/// frame is in its module) of every sample of `raw`, in order. Samples of weight 0 are named but not counted.
pub fn analyse_each(raw: &RawData, maps_at_start: &[MapEvent]) -> (Analysis, EachSample) {
    analyse_each_with(raw, maps_at_start, &Symbols::new())
}

/// [`analyse_each`] with `symbols` kept by the caller: a live view names each second's new
/// samples, and a symbolizer kept between seconds reads each file's symbols once.
pub fn analyse_each_with(
    raw: &RawData,
    maps_at_start: &[MapEvent],
    symbols: &Symbols,
) -> (Analysis, EachSample) {
    let all_maps: Vec<MapEvent> = maps_at_start.iter().chain(&raw.maps).cloned().collect();
    let spaces = AddressSpaces::new(&all_maps, &raw.execs, &raw.forks);
    let (keys, groups) = group_samples(raw, &spaces);
    let names = Names::resolve(&groups, &spaces, symbols);
    let distinct =
        |f: fn(&RawSample) -> u32| raw.samples.iter().map(f).collect::<HashSet<_>>().len();
    let mut analysis = Analysis {
        processes: distinct(|s| s.pid),
        threads: distinct(|s| s.tid),
        ..Analysis::default()
    };
    let mut leaf_starts: HashMap<u32, (u32, u64)> = HashMap::new();
    let mut ids_of: HashMap<&[Place], Vec<u32>> = HashMap::new();
    for (places, count) in &groups {
        let mut ids = Vec::with_capacity(places.len());
        for (i, place) in places.iter().enumerate() {
            let frame = names.frame(place, &spaces);
            if i == 0 {
                if !frame.known {
                    analysis.unknown_leaf += count;
                }
                if frame.kernel {
                    analysis.kernel_leaf += count;
                }
            }
            let id = analysis.stacks.intern(frame);
            if let (0, Some(start)) = (i, names.function_start(place)) {
                leaf_starts.entry(id).or_insert(start);
            }
            ids.push(id);
        }
        ids.reverse();
        analysis.stacks.add(ids.clone(), *count);
        ids_of.insert(places.as_slice(), ids);
    }
    analysis.frameless = frameless_leaves(&analysis.stacks, &leaf_starts, &spaces);
    let mut each = EachSample {
        modules: spaces.modules().to_vec(),
        ..EachSample::default()
    };
    for s in &raw.samples {
        let key = (s.pid, spaces.epoch(s.pid, s.time), s.chain);
        let places = keys.get(&key).map_or(&[][..], Vec::as_slice);
        let ids = ids_of.get(places).cloned().unwrap_or_default();
        let located = places.iter().rev().map(|p| match *p {
            Place::User(loc) => loc,
            Place::Kernel(_) => None,
        });
        each.places.push(located.take(ids.len()).collect());
        each.stacks.push(ids);
    }
    (analysis, each)
}

/// What decides how a sample's addresses are named: pid, mapping epoch, call chain.
type GroupKey = (u32, (usize, usize), u32);

/// The places of each group key.
type PlacesOf = HashMap<GroupKey, Vec<Place>>;

/// Samples grouped by what decides their names (pid, mapping epoch, chain), each resolved
/// to places, leaf first: the places of each key, and the weight per distinct places.
fn group_samples(raw: &RawData, spaces: &AddressSpaces) -> (PlacesOf, Vec<(Vec<Place>, u64)>) {
    // Per key: weight and the time of the first sample (any time of the epoch resolves the
    // same way).
    let mut keys: HashMap<GroupKey, (u64, u64)> = HashMap::new();
    for s in &raw.samples {
        let key = (s.pid, spaces.epoch(s.pid, s.time), s.chain);
        keys.entry(key).or_insert((0, s.time)).0 += s.weight;
    }
    let mut places_of = HashMap::with_capacity(keys.len());
    let mut groups: HashMap<Vec<Place>, u64> = HashMap::new();
    for ((pid, epoch, chain), (count, time)) in keys {
        let places: Vec<Place> = frames(&raw.chains[chain as usize])
            .into_iter()
            .enumerate()
            .map(|(i, (addr, kernel))| {
                // Return addresses point after the call: look inside the call instead.
                let addr = if i == 0 { addr } else { addr.saturating_sub(1) };
                if kernel {
                    Place::Kernel(addr)
                } else {
                    Place::User(spaces.lookup(pid, time, addr))
                }
            })
            .collect();
        if !places.is_empty() {
            *groups.entry(places.clone()).or_default() += count;
            places_of.insert((pid, epoch, chain), places);
        }
    }
    (places_of, groups.into_iter().collect())
}

/// Names of every place in the groups, looked up in batches.
struct Names {
    user: HashMap<Location, Option<Resolved>>,
    kernel: HashMap<u64, Option<Resolved>>,
}

impl Names {
    fn resolve(groups: &[(Vec<Place>, u64)], spaces: &AddressSpaces, symbols: &Symbols) -> Names {
        let mut per_module: HashMap<u32, HashSet<u64>> = HashMap::new();
        let mut kernel_addrs: HashSet<u64> = HashSet::new();
        for place in groups.iter().flat_map(|(p, _)| p) {
            match *place {
                Place::User(Some(loc)) => {
                    per_module.entry(loc.module).or_default().insert(loc.offset);
                }
                Place::Kernel(a) => {
                    kernel_addrs.insert(a);
                }
                Place::User(None) => {}
            }
        }
        let mut user = HashMap::new();
        for (module, offsets) in per_module {
            let offsets: Vec<u64> = offsets.into_iter().collect();
            let path = &spaces.modules()[module as usize];
            for (offset, r) in offsets.iter().zip(symbols.module(path, &offsets)) {
                user.insert(
                    Location {
                        module,
                        offset: *offset,
                    },
                    r,
                );
            }
        }
        let addrs: Vec<u64> = kernel_addrs.into_iter().collect();
        let kernel = if addrs.is_empty() {
            HashMap::new()
        } else {
            addrs.iter().copied().zip(symbols.kernel(&addrs)).collect()
        };
        Names { user, kernel }
    }

    fn frame(&self, place: &Place, spaces: &AddressSpaces) -> Frame {
        match *place {
            Place::Kernel(a) => match self.kernel.get(&a).and_then(Option::as_ref) {
                Some(r) => named(&r.name, "[kernel]", true),
                None => unknown("[kernel]", true),
            },
            Place::User(None) => unknown("", false),
            Place::User(Some(loc)) => {
                let module = short_module(&spaces.modules()[loc.module as usize]);
                match self.user.get(&loc).and_then(Option::as_ref) {
                    // Named by its unwind-table entry: one row per function, still counted
                    // as code without symbols.
                    Some(r) if r.from_cfi => Frame {
                        known: false,
                        ..named(&r.name, module, false)
                    },
                    Some(r) => named(&r.name, module, false),
                    None => unknown(module, false),
                }
            }
        }
    }

    /// Module and file offset of the first byte of the function at a user place.
    fn function_start(&self, place: &Place) -> Option<(u32, u64)> {
        let Place::User(Some(loc)) = place else {
            return None;
        };
        let r = self.user.get(loc)?.as_ref()?;
        Some((loc.module, loc.offset.checked_sub(r.offset_in_function)?))
    }
}

fn named(name: &str, module: &str, kernel: bool) -> Frame {
    Frame {
        name: name.to_string(),
        module: module.to_string(),
        kernel,
        known: true,
    }
}

fn unknown(module: &str, kernel: bool) -> Frame {
    let name = match module {
        "" => "[unknown]".to_string(),
        m if m.starts_with('[') => m.to_string(),
        m => format!("[unknown in {m}]"),
    };
    Frame {
        name,
        module: module.to_string(),
        kernel,
        known: false,
    }
}

/// Hot leaves (≥ 1% of samples as self) whose first instructions do not push the frame
/// pointer. Only x86-64 prologues are recognised; elsewhere the list stays empty.
fn frameless_leaves(
    stacks: &Stacks,
    starts: &HashMap<u32, (u32, u64)>,
    spaces: &AddressSpaces,
) -> Vec<(u32, u64)> {
    if !cfg!(target_arch = "x86_64") {
        return Vec::new();
    }
    let threshold = (stacks.total() / 100).max(1);
    stacks
        .flat()
        .into_iter()
        .filter(|row| row.self_samples >= threshold)
        .filter_map(|row| {
            let &(module, start) = starts.get(&row.frame)?;
            let bytes = read_bytes(&spaces.modules()[module as usize], start, 5)?;
            (!pushes_frame_pointer(&bytes)).then_some((row.frame, row.self_samples))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_frames_keep_their_module() {
        assert_eq!(unknown("libc.so.6", false).name, "[unknown in libc.so.6]");
        assert_eq!(unknown("[vdso]", false).name, "[vdso]");
        assert_eq!(unknown("", false).name, "[unknown]");
    }

    #[test]
    fn samples_become_named_stacks_even_without_any_mapping() {
        let mut raw = RawData::default();
        raw.push_sample(1, 1, 5, &[0x1000, 0x2000]);
        raw.push_sample(1, 1, 6, &[0x1000, 0x2000]);
        let a = analyse(&raw, &[]);
        assert_eq!(a.stacks.total(), 2);
        assert_eq!(a.unknown_leaf, 2);
        assert_eq!(a.stacks.folded(), "[unknown];[unknown] 2\n");
        assert_eq!((a.processes, a.threads), (1, 1));
    }
}
