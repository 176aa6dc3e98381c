//! The typed record: every record of a perf ring read once, here, into a [`Record`] — a
//! [`Sample`] with the prefix every diagnosis's samples share (who, when) and what the ring's
//! [`Format`] asked for (the event identifier, the instruction pointer, the call chain, the
//! tracepoint's raw record, the user registers and stack copy), a count of lost records, or
//! one of the side-band records (mappings, names and execs, forks, exits, context switches,
//! throttling). The one dispatch on `PERF_RECORD_*` of `diagnose`: handlers match on the
//! enum, never on a record number. Borrows the record's bytes; no allocation, no system call.

use perf_event::SampleFlag;

use super::{
    MISC_COMM_EXEC, MISC_SWITCH_OUT, RECORD_COMM, RECORD_EXIT, RECORD_FORK, RECORD_LOST,
    RECORD_LOST_SAMPLES, RECORD_MMAP2, RECORD_SAMPLE, RECORD_SWITCH, RECORD_THROTTLE, u32_at,
    u64_at,
};
use crate::diagnose::observe::unwind::Regs;

/// What the samples of one ring carry beyond `TID | TIME` (which every event of ours asks
/// for), in the order perf_event_open(2) lays them out. A field the body ends before is
/// absent: `trace`'s entry and exit events share a ring and only exits carry `RAW`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Format {
    /// `IDENTIFIER`: the event's id first (which `calls` probe fired).
    pub identifier: bool,
    /// `IP`.
    pub ip: bool,
    /// `CALLCHAIN`.
    pub callchain: bool,
    /// `RAW`: the tracepoint's record.
    pub raw: bool,
    /// `REGS_USER`: how many registers the mask asks for (0: none).
    pub regs: usize,
    /// `STACK_USER`.
    pub stack: bool,
}

impl Format {
    /// The format of events opened with `flags` and user registers `regs_mask`.
    pub fn of(flags: SampleFlag, regs_mask: u64) -> Format {
        let regs = match flags.contains(SampleFlag::REGS_USER) {
            true => regs_mask.count_ones() as usize,
            false => 0,
        };
        Format {
            identifier: flags.contains(SampleFlag::IDENTIFIER),
            ip: flags.contains(SampleFlag::IP),
            callchain: flags.contains(SampleFlag::CALLCHAIN),
            raw: flags.contains(SampleFlag::RAW),
            regs,
            stack: flags.contains(SampleFlag::STACK_USER),
        }
    }
}

/// A call chain as the kernel wrote it: leaf first, context markers kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Chain<'a>(&'a [u8]);

impl Chain<'_> {
    /// Entries read at most (the kernel's own limit is lower).
    const MAX: usize = 512;

    /// The number of entries.
    pub fn len(&self) -> usize {
        (self.0.len() / 8).min(Chain::MAX)
    }

    /// Whether it has no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        (0..self.len()).filter_map(|i| u64_at(self.0, 8 * i))
    }

    /// The entries, copied.
    pub fn to_vec(&self) -> Vec<u64> {
        self.iter().collect()
    }
}

/// One sample: who and when, and what its ring's [`Format`] asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample<'a> {
    /// The event's id (`IDENTIFIER`).
    pub id: Option<u64>,
    /// The instruction pointer (`IP`).
    pub ip: Option<u64>,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Kernel time, ns (on the clock the event was opened with).
    pub time: u64,
    /// The call chain (empty when not asked for).
    pub chain: Chain<'a>,
    /// The tracepoint's raw record (its first field, `common_type`, is the event id).
    pub raw: Option<&'a [u8]>,
    /// The user registers (`None` for a kernel thread, or when not asked for).
    pub regs: Option<Regs>,
    /// The user stack from `regs.sp` up (empty when not copied).
    pub stack: &'a [u8],
}

/// One record of a ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Record<'a> {
    /// A sample.
    Sample(Sample<'a>),
    /// The kernel dropped this many records (a full ring; `LOST` and `LOST_SAMPLES`).
    Lost(u64),
    /// An executable mapping (`MMAP2`).
    Mmap2 {
        /// Process id.
        pid: u32,
        /// Kernel time, ns.
        time: u64,
        /// Start address.
        start: u64,
        /// Length, bytes.
        len: u64,
        /// File offset of `start`.
        pgoff: u64,
        /// The file's path (without its terminating NULs).
        path: &'a [u8],
    },
    /// A thread's command name (`COMM`); `exec` when an `execve` set it.
    Comm {
        /// Process id.
        pid: u32,
        /// Thread id.
        tid: u32,
        /// The name.
        name: &'a [u8],
        /// Set by an `execve`.
        exec: bool,
        /// Kernel time, ns.
        time: u64,
    },
    /// A new thread or process (`FORK`).
    Fork {
        /// Process id.
        pid: u32,
        /// Parent's process id (equal to `pid` for a new thread).
        ppid: u32,
        /// Thread id.
        tid: u32,
        /// Kernel time, ns.
        time: u64,
    },
    /// A thread ended (`EXIT`).
    Exit {
        /// Process id.
        pid: u32,
        /// Thread id.
        tid: u32,
        /// Kernel time, ns.
        time: u64,
    },
    /// A context switch of the observed thread (`SWITCH`).
    Switch {
        /// A switch-out (else a switch-in).
        out: bool,
        /// Thread id.
        tid: u32,
        /// Kernel time, ns.
        time: u64,
    },
    /// The kernel throttled sampling (`THROTTLE`).
    Throttle,
    /// A record of a kind asked for that could not be read (should not happen).
    Unparsed,
}

impl<'a> Record<'a> {
    /// Reads record `ty` (with header flags `misc`) from its body `b` (after the header), a
    /// sample as `format` says; `None` for the kinds no diagnosis asks for. The side-band
    /// records end in the `sample_id` of events sampling `TID | TIME` only
    /// (`{ u32 pid, tid; u64 time }`, perf_event_open(2)), which is where their time is.
    pub fn parse(ty: u32, misc: u16, b: &'a [u8], format: Format) -> Option<Record<'a>> {
        let parsed = match ty {
            RECORD_SAMPLE => Sample::parse(b, format).map(Record::Sample),
            RECORD_LOST => u64_at(b, 8).map(Record::Lost),
            RECORD_LOST_SAMPLES => u64_at(b, 0).map(Record::Lost),
            RECORD_MMAP2 => mmap2(b),
            RECORD_COMM => comm(b, misc & MISC_COMM_EXEC != 0),
            RECORD_FORK => fork(b),
            RECORD_EXIT => fork(b).map(|f| match f {
                Record::Fork { pid, tid, time, .. } => Record::Exit { pid, tid, time },
                other => other,
            }),
            RECORD_SWITCH => switch(b, misc & MISC_SWITCH_OUT != 0),
            RECORD_THROTTLE => Some(Record::Throttle),
            _ => return None,
        };
        Some(parsed.unwrap_or(Record::Unparsed))
    }
}

/// The time in the `sample_id` trailer of a side-band record: its last 8 bytes.
fn trailer_time(b: &[u8]) -> Option<u64> {
    u64_at(b, b.len().checked_sub(8)?)
}

/// The bytes of a NUL-terminated string, without the NULs (the kernel pads names with
/// NULs to 8 bytes, so the `sample_id` after them is never read as part of one).
fn c_string(b: &[u8]) -> &[u8] {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    &b[..end]
}

/// `pid, tid: u32; addr, len, pgoff: u64; 24 bytes of device or build id; prot, flags:
/// u32; filename[]`.
fn mmap2(b: &[u8]) -> Option<Record<'_>> {
    Some(Record::Mmap2 {
        pid: u32_at(b, 0)?,
        time: trailer_time(b)?,
        start: u64_at(b, 8)?,
        len: u64_at(b, 16)?,
        pgoff: u64_at(b, 24)?,
        path: c_string(b.get(64..)?),
    })
}

/// Nothing but the `sample_id` trailer: `pid, tid: u32; time: u64`.
fn switch(b: &[u8], out: bool) -> Option<Record<'_>> {
    Some(Record::Switch {
        out,
        tid: u32_at(b, b.len().checked_sub(12)?)?,
        time: trailer_time(b)?,
    })
}

/// `pid, tid: u32; comm[]`.
fn comm(b: &[u8], exec: bool) -> Option<Record<'_>> {
    Some(Record::Comm {
        pid: u32_at(b, 0)?,
        tid: u32_at(b, 4)?,
        name: c_string(b.get(8..)?),
        exec,
        time: trailer_time(b)?,
    })
}

/// `pid, ppid, tid, ptid: u32; time: u64` (FORK and EXIT alike).
fn fork(b: &[u8]) -> Option<Record<'_>> {
    Some(Record::Fork {
        pid: u32_at(b, 0)?,
        ppid: u32_at(b, 4)?,
        tid: u32_at(b, 8)?,
        time: u64_at(b, 16)?,
    })
}

/// `pid, tid: u32; time: u64`, read from one fixed-size slice (one bounds check: this is
/// the hot path of a tracer under load).
fn who_when(w: &[u8; 16]) -> Option<(u32, u32, u64)> {
    let (pid, rest) = w.split_at(4);
    let (tid, time) = rest.split_at(4);
    Some((
        u32::from_ne_bytes(pid.try_into().ok()?),
        u32::from_ne_bytes(tid.try_into().ok()?),
        u64::from_ne_bytes(time.try_into().ok()?),
    ))
}

/// The `u64` at `*at` when `wanted` and the body goes on; moves `*at` past it.
fn word(b: &[u8], at: &mut usize, wanted: bool) -> Option<Option<u64>> {
    if !wanted || *at >= b.len() {
        return Some(None);
    }
    let v = u64_at(b, *at)?;
    *at += 8;
    Some(Some(v))
}

impl<'a> Sample<'a> {
    /// Reads a sample body laid out as `format` says; `None` when it ends inside a field.
    pub fn parse(b: &'a [u8], format: Format) -> Option<Sample<'a>> {
        sample(b, format)
    }
}

/// `[identifier] [ip] pid, tid; time; [nr, ips[nr]] [size: u32, raw[size]] [abi, regs[n]]
/// [size, stack[size], dyn_size]`.
fn sample(b: &[u8], f: Format) -> Option<Sample<'_>> {
    let mut at = 0;
    let id = word(b, &mut at, f.identifier)?;
    let ip = word(b, &mut at, f.ip)?;
    let (pid, tid, time) = who_when(b.get(at..at + 16)?.try_into().ok()?)?;
    at += 16;
    let mut chain = Chain::default();
    if let Some(nr) = word(b, &mut at, f.callchain)? {
        let end = at.checked_add(usize::try_from(nr).ok()?.checked_mul(8)?)?;
        chain = Chain(b.get(at..end)?);
        at = end;
    }
    let mut raw = None;
    if f.raw && at < b.len() {
        let end = (at + 4).checked_add(u32_at(b, at)? as usize)?;
        raw = Some(b.get(at + 4..end)?);
        at = end;
    }
    let mut regs = None;
    if word(b, &mut at, f.regs > 0)?.is_some_and(|abi| abi != 0) {
        let mut values = [0u64; 8];
        for v in values.iter_mut().take(f.regs.min(8)) {
            *v = u64_at(b, at)?;
            at += 8;
        }
        regs = Regs::from_sample(&values[..f.regs.min(8)]);
    }
    let mut stack: &[u8] = &[];
    if let Some(size) = word(b, &mut at, f.stack)? {
        let size = usize::try_from(size).ok()?;
        let dumped = b.get(at..at.checked_add(size)?)?;
        // The dump has `size` bytes; `dyn_size` after it (only when `size` is not 0) says
        // how many of them hold the stack.
        let dynamic = u64_at(b, at + size).map_or(size, |d| (d as usize).min(size));
        stack = &dumped[..dynamic];
    }
    Some(Sample {
        id,
        ip,
        pid,
        tid,
        time,
        chain,
        raw,
        regs,
        stack,
    })
}

#[cfg(test)]
mod tests;
