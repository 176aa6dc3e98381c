//! Address spaces over time: which file (and offset in it) an instruction address meant in a
//! process at the moment of a sample.
//!
//! Built from the side-band records kept while sampling (and `/proc/PID/maps` read when
//! attaching), so symbolisation still works after the process exited or exec'd, and a
//! library loaded late (`dlopen`) is found. Rules: the latest mapping of the pid that covers
//! the address and is not newer than the sample wins; an `execve` discards older mappings;
//! a forked child that has not exec'd sees its parent's mappings as they were at the fork.
//! Pure: no I/O except [`parse_proc_maps`]'s input text.

use std::collections::HashMap;

/// An executable mapping appeared (PERF_RECORD_MMAP2, or a line of `/proc/PID/maps`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MapEvent {
    /// Process id.
    pub pid: u32,
    /// When (perf clock, ns; 0 for mappings that existed before sampling began).
    pub time: u64,
    /// First address.
    pub start: u64,
    /// Length in bytes.
    pub len: u64,
    /// File offset of `start`.
    pub pgoff: u64,
    /// File path, or a label such as `[vdso]` or `//anon`.
    pub path: String,
}

/// A process called `execve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecEvent {
    /// Process id.
    pub pid: u32,
    /// When (perf clock, ns).
    pub time: u64,
}

/// A new process was forked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForkEvent {
    /// The child.
    pub pid: u32,
    /// The parent.
    pub ppid: u32,
    /// When (perf clock, ns).
    pub time: u64,
}

/// Where an address points: a module (index into [`AddressSpaces::modules`]) and the file
/// offset inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Location {
    /// Index of the module's path.
    pub module: u32,
    /// Offset in the file.
    pub offset: u64,
}

/// One mapping of a process's address space (see [`AddressSpaces::visible`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Mapped {
    /// First address.
    pub start: u64,
    /// One past the last address.
    pub end: u64,
    /// File offset of `start`.
    pub pgoff: u64,
    /// Index of the module's path in [`AddressSpaces::modules`].
    pub module: u32,
}

#[derive(Debug, Clone)]
struct Entry {
    time: u64,
    start: u64,
    end: u64,
    pgoff: u64,
    module: u32,
}

/// The mappings of every process seen, for [`AddressSpaces::lookup`].
#[derive(Debug, Clone, Default)]
pub struct AddressSpaces {
    modules: Vec<String>,
    module_index: HashMap<String, u32>,
    /// Per pid, in time order.
    entries: HashMap<u32, Vec<Entry>>,
    /// Per pid, exec times in order.
    execs: HashMap<u32, Vec<u64>>,
    /// Per pid: parent and fork time.
    forks: HashMap<u32, (u32, u64)>,
}

/// Fork chains longer than this are not followed (a guard against cycles from pid reuse).
const MAX_FORK_DEPTH: usize = 64;

impl AddressSpaces {
    /// Builds the table from all mapping, exec and fork events (in any order).
    pub fn new(maps: &[MapEvent], execs: &[ExecEvent], forks: &[ForkEvent]) -> AddressSpaces {
        let mut spaces = AddressSpaces::default();
        spaces.extend(maps, execs, forks);
        spaces
    }

    /// Adds more events (in any order): the unwinder keeps one table up to date while the
    /// rings are drained. Module indexes already handed out stay valid.
    pub fn extend(&mut self, maps: &[MapEvent], execs: &[ExecEvent], forks: &[ForkEvent]) {
        for m in maps {
            let module = self.intern(&m.path);
            self.entries.entry(m.pid).or_default().push(Entry {
                time: m.time,
                start: m.start,
                end: m.start.saturating_add(m.len),
                pgoff: m.pgoff,
                module,
            });
        }
        for e in execs {
            self.execs.entry(e.pid).or_default().push(e.time);
        }
        // Stable: records of equal time keep their reading order.
        for list in self.entries.values_mut() {
            list.sort_by_key(|e| e.time);
        }
        for list in self.execs.values_mut() {
            list.sort_unstable();
        }
        for f in forks {
            self.forks.insert(f.pid, (f.ppid, f.time));
        }
    }

    /// Whether anything is known of `pid`'s address space (its own mappings, or a parent's).
    pub fn knows(&self, pid: u32) -> bool {
        self.entries.contains_key(&pid) || self.forks.contains_key(&pid)
    }

    /// When `pid` last exec'd at or before `time`, if it did.
    fn last_exec(&self, pid: u32, time: u64) -> Option<u64> {
        self.execs
            .get(&pid)
            .and_then(|l| l[..l.partition_point(|&t| t <= time)].last().copied())
    }

    /// The mappings `pid` had made by `time`, oldest first.
    fn mapped_by(&self, pid: u32, time: u64) -> Option<&[Entry]> {
        let list = self.entries.get(&pid)?;
        Some(&list[..list.partition_point(|e| e.time <= time)])
    }

    /// Every mapping visible in `pid` at `time`, by start address, without overlaps: the
    /// newest mapping of a range wins, as in [`AddressSpaces::lookup`], and an older one it
    /// overlaps is left out whole (an unwinder needs disjoint modules; a library mapped over
    /// part of another is rare enough to lose the rest of the older one).
    pub fn visible(&self, pid: u32, time: u64) -> Vec<Mapped> {
        let (mut pid, mut time) = (pid, time);
        let mut out: Vec<Mapped> = Vec::new();
        for _ in 0..MAX_FORK_DEPTH {
            let last_exec = self.last_exec(pid, time);
            if let Some(visible) = self.mapped_by(pid, time) {
                let own = visible.iter().rev();
                for e in own.take_while(|e| last_exec.is_none_or(|x| e.time >= x)) {
                    if !out.iter().any(|m| m.start < e.end && e.start < m.end) {
                        out.push(Mapped {
                            start: e.start,
                            end: e.end,
                            pgoff: e.pgoff,
                            module: e.module,
                        });
                    }
                }
            }
            match self.forks.get(&pid) {
                Some(&(ppid, fork_time)) if last_exec.is_none() && fork_time <= time => {
                    (pid, time) = (ppid, fork_time);
                }
                _ => break,
            }
        }
        out.sort_by_key(|m| m.start);
        out
    }

    fn intern(&mut self, path: &str) -> u32 {
        if let Some(&i) = self.module_index.get(path) {
            return i;
        }
        let i = self.modules.len() as u32;
        self.modules.push(path.to_string());
        self.module_index.insert(path.to_string(), i);
        i
    }

    /// Paths (or labels) of all modules, indexed by [`Location::module`].
    pub fn modules(&self) -> &[String] {
        &self.modules
    }

    /// The state of `pid`'s own mappings at `time`: equal keys resolve every address the
    /// same way (used to memoise whole call chains).
    pub fn epoch(&self, pid: u32, time: u64) -> (usize, usize) {
        let maps = self
            .entries
            .get(&pid)
            .map_or(0, |l| l.partition_point(|e| e.time <= time));
        let execs = self
            .execs
            .get(&pid)
            .map_or(0, |l| l.partition_point(|&t| t <= time));
        (maps, execs)
    }

    /// The module and file offset `addr` meant in process `pid` at `time`.
    pub fn lookup(&self, pid: u32, time: u64, addr: u64) -> Option<Location> {
        let (mut pid, mut time) = (pid, time);
        for _ in 0..MAX_FORK_DEPTH {
            let last_exec = self.last_exec(pid, time);
            if let Some(visible) = self.mapped_by(pid, time) {
                let hit = visible
                    .iter()
                    .rev()
                    .take_while(|e| last_exec.is_none_or(|x| e.time >= x))
                    .find(|e| e.start <= addr && addr < e.end);
                if let Some(e) = hit {
                    return Some(Location {
                        module: e.module,
                        offset: addr - e.start + e.pgoff,
                    });
                }
            }
            // Not mapped by the process itself: inherited from the parent, unless an exec
            // since replaced the whole address space.
            match self.forks.get(&pid) {
                Some(&(ppid, fork_time)) if last_exec.is_none() && fork_time <= time => {
                    (pid, time) = (ppid, fork_time);
                }
                _ => return None,
            }
        }
        None
    }
}

/// The executable mappings of `/proc/PID/maps` text as events at time 0 (for attaching to a
/// running process, whose existing mappings produce no records).
pub fn parse_proc_maps(pid: u32, text: &str) -> Vec<MapEvent> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.split_whitespace();
            let range = parts.next()?;
            let perms = parts.next()?;
            let offset = parts.next()?;
            let _dev = parts.next()?;
            let _inode = parts.next()?;
            let path = parts.collect::<Vec<_>>().join(" ");
            if !perms.contains('x') {
                return None;
            }
            let (lo, hi) = range.split_once('-')?;
            let start = u64::from_str_radix(lo, 16).ok()?;
            let end = u64::from_str_radix(hi, 16).ok()?;
            Some(MapEvent {
                pid,
                time: 0,
                start,
                len: end.checked_sub(start)?,
                pgoff: u64::from_str_radix(offset, 16).ok()?,
                path: if path.is_empty() {
                    "//anon".into()
                } else {
                    path
                },
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
