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
//! - [`result`]: the `offcpu` and `offcpu.stacks` results.
//!
//! Launching, attaching, stopping and the CPU-clock samples of `--both` are the on-CPU
//! profile's [`session`](super::session), which drains these events alongside its own.

pub mod analysis;
pub mod blocks;
pub mod classify;
pub mod events;
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
}

fn tracepoint_ids() -> Result<Ids, ProfileError> {
    events::ids().map_err(|why| ProfileError::PerfOpen {
        what: "sched tracepoints".into(),
        cause: std::io::Error::from_raw_os_error(libc::EACCES),
        hint: why,
    })
}

/// Records `target` off-CPU (and on-CPU when `settings.on_cpu`) and builds the results.
pub fn profile(
    target: &Target,
    settings: &Settings,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<super::Profile, ProfileError> {
    let ids = tracepoint_ids()?;
    let cost = overhead::calibrate(ids);
    let cpu_cal = match settings.on_cpu {
        true => Some(cpu_overhead::calibrate()?),
        false => None,
    };
    let cpus = super::sampling::online_cpus();
    let mut off = OffSession {
        events: Some(OffEvents::new(ids, &cpus)?),
        raw: OffRaw::default(),
        cpus,
        unwinding: unwind::Unwinding::new(&[], events::STACK_BYTES),
    };
    let recording = session::record_with(target, settings, &mut off, progress)?;
    let seen: Vec<(u32, u64)> = recording
        .raw
        .samples
        .iter()
        .map(|s| (s.tid, s.time))
        .collect();
    let off_analysis = analysis::analyse(&off.raw, &recording.maps_at_start, &seen);
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
        raw: &off.raw,
        analysis: &off_analysis,
        cost: &cost,
        settings,
        flamegraph: &off_flame,
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
