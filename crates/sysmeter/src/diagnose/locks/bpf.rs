//! The in-kernel backend of `locks` (`--backend bpf`, docs/bpf.md): the programs of
//! `crates/sysmeter/bpf/locks.bpf.c` on `syscalls:sys_{enter,exit}_futex` aggregate each
//! waiting futex call per (word, operation, user stack, return value, waker) in the kernel,
//! filtered to the target's processes (children followed through `sched_process_fork`), so
//! no record per call crosses to user space. A software dummy event per CPU (or per thread
//! of an attached process) still brings the side-band records (mappings, execs, names) that
//! unwinding and naming need. At the end the maps are read once; `bpf_maps` turns them into
//! the waits the perf backend's pairing makes, so the report is the same code.

use perf_event::Sampler;

use super::LocksError;
use super::bpf_maps::{KEY_BYTES, Maps, SNAPSHOT_WORDS, slot};
use super::events::Recorded;
use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::bpf::{
    BpfError, Field, Loaded, Snapshot, VALUE_WORDS, u32_at, u64_at,
};
use crate::diagnose::observe::pump::{Pump, drain_all};
use crate::diagnose::observe::records::Format;
use crate::diagnose::observe::rings::{side_band_of_thread, side_band_on_exec};

/// The compiled programs (scripts/build-bpf.sh); aligned, or aya refuses the ELF.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../../bpf/locks.bpf.o");

/// The tracepoint fields the programs read (besides follow.h's).
const FIELDS: [Field; 4] = [
    ("off_uaddr", "syscalls", "sys_enter_futex", "uaddr"),
    ("off_op", "syscalls", "sys_enter_futex", "op"),
    ("off_uaddr2", "syscalls", "sys_enter_futex", "uaddr2"),
    ("off_ret", "syscalls", "sys_exit_futex", "ret"),
];

/// Loads and attaches the programs; `Err` is one line saying why they cannot run here.
fn load() -> Result<Loaded, Reason> {
    let tracepoints = [
        ("syscalls", "sys_enter_futex"),
        ("syscalls", "sys_exit_futex"),
    ];
    Loaded::attached("locks.bpf.o", OBJECT, &FIELDS, &tracepoints)
}

/// Why the in-kernel backend cannot run here (one line), or `Ok`: loads and unloads it.
pub fn available() -> Result<(), Reason> {
    load().map(drop)
}

fn bpf_error(e: BpfError) -> LocksError {
    LocksError::Perf {
        what: e.what,
        cause: std::io::Error::other(e.cause),
    }
}

/// The loaded programs and the side-band events.
pub struct BpfLocks {
    loaded: Option<Loaded>,
    side: Vec<Sampler>,
}

impl std::fmt::Debug for BpfLocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BpfLocks")
    }
}

impl BpfLocks {
    /// Loads the programs (nothing is a target yet).
    pub fn new() -> Result<BpfLocks, LocksError> {
        Ok(BpfLocks {
            loaded: Some(load().map_err(LocksError::Unavailable)?),
            side: Vec::new(),
        })
    }

    fn insert(&mut self, map: &str, pid: i32) -> Result<(), LocksError> {
        match &mut self.loaded {
            Some(l) => l.insert(map, pid as u32, 1u8).map_err(bpf_error),
            None => Ok(()),
        }
    }

    /// A launched command, a target from its execve on (before it, it is sysmeter's gated
    /// child), with an inherited side-band event per CPU enabled by that execve.
    pub fn arm(&mut self, pid: i32, cpus: &[usize]) -> Result<(), LocksError> {
        self.insert("armed", pid)?;
        for &cpu in cpus {
            let s = side_band_on_exec(pid, cpu);
            self.side.push(s.map_err(|cause| LocksError::Perf {
                what: format!("side-band event of pid {pid} on CPU {cpu}"),
                cause,
            })?);
        }
        Ok(())
    }

    /// A thread of an attached process: its process becomes a target (keys are process
    /// ids), and its side-band event is opened and enabled now.
    pub fn attach_thread(&mut self, pid: i32, tid: i32) -> std::io::Result<()> {
        self.insert("targets", pid)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let mut s = side_band_of_thread(tid)?;
        s.enable()?;
        self.side.push(s);
        Ok(())
    }

    /// Closes the events, reads the maps and unloads the programs.
    pub fn finish(&mut self, out: &mut Recorded) -> Result<Maps, LocksError> {
        self.pump(out, true);
        self.side.clear();
        match self.loaded.take() {
            Some(mut l) => read(&mut l).map_err(bpf_error),
            None => Ok(Maps::default()),
        }
    }
}

/// The side-band records of the targets (the waits stay in the kernel's maps until the end).
impl Pump<Recorded> for BpfLocks {
    fn pump(&mut self, out: &mut Recorded, last: bool) {
        drain_all(&mut self.side, Format::default(), out, last);
    }
}

/// Reads every map the result needs.
fn read(l: &mut Loaded) -> Result<Maps, BpfError> {
    let waits: Vec<([u8; KEY_BYTES], [u64; VALUE_WORDS])> = l.entries("waits")?;
    let snapshots: Vec<([u8; 16], [u64; SNAPSHOT_WORDS])> = l.entries("snapshots")?;
    let starts: Vec<(u32, [u8; 24])> = l.entries("starts")?;
    let mut maps = Maps {
        waits,
        snapshots: snapshots
            .into_iter()
            .map(|(k, v)| {
                let key = (u32_at(&k, 8), u32_at(&k, 12) as i32, u64_at(&k, 0));
                (key, Snapshot::from_words(&v))
            })
            .collect(),
        unfinished: starts.len() as u64,
        counters: l.counters("counters")?,
        ..Maps::default()
    };
    maps.stacks = l.stacks("stacks", &maps.stack_ids())?;
    debug_assert!(maps.counter(slot::WAITS) >= maps.waits.len() as u64);
    Ok(maps)
}
