//! Where a session's futex calls come from: the perf rings (`events`, every entry and exit
//! read by sysmeter and paired by `waits`) or the in-kernel backend (`bpf`, waits aggregated
//! in the kernel and read from its maps at the end). The session drives both the same way.

use std::io;

use super::bpf::BpfLocks;
use super::bpf_maps::{SNAPSHOT_BYTES, into_paired};
use super::events::{Recorded, Rings};
use super::parse::Layout;
use super::waits::Paired;
use super::{Backend, LocksError};
use crate::diagnose::observe::maps::MapEvent;
use crate::diagnose::observe::pump::Pump;

/// The open events of one backend.
#[derive(Debug)]
pub enum Source {
    /// perf rings.
    Perf(Box<Rings>),
    /// BPF programs and side-band events.
    Bpf(Box<BpfLocks>),
}

impl std::fmt::Debug for Rings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rings")
    }
}

impl Source {
    /// Opens `backend` (nothing observed yet).
    pub fn open(backend: Backend, layout: Layout) -> Result<Source, LocksError> {
        Ok(match backend {
            Backend::Perf => Source::Perf(Box::new(Rings::new(layout))),
            Backend::Bpf => Source::Bpf(Box::new(BpfLocks::new()?)),
        })
    }

    /// What the recording starts with: an attached process's mappings, and the stack copy
    /// size the unwinder is told about.
    pub fn recorded(&self, maps: &[MapEvent]) -> Recorded {
        match self {
            Source::Perf(r) => r.recorded(maps),
            Source::Bpf(_) => Recorded::copying(maps, SNAPSHOT_BYTES),
        }
    }

    /// Observes a launched command from its execve on, on every CPU of `cpus`.
    pub fn launched(&mut self, pid: i32, cpus: &[usize]) -> Result<(), LocksError> {
        match self {
            Source::Perf(r) => r.add(pid, cpus, true).map_err(|cause| LocksError::Perf {
                what: format!("pid {pid}"),
                cause,
            }),
            Source::Bpf(b) => b.arm(pid, cpus),
        }
    }

    /// Observes thread `tid` of the running process `pid` (not enabled yet for perf).
    pub fn thread(&mut self, pid: i32, tid: i32, cpus: &[usize]) -> io::Result<()> {
        match self {
            Source::Perf(r) => r.add(tid, cpus, false),
            Source::Bpf(b) => b.attach_thread(pid, tid),
        }
    }

    /// Enables what is not enabled yet (an attached process's perf events).
    pub fn enable(&mut self) -> io::Result<()> {
        match self {
            Source::Perf(r) => r.enable(),
            Source::Bpf(_) => Ok(()),
        }
    }

    /// Ends the observation: the last records, and for the in-kernel backend the waits read
    /// from its maps (`None`: pair the events).
    pub fn finish(&mut self, out: &mut Recorded) -> Result<Option<Paired>, LocksError> {
        match self {
            Source::Perf(r) => {
                r.pump(out, true);
                Ok(None)
            }
            Source::Bpf(b) => {
                let maps = b.finish(out)?;
                out.lost += maps.lost();
                Ok(Some(into_paired(&maps, out)))
            }
        }
    }
}

impl Pump<Recorded> for Source {
    fn pump(&mut self, out: &mut Recorded, last: bool) {
        match self {
            Source::Perf(r) => r.pump(out, last),
            Source::Bpf(b) => b.pump(out, last),
        }
    }

    fn stop(&mut self) {
        match self {
            Source::Perf(r) => r.stop(),
            Source::Bpf(b) => b.stop(),
        }
    }
}
