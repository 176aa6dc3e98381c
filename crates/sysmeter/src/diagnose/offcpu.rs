//! `sysmeter profile --off-cpu` and `--both`: where the threads of a command (or a running
//! process) wait, for what, and who wakes them.
//!
//! One submodule per step:
//! - [`events`]: `sched:sched_switch` on the target (stack at switch-out, switch-in
//!   records) and system-wide `sched:sched_waking` (who made it runnable, with its stack);
//! - [`raw`]: the records as plain data; [`blocks`] (pure): blocked intervals and wakers;
//! - [`unwind`]: the whole user stack of each switch and waking (`observe::unwind`);
//! - [`classify`] (pure): disk, network, lock, sleep, pipe, page fault, preempted, other;
//! - [`analysis`]: symbolised, per stack and reason (time, count, distribution, wakers);
//! - [`overhead`]: what one switch costs a traced thread, measured before each run;
//! - [`result`]: the `offcpu` and `offcpu.stacks` results; [`loss`]: what was lost, as
//!   their first finding;
//! - [`bpf`], [`bpf_maps`]: the in-kernel backend (`--backend bpf`), whose maps become the
//!   same records, so everything after `blocks` is shared; [`Backend`] and [`choose`] pick
//!   between it and the perf rings.
//!
//! Launching, attaching, stopping and the CPU-clock samples of `--both` are the on-CPU
//! profile's [`session`](super::session), which drains these events alongside its own.

pub mod analysis;
pub mod blocks;
pub mod bpf;
pub mod bpf_maps;
pub mod classify;
pub mod events;
pub mod loss;
pub mod overhead;
pub mod raw;
pub mod result;
pub mod unwind;

use std::time::Duration;

use super::session::{self, Extra};
use super::{ProfileError, Settings, Target, aggregate, flame, overhead as cpu_overhead};
use events::{Ids, OffEvents};
use raw::OffRaw;

/// Why off-CPU profiling cannot run here (tracefs or privileges), with the fix; tests use it
/// to skip.
pub fn available() -> Result<(), String> {
    let ids = events::ids()?;
    OffEvents::new(ids, &[0])
        .map(drop)
        .map_err(|e| format!("{e}; off-CPU profiles need root (system-wide sched_waking)"))
}

pub use crate::diagnose::observe::bpf::Backend;

/// The backend for a request (`None`: auto) and the line saying which and why
/// ([`crate::diagnose::observe::bpf::choose`]).
pub fn choose(request: Option<Backend>) -> Result<(Backend, String), String> {
    crate::diagnose::observe::bpf::choose("off-CPU", request)
}

/// The off-CPU events as the session's [`Extra`].
struct OffSession {
    events: Option<OffEvents>,
    raw: OffRaw,
    cpus: Vec<usize>,
    unwinding: unwind::Unwinding,
}

impl Extra for OffSession {
    fn open_child(&mut self, pid: i32) -> Result<(), ProfileError> {
        match &mut self.events {
            Some(e) => e.for_child(pid, &self.cpus),
            None => Ok(()),
        }
    }

    fn add_thread(&mut self, tid: i32) -> Result<bool, ProfileError> {
        match &mut self.events {
            Some(e) => e.add_thread(tid),
            None => Ok(false),
        }
    }

    fn drain(&mut self, last: bool) {
        if let Some(e) = &mut self.events {
            e.drain(&mut self.raw);
            self.raw.settle(last);
            self.unwinding.settle(&mut self.raw);
        }
    }

    fn close(&mut self) {
        self.events = None;
    }

    fn live(&mut self) -> Option<u64> {
        Some(self.raw.outs.len() as u64)
    }
}

fn tracepoint_ids() -> Result<Ids, ProfileError> {
    events::ids().map_err(|why| ProfileError::PerfOpen {
        what: "sched tracepoints".into(),
        cause: std::io::Error::from_raw_os_error(libc::EACCES),
        hint: why,
    })
}

/// What a backend recorded: the session, the off-CPU records, their intervals, and the
/// measured cost of a switch (none for the in-kernel backend, whose cost is not estimated).
type Recorded = (session::Recording, OffRaw, blocks::Blocks, overhead::Cost);

fn record_perf(
    target: &Target,
    settings: &Settings,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Recorded, ProfileError> {
    let ids = tracepoint_ids()?;
    let cost = overhead::calibrate(ids);
    let cpus = super::sampling::online_cpus();
    let mut off = OffSession {
        events: Some(OffEvents::new(ids, &cpus)?),
        raw: OffRaw::default(),
        cpus,
        unwinding: unwind::Unwinding::new(&[], events::STACK_BYTES),
    };
    let recording = session::record_with(target, settings, &mut off, progress)?;
    let paired = blocks::pair(&off.raw);
    Ok((recording, off.raw, paired, cost))
}

fn record_bpf(
    target: &Target,
    settings: &Settings,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Recorded, ProfileError> {
    let cpus = super::sampling::online_cpus();
    let mut off = bpf::BpfSession::new(cpus).map_err(|why| ProfileError::PerfOpen {
        what: "the in-kernel off-CPU programs".into(),
        cause: std::io::Error::from_raw_os_error(libc::EPERM),
        hint: format!("{why}; use --backend perf"),
    })?;
    let recording = session::record_with(target, settings, &mut off, progress)?;
    let paired = bpf::finish(&mut off)?;
    unwind::repair_leaves(&mut off.raw, bpf_maps::SNAPSHOT_BYTES);
    Ok((recording, off.raw, paired, overhead::Cost::default()))
}

/// Records `target` off-CPU (and on-CPU when `settings.on_cpu`) and builds the results.
pub fn profile(
    target: &Target,
    settings: &Settings,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<super::Profile, ProfileError> {
    let cpu_cal = match settings.on_cpu {
        true => Some(cpu_overhead::calibrate()?),
        false => None,
    };
    let (recording, raw, paired, cost) = match settings.off_backend {
        Backend::Bpf => record_bpf(target, settings, progress)?,
        Backend::Perf => record_perf(target, settings, progress)?,
    };
    let seen: Vec<(u32, u64)> = recording
        .raw
        .samples
        .iter()
        .map(|s| (s.tid, s.time))
        .collect();
    let off_analysis = analysis::analyse_paired(&raw, paired, &recording.maps_at_start, &seen);
    let title = format!("sysmeter profile --off-cpu: {}", target.describe());
    let off_flame = flame::render_off_cpu(&off_analysis.analysis.stacks, &title)?;
    let mut results = Vec::new();
    let mut on = None;
    if let Some(cal) = &cpu_cal {
        let a = aggregate::analyse(&recording.raw, &recording.maps_at_start);
        let svg = flame::render(&a.stacks, &super::flame_title(target))?;
        results = super::result::build(&recording, &a, cal, settings, &svg);
        on = Some((a.stacks.folded(), svg));
    }
    let inputs = result::Inputs {
        recording: &recording,
        raw: &raw,
        analysis: &off_analysis,
        cost: &cost,
        settings,
        flamegraph: &off_flame,
        backend: settings.off_backend,
    };
    result::add(&mut results, &inputs);
    let off_folded = off_analysis.analysis.stacks.folded();
    let (folded, flamegraph, extra) = match on {
        Some((f, svg)) => (f, svg, Some((off_folded, off_flame))),
        None => (off_folded, off_flame, None),
    };
    Ok(super::Profile {
        results,
        exit: recording.exit.map(|(exit, _)| exit),
        interrupted: recording.interrupted,
        folded,
        flamegraph,
        off_cpu: extra,
    })
}
