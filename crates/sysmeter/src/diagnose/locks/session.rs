//! One `locks` session: start the command gated before `execve` with the futex events open
//! on it (enabled by the kernel at the exec), or open them on every thread of a running
//! process (rescanning `/proc/PID/task` until no new thread appears; threads created later
//! inherit the events), then drain the rings in the one session loop (`observe::pump::run`)
//! until the command exits, the process disappears, `--duration` passes or Ctrl-C. Closing the events detaches: the
//! target never stops and keeps running. After `--duration` a launched command runs on
//! unobserved to its end, like `profile`'s.

use sysmeter_sys::process::child::Child;

use super::events::Recorded;
use super::parse::Layout;
use super::source::Source;
use super::waits::Paired;
use super::{LocksError, Settings};
use crate::diagnose::observe::maps::parse_proc_maps;
use crate::diagnose::observe::proc::{each_thread, online_cpus};
use crate::diagnose::observe::pump::{self, Watched};
use crate::diagnose::observe::recording;
use crate::diagnose::observe::session::{StopWhen, Watch, wait_for_end};
use crate::diagnose::observe::target::{Target, Unresolved, resolve_program};

/// What a session collected (the one session record of the floor, `observe::recording`).
pub type Recording = recording::Recording<Futexes>;

/// What only `locks` reads of a session.
#[derive(Debug)]
pub struct Futexes {
    /// Futex events and side-band records.
    pub recorded: Recorded,
    /// Threads the events were opened on (attach) or 1 (a launched command).
    pub threads: usize,
    /// The waits the in-kernel backend aggregated (`None`: pair `recorded`'s events).
    pub paired: Option<Paired>,
    /// The in-kernel backend measured it (`paired` was filled from its maps).
    pub in_kernel: bool,
    /// The in-process lock table of a launched command (empty when attached, or when the
    /// preload library did not load).
    pub held: Vec<crate::model::held::HeldRow>,
}

fn perf(what: String) -> impl Fn(std::io::Error) -> LocksError {
    move |cause| LocksError::Perf {
        what: what.clone(),
        cause,
    }
}

/// Records `target` until it ends, the duration passes or Ctrl-C; `attached(text)` is
/// called once the events are open on a running process.
pub fn record(
    target: &Target,
    layout: Layout,
    settings: &Settings,
    attached: &mut dyn FnMut(&str),
) -> Result<Recording, LocksError> {
    match target {
        Target::Launch(argv) => launch(argv, layout, settings),
        Target::Attach(pid) => attach(*pid, layout, settings, attached),
    }
}

fn launch(
    argv: &[std::ffi::OsString],
    layout: Layout,
    settings: &Settings,
) -> Result<Recording, LocksError> {
    let name = argv.first().map(|a| a.as_os_str()).unwrap_or_default();
    let program = match resolve_program(name) {
        Ok(p) | Err(Unresolved::NotExecutable(p)) => p,
        Err(Unresolved::NotFound) => std::path::PathBuf::from(name),
    };
    let args: Vec<&std::ffi::OsStr> = argv.iter().map(|a| a.as_os_str()).collect();
    let launch_error = |cause| LocksError::Launch {
        command: program.display().to_string(),
        cause,
    };
    let region = super::held::Region::prepare();
    let env = region.as_ref().map(super::held::Region::environment);
    let env: Option<Vec<&std::ffi::OsStr>> = env
        .as_ref()
        .map(|e| e.iter().map(|v| v.as_os_str()).collect());
    let mut child = Child::spawn_env(&program, &args, env.as_deref()).map_err(launch_error)?;
    let mut rings = Source::open(settings.backend, layout)?;
    // If opening fails, dropping `child` kills and reaps it unreleased.
    rings.launched(child.pid(), &online_cpus())?;
    child.release().map_err(launch_error)?;
    let watch = Watch::start();
    let mut recorded = rings.recorded(&[]);
    let wait_error = |cause| LocksError::Wait { cause };
    let mut stop_when = StopWhen::until(settings.duration, None);
    let watched = Watched::Command(&mut child);
    let (stop, mut exit) =
        pump::run(&mut rings, &mut recorded, watched, &mut stop_when).map_err(wait_error)?;
    let paired = rings.finish(&mut recorded)?;
    let watched = watch.read();
    drop(rings);
    if exit.is_none() {
        exit = wait_for_end(&mut child).map_err(wait_error)?;
    }
    let data = Futexes {
        recorded,
        threads: 1,
        in_kernel: paired.is_some(),
        paired,
        held: region.map(|r| r.read()).unwrap_or_default(),
    };
    Ok(Recording::launched(data, exit, stop, watched))
}

/// Opens the events on every thread of `pid`, rescanning until no new one shows up.
fn open_threads(pid: i32, rings: &mut Source, cpus: &[usize]) -> Result<usize, LocksError> {
    each_thread(pid, |tid| rings.thread(pid, tid, cpus))
        .map_err(perf(format!("threads of {pid}")))?
        .ok_or(LocksError::NoSuchPid { pid })
}

fn attach(
    pid: i32,
    layout: Layout,
    settings: &Settings,
    attached: &mut dyn FnMut(&str),
) -> Result<Recording, LocksError> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map_err(|_| LocksError::NoSuchPid { pid })?;
    let maps_at_start = parse_proc_maps(pid as u32, &maps);
    let mut rings = Source::open(settings.backend, layout)?;
    let mut recorded = rings.recorded(&maps_at_start);
    let threads = open_threads(pid, &mut rings, &online_cpus())?;
    rings.enable().map_err(perf(format!("pid {pid}")))?;
    attached(&format!(
        "watching the futex calls of pid {pid} ({threads} threads); Ctrl-C or --duration \
         detaches"
    ));
    let watch = Watch::start();
    let mut stop_when = StopWhen::until(settings.duration, None);
    let watched = Watched::Process(pid);
    let (stop, _) = pump::run(&mut rings, &mut recorded, watched, &mut stop_when)
        .map_err(|cause| LocksError::Wait { cause })?;
    let paired = rings.finish(&mut recorded)?;
    let watched = watch.read();
    let data = Futexes {
        recorded,
        threads,
        in_kernel: paired.is_some(),
        paired,
        held: Vec::new(),
    };
    Ok(Recording::attached(data, maps_at_start, stop, watched))
}
