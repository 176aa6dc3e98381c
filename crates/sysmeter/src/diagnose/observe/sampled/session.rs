//! One sampling session: start the command paused before `execve` (or find the threads of a
//! running pid), open the events, then read the ring buffers in the one session loop
//! (`observe::pump::run`, with [`Sources`]) until the command exits, `--duration` passes,
//! the process disappears, or Ctrl-C.
//!
//! The command keeps this process group, so a terminal's Ctrl-C reaches it as usual; a
//! SIGINT/SIGTERM sent to sysmeter alone is passed on as SIGINT, and a command still running
//! a grace period later is killed (`observe::session::wait_for_end`; its own children only
//! see the terminal's signal). After `--duration` the events are closed and the command runs
//! on unobserved to its end (its exit code is passed through). Reading is a sleep-and-drain
//! loop: at 1 kHz a ring buffer of 32 KiB or more holds far longer than one drain period of
//! samples. Wall time and this process's CPU time are measured around the loop, for the
//! overhead report.

use std::collections::HashSet;
use std::time::Duration;

use sysmeter_sys::process::child::Child;

use super::SampledError;
use super::cpu_clock::EventSet;
use super::sources::{Attached, EachDrain, Sources, attach_new_threads, stat_cpu_ns};
use crate::diagnose::observe::maps::parse_proc_maps;
use crate::diagnose::observe::pump::{self, Watched};
use crate::diagnose::observe::recording;
use crate::diagnose::observe::records::RawData;
use crate::diagnose::observe::session::{Ended, StopWhen, Watch, wait_for_end};
use crate::diagnose::observe::target::{Target, Unresolved, resolve_program};

/// What a sampled session is asked to do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// CPU-clock samples per second of CPU time per thread (`-F`).
    pub frequency: u64,
    /// Stop after this long (`--duration`); `None`: until the target ends (or Ctrl-C).
    pub duration: Option<Duration>,
    /// Sample the CPU clock (off for an off-CPU profile alone).
    pub on_cpu: bool,
}

/// What a sampled session collected (the one session record of the floor, `observe::recording`).
pub type Recording = recording::Recording<Sampled>;

/// What only the stack-sampling diagnoses read of a session.
#[derive(Debug, Clone)]
pub struct Sampled {
    /// Samples and side-band records.
    pub raw: RawData,
    /// Whether kernel frames were sampled.
    pub kernel: bool,
    /// Sampling frequency, Hz.
    pub frequency: u64,
    /// CPU time of the target while sampled (launched: its rusage; attached: /proc), ns.
    pub target_cpu_ns: Option<u64>,
    /// Threads observed (attached) or CPUs observed (launched).
    pub events: usize,
}

impl Recording {
    /// CPU time the samples stand for: samples × period, ns.
    pub fn sampled_cpu_ns(&self) -> f64 {
        self.data.raw.samples.len() as f64 * 1e9 / self.data.frequency.max(1) as f64
    }

    /// This process's CPU time while sampling as a share of the CPU time sampled (0.01 =
    /// 1%); `None` without samples.
    pub fn profiler_share(&self) -> Option<f64> {
        let sampled = self.sampled_cpu_ns();
        (sampled > 0.0).then(|| self.own_cpu_ns as f64 / sampled)
    }
}

/// More events read alongside the CPU-clock samples (the off-CPU profile's), opened,
/// drained and closed by the session.
pub trait Extra {
    /// Opens the events of a launched command, paused before `execve`.
    fn open_child(&mut self, pid: i32) -> Result<(), SampledError>;
    /// Opens the events of one thread of an attached process; `Ok(false)`: it has exited.
    fn add_thread(&mut self, tid: i32) -> Result<bool, SampledError>;
    /// Reads what the rings hold; `last` at the end.
    fn drain(&mut self, last: bool);
    /// Closes the events.
    fn close(&mut self);
    /// Off-CPU intervals seen so far, for the live line of a run without CPU samples.
    fn live(&mut self) -> Option<u64> {
        None
    }
}

/// No extra events: a session of the CPU clock alone.
pub struct NoExtra;

impl Extra for NoExtra {
    fn open_child(&mut self, _: i32) -> Result<(), SampledError> {
        Ok(())
    }
    fn add_thread(&mut self, _: i32) -> Result<bool, SampledError> {
        Ok(true)
    }
    fn drain(&mut self, _: bool) {}
    fn close(&mut self) {}
}

/// Samples `target` as `sampling` says.
pub fn record(
    target: &Target,
    sampling: &Sampling,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Recording, SampledError> {
    record_with(target, sampling, &mut NoExtra, progress)
}

/// [`record`] with `extra` events (CPU-clock sampling only when `sampling.on_cpu`).
pub fn record_with(
    target: &Target,
    sampling: &Sampling,
    extra: &mut dyn Extra,
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Recording, SampledError> {
    record_live(target, sampling, (extra, None), progress)
}

/// [`record_with`], with `each_drain` reading the records after every drain (`live`'s
/// window: it takes the samples out as it aggregates them, so the recording ends without
/// them).
pub fn record_live(
    target: &Target,
    sampling: &Sampling,
    (extra, each_drain): (&mut dyn Extra, Option<EachDrain<'_>>),
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Recording, SampledError> {
    match target {
        Target::Launch(argv) => {
            let program = program_path(argv)?;
            let args: Vec<&std::ffi::OsStr> = argv.iter().map(|a| a.as_os_str()).collect();
            let command = program.display().to_string();
            let launch = |cause| SampledError::Launch {
                command: command.clone(),
                cause,
            };
            let mut child = Child::spawn(&program, &args).map_err(launch)?;
            // If opening the events fails, dropping `child` kills and reaps it unreleased.
            let events = match sampling.on_cpu {
                true => EventSet::for_child(child.pid(), sampling.frequency)?,
                false => EventSet::for_attach(sampling.frequency, &[]),
            };
            extra.open_child(child.pid())?;
            child.release().map_err(launch)?;
            record_child(child, events, sampling, (extra, each_drain), progress)
        }
        Target::Attach(pid) => record_pid(*pid, sampling, (extra, each_drain), progress),
    }
}

/// The file to execute for `argv`, found by the one resolver ([`resolve_program`]). The
/// command layer has already refused names that resolve to nothing; a path to a file that is
/// not executable is kept, so starting it reports the system's reason.
fn program_path(argv: &[std::ffi::OsString]) -> Result<std::path::PathBuf, SampledError> {
    let name = argv.first().map(|a| a.as_os_str()).unwrap_or_default();
    match resolve_program(name) {
        Ok(path) | Err(Unresolved::NotExecutable(path)) => Ok(path),
        Err(Unresolved::NotFound) => Err(SampledError::Launch {
            command: name.to_string_lossy().into_owned(),
            cause: std::io::Error::from_raw_os_error(libc::ENOENT),
        }),
    }
}

/// Reads `events` until the command ends, the duration passes or Ctrl-C.
fn record_child(
    mut child: Child,
    mut events: EventSet,
    sampling: &Sampling,
    (extra, each_drain): (&mut dyn Extra, Option<EachDrain<'_>>),
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Recording, SampledError> {
    let pid = child.pid();
    let wait_error = |cause| SampledError::Wait { pid, cause };
    let watch = Watch::start();
    let mut raw = RawData::default();
    let mut stop_when = StopWhen::until(sampling.duration, None);
    let mut sources = Sources::new(&mut events, extra, progress, watch.start);
    sources.each_drain = each_drain.map(|f| -> EachDrain<'_> { f });
    let watched = Watched::Command(&mut child);
    let (stop, mut exit) =
        pump::run(&mut sources, &mut raw, watched, &mut stop_when).map_err(wait_error)?;
    let watched = watch.read();
    let kernel = events.kernel;
    let cpus = events.len();
    // Close the events before waiting, so a command that runs on is not sampled for nothing.
    drop(events);
    extra.close();
    if exit.is_none() {
        exit = wait_for_end(&mut child).map_err(wait_error)?;
    }
    let data = Sampled {
        raw,
        kernel,
        frequency: sampling.frequency,
        target_cpu_ns: exit.map(|(_, u)| u.user_ns + u.system_ns),
        events: cpus,
    };
    Ok(Recording::launched(data, exit, stop, watched))
}

/// Attaches to every thread of `pid` (rescanning for new ones) and reads until it exits,
/// the duration passes or Ctrl-C.
fn record_pid(
    pid: i32,
    sampling: &Sampling,
    (extra, each_drain): (&mut dyn Extra, Option<EachDrain<'_>>),
    progress: &mut dyn FnMut(u64, Duration),
) -> Result<Recording, SampledError> {
    let mut known: HashSet<i32> = HashSet::new();
    let maps_text = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let maps_at_start = parse_proc_maps(pid as u32, &maps_text);
    let mut events = EventSet::for_attach(sampling.frequency, &maps_at_start);
    let mut raw = RawData::default();
    if let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/comm")) {
        raw.comms.insert(pid as u32, comm.trim_end().to_string());
    }
    attach_new_threads(pid, sampling.on_cpu, &mut events, extra, &mut known)?;
    if known.is_empty() {
        return Err(SampledError::NoSuchPid { pid });
    }
    let watch = Watch::start();
    let mut stop_when = StopWhen::until(sampling.duration, None);
    let target0 = stat_cpu_ns(pid).map(|(t, _)| t);
    let mut sources = Sources::new(&mut events, extra, progress, watch.start);
    sources.attached = Some(Attached::new(pid, sampling.on_cpu, known, target0));
    sources.each_drain = each_drain.map(|f| -> EachDrain<'_> { f });
    let ran = pump::run(&mut sources, &mut raw, Watched::BySource, &mut stop_when);
    let attached = sources.attached.take();
    let (stop, target_last) = match (ran, attached) {
        (
            _,
            Some(Attached {
                failed: Some(e), ..
            }),
        ) => return Err(e),
        (Ok((stop, _)), Some(a)) => (stop, a.target_last),
        // Watching by /proc fails only as `failed` says.
        (_, _) => (Ended::Finished, target0),
    };
    extra.close();
    let watched = watch.read();
    let data = Sampled {
        raw,
        kernel: events.kernel,
        frequency: sampling.frequency,
        target_cpu_ns: target0.zip(target_last).map(|(a, b)| b.saturating_sub(a)),
        events: events.len(),
    };
    Ok(Recording::attached(data, maps_at_start, stop, watched))
}
