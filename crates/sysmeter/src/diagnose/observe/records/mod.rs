//! The records of perf rings: their type numbers (`PERF_RECORD_*`, defined here only), the
//! native-endian readers of their bytes, every record read once (in `typed`) into a
//! [`Record`], and [`RawData`], the handler that keeps them as plain data: samples (pid,
//! tid, time, an interned call chain) and the records (MMAP2, COMM with the exec flag,
//! FORK, LOST, THROTTLE) needed to name addresses after the process is gone. Samples that
//! carry user registers and a stack copy wait in [`RawData::pending`] until the drain of
//! every ring is done, then `unwind` gives them their whole user stacks. Also splits a raw
//! call chain into user and kernel frames. No system calls here.

mod typed;

pub use typed::{Chain, Format, Record, Sample};

use std::collections::HashMap;

use super::maps::{ExecEvent, ForkEvent, MapEvent};
use super::pump::Handler;
use super::unwind::{Live, Regs, StackCopy, Stops};

/// Call-chain entries at or above this are context markers (`PERF_CONTEXT_*`), not
/// addresses.
pub const PERF_CONTEXT_MAX: u64 = (-4095i64) as u64;
/// Marker: the entries that follow are kernel addresses.
pub const PERF_CONTEXT_KERNEL: u64 = (-128i64) as u64;
/// Marker: the entries that follow are user addresses.
pub const PERF_CONTEXT_USER: u64 = (-512i64) as u64;

/// `PERF_RECORD_LOST`: the kernel dropped records (count at byte 8 of the body).
pub const RECORD_LOST: u32 = 2;
/// `PERF_RECORD_COMM`.
pub const RECORD_COMM: u32 = 3;
/// `PERF_RECORD_THROTTLE`.
pub const RECORD_THROTTLE: u32 = 5;
/// `PERF_RECORD_EXIT`.
pub const RECORD_EXIT: u32 = 4;
/// `PERF_RECORD_FORK`.
pub const RECORD_FORK: u32 = 7;
/// `PERF_RECORD_SAMPLE`.
pub const RECORD_SAMPLE: u32 = 9;
/// `PERF_RECORD_MMAP2`.
pub const RECORD_MMAP2: u32 = 10;
/// `PERF_RECORD_LOST_SAMPLES`.
pub const RECORD_LOST_SAMPLES: u32 = 13;
/// `PERF_RECORD_SWITCH`.
pub const RECORD_SWITCH: u32 = 14;
/// `PERF_RECORD_MISC_COMM_EXEC`: this COMM record comes from an `execve`.
pub const MISC_COMM_EXEC: u16 = 1 << 13;
/// `PERF_RECORD_MISC_SWITCH_OUT`: this SWITCH record is a switch-out.
pub const MISC_SWITCH_OUT: u16 = 1 << 13;

/// The native-endian `u16` at byte `at` of a record body.
pub fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

/// The native-endian `u32` at byte `at` of a record body.
pub fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// The native-endian `u64` at byte `at` of a record body.
pub fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(
        b.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

/// One sample: who, when, and which call chain (an index into [`RawData::chains`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawSample {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Kernel timestamp (perf clock), ns.
    pub time: u64,
    /// Index of the call chain (leaf first, with context markers) in [`RawData::chains`].
    pub chain: u32,
    /// What the sample stands for: 1 for a CPU-clock sample, the blocked time in ns for an
    /// off-CPU one, 0 for a stack that is only named (a waker's).
    pub weight: u64,
}

/// A sample read with its user registers and stack copy, to be unwound once every ring of
/// the drain has been read (a mapping it needs may sit in another CPU's ring).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pending {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Kernel time, ns.
    pub time: u64,
    /// The kernel's call chain (its user part is replaced by the unwound stack).
    pub chain: Vec<u64>,
    /// User registers.
    pub regs: Regs,
    /// The stack copy, from `regs.sp` up.
    pub stack: Vec<u8>,
}

/// Everything read from the ring buffers.
#[derive(Debug, Default, Clone)]
pub struct RawData {
    /// Distinct call chains, leaf first, context markers kept.
    pub chains: Vec<Vec<u64>>,
    chain_index: HashMap<Vec<u64>, u32>,
    /// Samples in reading order (per CPU in time order, not merged).
    pub samples: Vec<RawSample>,
    /// Executable mappings created while sampling.
    pub maps: Vec<MapEvent>,
    /// `execve`s (COMM records with the exec flag).
    pub execs: Vec<ExecEvent>,
    /// New processes (not threads).
    pub forks: Vec<ForkEvent>,
    /// Last command name seen per pid.
    pub comms: HashMap<u32, String>,
    /// Last name seen per thread (a thread renamed with `prctl(PR_SET_NAME)`).
    pub thread_names: HashMap<u32, String>,
    /// Samples the kernel dropped because a ring buffer was full.
    pub lost: u64,
    /// Times the kernel throttled sampling (interrupts took too long at this frequency).
    pub throttles: u64,
    /// Records that could not be parsed (should stay 0).
    pub unparsed: u64,
    /// Samples with a stack copy not unwound yet ([`RawData::unwind_pending`]).
    pub pending: Vec<Pending>,
    /// How the unwound stacks ended (all zero when no stack was copied).
    pub stops: Stops,
}

impl RawData {
    /// The name of thread `tid` of process `pid`: its own, else its process's, else none.
    pub fn thread_name(&self, pid: u32, tid: u32) -> String {
        let name = self.thread_names.get(&tid).or_else(|| self.comms.get(&pid));
        name.cloned().unwrap_or_default()
    }

    /// Adds a sample with call chain `chain` (interned).
    pub fn push_sample(&mut self, pid: u32, tid: u32, time: u64, chain: &[u64]) {
        self.push_weighted(pid, tid, time, chain, 1);
    }

    /// Adds a sample of weight `weight` with call chain `chain` (interned).
    pub fn push_weighted(&mut self, pid: u32, tid: u32, time: u64, chain: &[u64], weight: u64) {
        let next = self.chains.len() as u32;
        let index = match self.chain_index.get(chain) {
            Some(&i) => i,
            None => {
                self.chain_index.insert(chain.to_vec(), next);
                self.chains.push(chain.to_vec());
                next
            }
        };
        self.samples.push(RawSample {
            pid,
            tid,
            time,
            chain: index,
            weight,
        });
    }

    /// Unwinds the samples read with a stack copy (after a drain of every ring) and adds
    /// them with their whole user stacks.
    pub fn unwind_pending(&mut self, live: &mut Live) {
        live.catch_up(self);
        for p in std::mem::take(&mut self.pending) {
            let copy = StackCopy {
                pid: p.pid,
                time: p.time,
                regs: p.regs,
                stack: &p.stack,
            };
            let chain = live.chain(&p.chain, &copy);
            self.push_sample(p.pid, p.tid, p.time, &chain);
        }
        self.stops = live.stops;
    }
}

/// The samples (unwound at the end of the drain when they carry a stack copy) and the
/// side-band records, as `profile` and the in-kernel backends keep them.
impl Handler for RawData {
    fn record(&mut self, r: Record<'_>) {
        match r {
            Record::Sample(s) => self.sample(s),
            Record::Mmap2 {
                pid,
                time,
                start,
                len,
                pgoff,
                path,
            } => self.maps.push(MapEvent {
                pid,
                time,
                start,
                len,
                pgoff,
                path: String::from_utf8_lossy(path).into_owned(),
            }),
            Record::Comm {
                pid,
                tid,
                name,
                exec,
                time,
            } => {
                if exec && pid == tid {
                    self.execs.push(ExecEvent { pid, time });
                }
                let name = String::from_utf8_lossy(name).into_owned();
                self.thread_names.insert(tid, name.clone());
                if pid == tid {
                    self.comms.insert(pid, name);
                }
            }
            // A FORK with pid == ppid is a new thread of the same process: nothing to track.
            Record::Fork {
                pid, ppid, time, ..
            } if pid != ppid => self.forks.push(ForkEvent { pid, ppid, time }),
            Record::Lost(n) => self.lost += n,
            Record::Throttle => self.throttles += 1,
            Record::Unparsed => self.unparsed += 1,
            _ => {}
        }
    }
}

impl RawData {
    /// A sample: waiting for its unwinding when it carries a stack copy, else kept as it is
    /// (its instruction pointer standing for a missing call chain).
    fn sample(&mut self, s: Sample<'_>) {
        let mut chain = s.chain.to_vec();
        if chain.is_empty() {
            chain.push(s.ip.unwrap_or(0));
        }
        match s.regs.filter(|_| !s.stack.is_empty()) {
            Some(regs) => self.pending.push(Pending {
                pid: s.pid,
                tid: s.tid,
                time: s.time,
                chain,
                regs,
                stack: s.stack.to_vec(),
            }),
            None => self.push_sample(s.pid, s.tid, s.time, &chain),
        }
    }
}

/// Splits a raw call chain into frames: `(address, is_kernel)`, leaf first, markers
/// removed. Entries before any marker count as user addresses when the sample has no
/// markers at all (a plain IP).
pub fn frames(chain: &[u64]) -> Vec<(u64, bool)> {
    let mut kernel = false;
    let mut out = Vec::with_capacity(chain.len());
    for &entry in chain {
        if entry >= PERF_CONTEXT_MAX {
            kernel = entry == PERF_CONTEXT_KERNEL;
            if entry != PERF_CONTEXT_KERNEL && entry != PERF_CONTEXT_USER {
                // Guest or unknown contexts: neither our kernel nor our process.
                kernel = false;
            }
            continue;
        }
        out.push((entry, kernel));
    }
    out
}

#[cfg(test)]
mod tests;
