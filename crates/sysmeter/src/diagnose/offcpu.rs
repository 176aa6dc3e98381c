//! The off-CPU diagnosis (`sysmeter profile --off-cpu` and `--both`): where the threads of a
//! command (or a running process) wait, for what, and who wakes them.
//!
//! One submodule per step:
//! - [`events`]: `sched:sched_switch` on the target (stack at switch-out, switch-in
//!   records) and system-wide `sched:sched_waking` (who made it runnable, with its stack);
//! - [`raw`]: the records as plain data; [`blocks`] (pure): blocked intervals and wakers;
//! - [`unwind`]: the whole user stack of each switch and waking (`observe::unwind`);
//! - [`classify`] (pure): disk, network, lock, sleep, pipe, page fault, preempted, other;
//! - [`analysis`]: symbolised, per stack and reason (time, count, distribution, wakers);
//!   [`threads`]: per thread, with each interval (the exports' timeline);
//! - [`overhead`]: what one switch costs a traced thread, measured before each run;
//! - [`result`]: the `offcpu` and `offcpu.stacks` results; [`loss`]: what was lost, as
//!   their first finding;
//! - [`bpf`], [`bpf_maps`]: the in-kernel backend (`--backend bpf`), whose maps become the
//!   same records, so everything after `blocks` is shared; [`Backend`] and [`choose`] pick
//!   between it and the perf rings.
//!
//! Launching, attaching, stopping and the CPU-clock samples of `--both` are the floor's
//! sampled session (`observe::sampled::session`), which drains these events alongside its
//! own; with `--both` the command hands in `profile`'s on-CPU part through the floor's
//! `OnCpu` seam, so this diagnosis never names `profile`.

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
pub mod summed;
pub mod threads;
pub mod unwind;

use std::time::Duration;

use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::proc::online_cpus;
use crate::diagnose::observe::sampled::results::{OnCpu, Profile};
use crate::diagnose::observe::sampled::session::{self, Extra, Sampling};
use crate::diagnose::observe::sampled::{SampledError, flame};
use crate::diagnose::observe::target::Target;
use events::{Ids, OffEvents};
use raw::OffRaw;

/// Why off-CPU profiling cannot run here (tracefs or privileges), with the fix; tests use it
/// to skip.
pub fn available() -> Result<(), Reason> {
    let ids = events::ids().map_err(Reason)?;
    OffEvents::new(ids, &[0])
        .map(drop)
        .map_err(|e| Reason::with_fix(e, "off-CPU profiles need root (system-wide sched_waking)"))
}

pub use crate::diagnose::observe::in_kernel::Backend;

/// The backend for `--backend` ([`crate::diagnose::observe::in_kernel::choose`]); the line that
/// says which and why is its `line("off-CPU")`.
pub use crate::diagnose::observe::in_kernel::choose;

/// Settings of one off-CPU profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settings {
    /// The session: how long, and the CPU-clock frequency of `--both`. Its `on_cpu` is set
    /// by [`profile`] from whether an on-CPU part was handed in.
    pub sampling: Sampling,
    /// How: in-kernel aggregation or perf rings (`--backend`, resolved).
    pub backend: Backend,
}

/// The off-CPU events as the session's [`Extra`].
struct OffSession {
    events: Option<OffEvents>,
    raw: OffRaw,
    cpus: Vec<usize>,
    unwinding: unwind::Unwinding,
}

impl Extra for OffSession {
    fn open_child(&mut self, pid: i32) -> Result<(), SampledError> {
        match &mut self.events {
            Some(e) => e.for_child(pid, &self.cpus),
            None => Ok(()),
        }
    }

    fn add_thread(&mut self, tid: i32) -> Result<bool, SampledError> {
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

fn tracepoint_ids() -> Result<Ids, SampledError> {
    events::ids().map_err(|why| SampledError::PerfOpen {
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
    sampling: &Sampling,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Recorded, SampledError> {
    let ids = tracepoint_ids()?;
    let cost = overhead::calibrate(ids);
    let cpus = online_cpus();
    let mut off = OffSession {
        events: Some(OffEvents::new(ids, &cpus)?),
        raw: OffRaw::default(),
        cpus,
        unwinding: unwind::Unwinding::new(&[], events::STACK_BYTES),
    };
    let recording = session::record_with(target, sampling, &mut off, progress)?;
    let paired = blocks::pair(&off.raw);
    Ok((recording, off.raw, paired, cost))
}

fn record_bpf(
    target: &Target,
    sampling: &Sampling,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Recorded, SampledError> {
    let cpus = online_cpus();
    let mut off = bpf::BpfSession::new(cpus).map_err(|why| SampledError::PerfOpen {
        what: "the in-kernel off-CPU programs".into(),
        cause: std::io::Error::from_raw_os_error(libc::EPERM),
        hint: format!("{why}; use --backend perf"),
    })?;
    let recording = session::record_with(target, sampling, &mut off, progress)?;
    let paired = bpf::finish(&mut off)?;
    unwind::repair_leaves(&mut off.raw, bpf_maps::SNAPSHOT_BYTES);
    Ok((recording, off.raw, paired, overhead::Cost::default()))
}

/// Records `target` off-CPU and builds the results; with `on_cpu` (`--both`) the session
/// samples the CPU clock too and `on_cpu` builds the on-CPU results first.
pub fn profile(
    target: &Target,
    settings: &Settings,
    on_cpu: Option<Box<dyn OnCpu>>,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Profile, SampledError> {
    let sampling = Sampling {
        on_cpu: on_cpu.is_some(),
        ..settings.sampling
    };
    let (recording, raw, paired, cost) = match settings.backend {
        Backend::Bpf => record_bpf(target, &sampling, progress)?,
        Backend::Perf => record_perf(target, &sampling, progress)?,
    };
    let seen: Vec<(u32, u64)> = recording
        .data
        .raw
        .samples
        .iter()
        .map(|s| (s.tid, s.time))
        .collect();
    let timed = settings.backend == Backend::Perf;
    let maps = &recording.maps_at_start;
    let off_analysis = analysis::analyse_paired(&raw, paired, maps, &seen, timed);
    let title = format!("sysmeter profile --off-cpu: {}", target.describe());
    let off_flame = flame::render_off_cpu(&off_analysis.analysis.stacks, &title)?;
    let (mut results, on) = match on_cpu {
        Some(part) => {
            let drawn = part.build(&recording)?;
            (drawn.results, Some((drawn.folded, drawn.flamegraph)))
        }
        None => (Vec::new(), None),
    };
    let inputs = result::Inputs {
        recording: &recording,
        raw: &raw,
        analysis: &off_analysis,
        cost: &cost,
        on_cpu: sampling.on_cpu,
        flamegraph: &off_flame,
        backend: settings.backend,
    };
    result::add(&mut results, &inputs);
    let off_folded = off_analysis.analysis.stacks.folded();
    let (folded, flamegraph, extra) = match on {
        Some((f, svg)) => (f, svg, Some((off_folded, off_flame))),
        None => (off_folded, off_flame, None),
    };
    Ok(Profile {
        results,
        exit: recording.exit.map(|(exit, _)| exit),
        interrupted: recording.interrupted(),
        folded,
        flamegraph,
        off_cpu: extra,
    })
}
