//! The perf events of `locks`: `syscalls:sys_enter_futex` and `sys_exit_futex`, one pair per
//! CPU with `inherit` on a launched command (or per CPU and thread of an attached process),
//! every event of a CPU writing into one ring (`observe::rings`). Entries carry
//! the frame-pointer call chain, the raw record (word, operation), the user registers and
//! the top [`STACK_BYTES`] of the user stack, which `observe::unwind` turns into the whole
//! user stack as the rings are drained (glibc keeps no frame pointers, so the kernel's walk
//! alone loses the caller that took the lock); exits carry the return value. Entry events
//! also ask for the MMAP2/COMM/FORK side-band records that name addresses after the process
//! is gone (kept in `observe::records`' `RawData`). [`Recorded`] is the rings' handler.
//!
//! Ids and field offsets come from tracefs (`/sys/kernel/tracing/events/syscalls/…`), never
//! assumed; perf-event2 excludes the kernel by default, which silences tracepoints, so
//! `.include_kernel()` is set. Only a futex call enters the kernel, so a lock taken without
//! contention is never seen and costs nothing.

use std::collections::HashMap;
use std::io;

use perf_event::Builder;

use super::parse::{self, Call, Layout};
use crate::diagnose::observe::maps::MapEvent;
use crate::diagnose::observe::pump::{Handler, Pump, Settle};
use crate::diagnose::observe::records::{PERF_CONTEXT_USER, RawData, Record, Sample};
use crate::diagnose::observe::rings::{PerCpuRings, stack_sampled, stack_sampled_format};
use crate::diagnose::observe::tracefs::EventFormat;
use crate::diagnose::observe::unwind::{Live, Regs, StackCopy};

/// Bytes of user stack copied with every futex entry: enough for the call site and, in C
/// programs, the stack up to `main` or the thread's start (768 bytes in the `unwind_tree`
/// fixture); deeper stacks are cut and counted. Futex calls can come 100 000 a second, and
/// each byte asked for is copied by the kernel into the ring and by this process out of it:
/// at 8 KiB a semaphore ping-pong lost most of its records.
pub const STACK_BYTES: u32 = 2 << 10;
/// Ring bytes per CPU: ~7 000 entries with their stack copies (every byte asked for takes
/// ring space, deep stack or not), drained every 10 ms: 70 ms of a futex ping-pong.
const RING_BYTES: usize = 16 << 20;

/// One futex entry or exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Kernel time, ns.
    pub time: u64,
    /// Entry or exit.
    pub call: Call,
    /// Index of the chain in [`Recorded::chains`] (entries only).
    pub chain: u32,
}

/// Everything read from the rings.
#[derive(Debug)]
pub struct Recorded {
    /// Entries and exits in reading order (sort by time before pairing).
    pub events: Vec<Event>,
    /// Distinct chains: the kernel's context markers and the unwound user stack.
    pub chains: Vec<Vec<u64>>,
    index: HashMap<Vec<u64>, u32>,
    /// Side-band records (mappings, execs, forks, names).
    pub side: RawData,
    /// Records lost to full rings.
    pub lost: u64,
    /// Unwinds the stack copies of the entries as they are read.
    live: Live,
    /// How the futex samples' raw records read (`None`: no futex samples, the in-kernel
    /// backend).
    layout: Option<Layout>,
    /// The calls read in this drain, unwound once every ring was read.
    drained: Vec<Drained>,
}

/// A futex call read from a ring, waiting for the end of the drain (a mapping its stack
/// needs may sit in another CPU's ring).
#[derive(Debug)]
struct Drained {
    pid: u32,
    tid: u32,
    time: u64,
    chain: Vec<u64>,
    call: Call,
    /// The user registers and stack copy of an entry.
    copy: Option<(Regs, Vec<u8>)>,
}

impl Default for Recorded {
    fn default() -> Self {
        Recorded::with_maps(&[])
    }
}

impl Recorded {
    /// Starts with the mappings of an attached process.
    pub fn with_maps(maps: &[MapEvent]) -> Recorded {
        Recorded::copying(maps, STACK_BYTES)
    }

    /// Starts with the mappings of an attached process, for stack copies of `bytes`.
    pub fn copying(maps: &[MapEvent], bytes: u32) -> Recorded {
        Recorded {
            events: Vec::new(),
            chains: Vec::new(),
            index: HashMap::new(),
            side: RawData::default(),
            lost: 0,
            live: Live::new(maps, bytes),
            layout: None,
            drained: Vec::new(),
        }
    }

    /// Reads futex samples laid out as `layout` says.
    pub fn reading(self, layout: Layout) -> Recorded {
        Recorded {
            layout: Some(layout),
            ..self
        }
    }

    fn intern(&mut self, chain: Vec<u64>) -> u32 {
        if let Some(&i) = self.index.get(&chain) {
            return i;
        }
        let i = self.chains.len() as u32;
        self.index.insert(chain.clone(), i);
        self.chains.push(chain);
        i
    }

    /// Interns the user stack `frames` (leaf first) of `pid`, unwound through `copy` (its
    /// registers and stack bytes) against the side-band records read so far: the in-kernel
    /// backend's stacks take the same repair as the perf rings' copies.
    pub fn stack_chain(
        &mut self,
        pid: u32,
        time: u64,
        frames: &[u64],
        copy: Option<(Regs, &[u8])>,
    ) -> u32 {
        let mut chain = vec![PERF_CONTEXT_USER];
        chain.extend_from_slice(frames);
        self.live.catch_up(&self.side);
        if let Some((regs, stack)) = copy {
            let copy = StackCopy {
                pid,
                time,
                regs,
                stack,
            };
            chain = self.live.chain(&chain, &copy);
        }
        self.side.stops = self.live.stops;
        self.intern(chain)
    }

    /// Keeps futex sample `s` until the end of the drain.
    fn read(&mut self, s: &Sample<'_>) {
        let Some(call) = self.layout.and_then(|l| parse::call(s.raw?, &l)) else {
            return;
        };
        let copy = match (call, s.regs) {
            (Call::Enter { .. }, Some(regs)) if !s.stack.is_empty() => {
                Some((regs, s.stack.to_vec()))
            }
            _ => None,
        };
        self.drained.push(Drained {
            pid: s.pid,
            tid: s.tid,
            time: s.time,
            chain: s.chain.to_vec(),
            call,
            copy,
        });
    }

    /// A drained call, its entry's stack unwound.
    fn push(&mut self, d: Drained) {
        let chain = match (&d.call, &d.copy) {
            (Call::Enter { .. }, Some((regs, stack))) => {
                let copy = StackCopy {
                    pid: d.pid,
                    time: d.time,
                    regs: *regs,
                    stack,
                };
                let unwound = self.live.chain(&d.chain, &copy);
                self.intern(unwound)
            }
            (Call::Enter { .. }, None) => self.intern(d.chain),
            (Call::Exit { .. }, _) => u32::MAX,
        };
        self.events.push(Event {
            pid: d.pid,
            tid: d.tid,
            time: d.time,
            call: d.call,
            chain,
        });
    }
}

impl Handler for Recorded {
    fn record(&mut self, r: Record<'_>) {
        match r {
            Record::Sample(s) => self.read(&s),
            Record::Lost(n) => self.lost += n,
            side => self.side.record(side),
        }
    }

    /// Mappings first, so every stack drained now unwinds through the files it needs.
    fn settle(&mut self, _drain: Settle) {
        self.live.catch_up(&self.side);
        for d in std::mem::take(&mut self.drained) {
            self.push(d);
        }
        self.side.stops = self.live.stops;
    }
}

/// The ids and offsets of the futex tracepoints, or why they cannot be read.
pub fn layout() -> Result<Layout, String> {
    let base = crate::diagnose::observe::tracefs::holding("events/syscalls/sys_enter_futex")
        .ok_or_else(|| crate::diagnose::observe::tracefs::missing("syscalls:sys_enter_futex"))?;
    let read = |event: &str| {
        EventFormat::read(base, "syscalls", event)
            .map_err(|e| format!("{e}; run as root (tracefs is readable by root only)"))
    };
    let (enter, exit) = (read("sys_enter_futex")?, read("sys_exit_futex")?);
    let off = |e: &EventFormat, name: &str| {
        e.offset(name)
            .ok_or_else(|| format!("the futex tracepoint has no field {name}"))
    };
    Ok(Layout {
        enter: enter.id,
        exit: exit.id,
        uaddr: off(&enter, "uaddr")?,
        op: off(&enter, "op")?,
        uaddr2: off(&enter, "uaddr2")?,
        ret: off(&exit, "ret")?,
    })
}

/// The open events and their rings.
pub struct Rings {
    events: PerCpuRings,
    layout: Layout,
}

fn builder(id: u64, tid: i32, cpu: usize, enter: bool, on_exec: bool) -> Builder<'static> {
    let mut b = stack_sampled(id, if enter { STACK_BYTES } else { 8 });
    b.observe_pid(tid)
        .one_cpu(cpu)
        .inherit(true)
        .exclude_callchain_kernel(true)
        .enable_on_exec(on_exec);
    if enter {
        b.mmap(true).mmap2(true).comm(true).task(true);
    }
    b
}

impl Rings {
    /// No events yet.
    pub fn new(layout: Layout) -> Rings {
        Rings {
            events: PerCpuRings::new(stack_sampled_format()),
            layout,
        }
    }

    /// Opens the entry and exit events of `tid` (and, inherited, its later threads and
    /// children) on every CPU of `cpus`.
    pub fn add(&mut self, tid: i32, cpus: &[usize], on_exec: bool) -> io::Result<()> {
        for &cpu in cpus {
            let enter = builder(self.layout.enter, tid, cpu, true, on_exec).build()?;
            let exit = builder(self.layout.exit, tid, cpu, false, on_exec).build()?;
            let fd = self.events.attach(cpu, enter, RING_BYTES)?;
            self.events.redirect(exit, fd)?;
        }
        Ok(())
    }

    /// Enables every event now (attach; a launched command's are enabled by its execve).
    pub fn enable(&mut self) -> io::Result<()> {
        self.events.enable()
    }

    /// The handler of these rings: starts with an attached process's mappings `maps`.
    pub fn recorded(&self, maps: &[MapEvent]) -> Recorded {
        Recorded::with_maps(maps).reading(self.layout)
    }
}

impl Pump<Recorded> for Rings {
    fn pump(&mut self, out: &mut Recorded, last: bool) {
        self.events.pump(out, last);
    }

    fn stop(&mut self) {
        self.events.disable();
    }
}
