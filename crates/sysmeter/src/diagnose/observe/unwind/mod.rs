//! The one unwinder of the diagnoses: whole user stacks from a sample's user registers
//! (`ip`, `sp`, `bp`) and a copy of the top of its user stack, for code built without frame
//! pointers (distribution binaries, the C library), which the kernel's frame-pointer walk
//! cuts short.
//!
//! Each frame is unwound with the DWARF CFI of the file that holds it (`.eh_frame`, or
//! `.debug_frame` where that is all there is, see [`tables`]) and with the frame pointer
//! where no table covers the address (JIT code, hand-written assembly without CFI) — chosen
//! per frame by framehop, which also caches the rule of every address it met. Tables are
//! read once per file; a framehop module is built once per mapping, and one framehop
//! unwinder per distinct address space (the mappings a process had at the sample's time,
//! from `maps`), so processes that exec, fork or `dlopen` unwind with what they had mapped.
//!
//! Unwinding happens while the rings are drained ([`Live`]), so only the addresses are kept,
//! never the stack copies. Why a walk stopped is kept per sample ([`Stop`]): at the program's
//! entry, at the end of the copy (a bigger copy would have gone on), in code outside any file
//! (JIT code), in a file without CFI for that code, or somewhere the tables led astray.
//! x86-64 only (the register numbers below); elsewhere stacks stay the kernel's walk.

pub mod stops;
pub mod tables;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Instant;

use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{Error as WalkError, Module, Unwinder as _};

use super::maps::{AddressSpaces, MapEvent, Mapped, parse_proc_maps};
use super::records::{PERF_CONTEXT_USER, RawData};
pub use stops::{Stop, Stops};
use tables::{Bytes, FileTables};

/// `bp`, `sp`, `ip` in perf's x86-64 register numbering (PERF_REG_X86_BP = 6, SP = 7,
/// IP = 8): the user registers every stack-copying sample asks for, in this order.
pub const REGS_MASK: u64 = (1 << 6) | (1 << 7) | (1 << 8);

/// Whether stacks are unwound here: the registers above and the unwinder are x86-64's;
/// elsewhere no registers or copies are asked for and stacks stay the kernel's walk.
pub const SUPPORTED: bool = cfg!(target_arch = "x86_64");

/// Frames followed at most (deep recursion is cut here, and said so).
pub const MAX_FRAMES: usize = 512;

/// A read this far above the stack pointer is still the stack (8 MiB: the default stack
/// limit); beyond it a failed read is a wrong frame, not a short copy.
const STACK_REACH: u64 = 8 << 20;

/// The user registers of a sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Regs {
    /// Instruction pointer.
    pub ip: u64,
    /// Stack pointer.
    pub sp: u64,
    /// Frame pointer (`rbp`), whatever the code keeps there.
    pub bp: u64,
}

impl Regs {
    /// The registers of a sample taken with [`REGS_MASK`] (values in `bp`, `sp`, `ip`
    /// order); `None` when the kernel recorded none (a kernel thread).
    pub fn from_sample(values: &[u64]) -> Option<Regs> {
        match values {
            [bp, sp, ip, ..] => Some(Regs {
                ip: *ip,
                sp: *sp,
                bp: *bp,
            }),
            _ => None,
        }
    }
}

/// One sample's user registers and stack copy.
#[derive(Debug, Clone, Copy)]
pub struct StackCopy<'a> {
    /// Process id.
    pub pid: u32,
    /// Kernel time, ns.
    pub time: u64,
    /// The user registers.
    pub regs: Regs,
    /// The stack from `regs.sp` up.
    pub stack: &'a [u8],
}

/// A walk: the sampled instruction, then return addresses; and why it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unwound {
    /// Addresses, leaf first.
    pub frames: Vec<u64>,
    /// Why the walk ended.
    pub stop: Stop,
    /// Bytes of the copy the walk read, from the stack pointer up.
    pub used: u64,
}

/// The tables of the files of one growing [`AddressSpaces`], the framehop modules of their
/// mappings and the framehop unwinder of each address space seen.
pub struct Unwinder {
    files: HashMap<u32, Option<Arc<FileTables>>>,
    modules: HashMap<Mapped, Option<Module<Bytes>>>,
    walkers: HashMap<Vec<Mapped>, UnwinderX86_64<Bytes>>,
    /// The visible mappings per process and mapping epoch (`AddressSpaces::epoch`), until
    /// the address spaces change.
    visible: HashMap<(u32, (usize, usize)), Vec<Mapped>>,
    cache: Box<CacheX86_64>,
}

impl Default for Unwinder {
    fn default() -> Self {
        Unwinder {
            files: HashMap::new(),
            modules: HashMap::new(),
            walkers: HashMap::new(),
            visible: HashMap::new(),
            cache: Box::new(CacheX86_64::new()),
        }
    }
}

/// The stack word at `addr` of a copy starting at `sp`.
fn read_word(stack: &[u8], sp: u64, addr: u64) -> Result<u64, ()> {
    let at = usize::try_from(addr.checked_sub(sp).ok_or(())?).map_err(drop)?;
    let bytes = stack.get(at..at.checked_add(8).ok_or(())?).ok_or(())?;
    Ok(u64::from_le_bytes(bytes.try_into().map_err(drop)?))
}

/// How a walk failed: `None` it reached the outermost frame, `Some(None)` it was cut at
/// [`MAX_FRAMES`], `Some(Some(e))` framehop could not go on.
type Failure = Option<Option<WalkError>>;

/// Walks `copy` with `walker`: the frames, leaf first, how the walk ended, and how many
/// bytes above the stack pointer it read.
fn walk(
    walker: &UnwinderX86_64<Bytes>,
    cache: &mut CacheX86_64,
    copy: &StackCopy<'_>,
) -> (Vec<u64>, Failure, u64) {
    let Regs { ip, sp, bp } = copy.regs;
    let mut used = 0;
    let mut read = |addr: u64| {
        let word = read_word(copy.stack, sp, addr)?;
        used = used.max(addr - sp + 8);
        Ok(word)
    };
    let regs = UnwindRegsX86_64::new(ip, sp, bp);
    let mut frames = Vec::new();
    let mut walk = walker.iter_frames(ip, regs, cache, &mut read);
    let failure = loop {
        if frames.len() >= MAX_FRAMES {
            break Some(None);
        }
        match walk.next() {
            Ok(Some(f)) => frames.push(f.address()),
            Ok(None) => break None,
            Err(e) => break Some(Some(e)),
        }
    };
    (frames, failure, used)
}

impl Unwinder {
    /// Forgets the visible mappings worked out so far: `spaces` gained mappings, execs or
    /// forks (the framehop unwinders, keyed by the mappings themselves, stay valid).
    pub fn spaces_changed(&mut self) {
        self.visible.clear();
    }

    /// The tables of module `module` of `spaces` (read on first use).
    fn file(&mut self, spaces: &AddressSpaces, module: u32) -> Option<Arc<FileTables>> {
        self.files
            .entry(module)
            .or_insert_with(|| {
                let path = spaces.modules().get(module as usize)?;
                let path = super::preloaded::readable(path)?;
                FileTables::read(&path).map(Arc::new)
            })
            .clone()
    }

    /// Builds the framehop unwinder of the address space `visible` unless it exists.
    fn prepare(&mut self, spaces: &AddressSpaces, visible: &[Mapped]) {
        if self.walkers.contains_key(visible) {
            return;
        }
        let mut walker = UnwinderX86_64::new();
        for m in visible {
            if !self.modules.contains_key(m) {
                let name = spaces.modules().get(m.module as usize).cloned();
                let tables = self.file(spaces, m.module);
                let module = tables.zip(name).and_then(|(t, n)| t.module(&n, m));
                self.modules.insert(*m, module);
            }
            if let Some(Some(module)) = self.modules.get(m) {
                walker.add_module(module.clone());
            }
        }
        self.walkers.insert(visible.to_vec(), walker);
    }

    /// Unwinds one stack copy of a process whose mappings `spaces` holds.
    pub fn unwind(&mut self, spaces: &AddressSpaces, copy: &StackCopy<'_>) -> Unwound {
        let epoch = (copy.pid, spaces.epoch(copy.pid, copy.time));
        let visible = self
            .visible
            .entry(epoch)
            .or_insert_with(|| spaces.visible(copy.pid, copy.time))
            .clone();
        let sp = copy.regs.sp;
        self.prepare(spaces, &visible);
        let (frames, failed, used) = match self.walkers.get(&visible) {
            Some(walker) => walk(walker, &mut self.cache, copy),
            None => (Vec::new(), None, 0),
        };
        let stop = match failed {
            None => Stop::End,
            Some(None) => Stop::Deep,
            Some(Some(WalkError::CouldNotReadStack(at)))
                if at >= sp.saturating_add(copy.stack.len() as u64)
                    && at < sp.saturating_add(STACK_REACH) =>
            {
                Stop::CopyEnded
            }
            Some(Some(_)) => self.stopped_at(spaces, &visible, &frames),
        };
        Unwound { frames, stop, used }
    }

    /// Why a walk that failed stopped where it did: the code of its last frame.
    fn stopped_at(&mut self, spaces: &AddressSpaces, visible: &[Mapped], frames: &[u64]) -> Stop {
        let Some(&last) = frames.last() else {
            return Stop::Lost;
        };
        // A return address points after its call: look inside the call.
        let addr = if frames.len() > 1 { last - 1 } else { last };
        let Some(m) = visible.iter().find(|m| m.start <= addr && addr < m.end) else {
            return Stop::Anonymous;
        };
        let offset = addr - m.start + m.pgoff;
        match self.file(spaces, m.module) {
            None => Stop::Anonymous,
            Some(t) if t.function_at(offset).is_none() => Stop::NoCfi,
            Some(_) => Stop::Lost,
        }
    }
}

/// An unwinder kept up to date with the side-band records of a session while its rings are
/// drained: every stack copy is unwound against the mappings known when it is read.
pub struct Live {
    spaces: AddressSpaces,
    /// Processes whose `/proc/PID/maps` was read because no record had named their mappings.
    read_procs: HashSet<u32>,
    /// Mapping, exec and fork records of the side band already added to `spaces`.
    seen: (usize, usize, usize),
    unwinder: Unwinder,
    /// How the walks ended so far.
    pub stops: Stops,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live").field("stops", &self.stops).finish()
    }
}

impl Live {
    /// An unwinder knowing `maps_at_start` (an attached process's mappings) that copies
    /// `copy_bytes` of stack per sample.
    pub fn new(maps_at_start: &[MapEvent], copy_bytes: u32) -> Live {
        Live {
            spaces: AddressSpaces::new(maps_at_start, &[], &[]),
            read_procs: HashSet::new(),
            seen: (0, 0, 0),
            unwinder: Unwinder::default(),
            stops: Stops {
                copy_bytes,
                ..Stops::default()
            },
        }
    }

    /// Adds the side-band records of `side` not seen yet.
    pub fn catch_up(&mut self, side: &RawData) {
        let (m, e, f) = self.seen;
        let (maps, execs, forks) = (&side.maps, &side.execs, &side.forks);
        if (maps.len(), execs.len(), forks.len()) != (m, e, f) {
            let (maps, execs, forks) = (
                maps.get(m..).unwrap_or_default(),
                execs.get(e..).unwrap_or_default(),
                forks.get(f..).unwrap_or_default(),
            );
            self.spaces.extend(maps, execs, forks);
            self.unwinder.spaces_changed();
            self.seen = (side.maps.len(), side.execs.len(), side.forks.len());
        }
    }

    /// Reads the mappings of `pid` from `/proc` once when no record named them: a process
    /// attached to mapped its files before the events existed. (For a launched command they
    /// are older than its `execve`, so they never hide what the records say.)
    fn know(&mut self, pid: u32) {
        if self.spaces.knows(pid) || !self.read_procs.insert(pid) {
            return;
        }
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/maps")) {
            self.spaces.extend(&parse_proc_maps(pid, &text), &[], &[]);
            self.unwinder.spaces_changed();
        }
    }

    /// Unwinds `copy` and counts how it stopped.
    pub fn unwind(&mut self, copy: &StackCopy<'_>) -> Unwound {
        let started = Instant::now();
        self.know(copy.pid);
        let unwound = self.unwinder.unwind(&self.spaces, copy);
        self.stops.add(unwound.stop);
        self.stops.deepest = self.stops.deepest.max(unwound.used);
        let ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.stops.unwind_ns = self.stops.unwind_ns.saturating_add(ns);
        unwound
    }

    /// `chain` (a kernel call chain with context markers) with its user part replaced by
    /// the unwound stack of `copy`; `chain` as it is when nothing could be unwound.
    pub fn chain(&mut self, chain: &[u64], copy: &StackCopy<'_>) -> Vec<u64> {
        if !SUPPORTED {
            return chain.to_vec();
        }
        let unwound = self.unwind(copy);
        if unwound.frames.is_empty() {
            return chain.to_vec();
        }
        let kernel = chain.iter().position(|&e| e == PERF_CONTEXT_USER);
        let mut out = chain[..kernel.unwrap_or(chain.len())].to_vec();
        out.push(PERF_CONTEXT_USER);
        out.extend(unwound.frames);
        out
    }
}

#[cfg(test)]
mod tests;
