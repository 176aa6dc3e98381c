//! The in-process backend of `calls` for launched, dynamically linked programs: sysmeter's
//! preload library is handed to the command by the floor's one injection
//! (`observe::inject`: `LD_PRELOAD=/proc/<sysmeter pid>/fd/N`, appended to any preload already set, with
//! `LD_BIND_NOW=1` so every GOT slot holds its final target before the library patches it),
//! counts every call of the chosen functions in the calling thread and times one call in
//! N, or all, with its own cost calibrated in the same run. Its counts arrive in a shared
//! region ([`region`]) that outlives `_exit`, crashes and exec chains. Costs a few ns per
//! call instead of the uprobe round trip of microseconds (docs/calls.md).
//!
//! Depends on `model`, `diagnose::observe` and sysmeter-sys; never on another diagnosis.

pub mod choose;
pub mod funcs_region;
pub mod record;
pub mod region;
pub mod times;

use std::ffi::OsString;
use std::fs::File;

use super::{CallsConfig, CallsError};
use crate::diagnose::observe::inject;
use crate::diagnose::observe::not_entered::{self, NotEntered};
use crate::diagnose::observe::session::{CommandState, Stopped};

/// Everything an in-process run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The region as the run left it.
    pub region: region::Region,
    /// ns per counter tick, measured across the run.
    pub ns_per_tick: f64,
    /// 1 in this many calls timed per function and thread (1: every call).
    pub every: u64,
    /// Why it ended and the command's fate (nothing travels through a ring: nothing is
    /// lost on the way; the wall and own CPU time are read by the caller, who started them).
    pub session: Stopped,
    /// CPU time of the command, ns.
    pub cpu_ns: Option<f64>,
    /// With `--functions`: what the -finstrument-functions hooks recorded.
    pub functions: Option<funcs_region::Functions>,
    /// The programs exec'd by a counted process that the library could not enter.
    pub not_entered: NotEntered,
}

/// The command's environment: ours plus the preload library, the region and the choice.
fn environment(lib: &File, shm: &File, globs: &str, every: u64, functions: bool) -> Vec<OsString> {
    let mut extra = vec![
        ("LD_BIND_NOW".to_string(), "1".to_string()),
        ("SYSMETER_CALLS_SHM".into(), inject::path_of(shm)),
        ("SYSMETER_CALLS_FUNCS".into(), globs.to_string()),
        ("SYSMETER_CALLS_SAMPLE".into(), every.to_string()),
    ];
    if functions {
        extra.push(("SYSMETER_CALLS_FUNCTIONS".into(), "1".into()));
    }
    inject::environment(lib, &["SYSMETER_CALLS_", "LD_BIND_NOW"], &extra)
}

fn read_region(shm: &File) -> Result<region::Region, CallsError> {
    let head = inject::read_at(shm, 0, region::used_len(0))?;
    let all = inject::read_at(shm, 0, region::used_len(region::claimed(&head)))?;
    Ok(region::parse(&all).unwrap_or_default())
}

/// The area of the -finstrument-functions hooks, after the slots.
fn read_functions(shm: &File) -> Result<funcs_region::Functions, CallsError> {
    let at = region::SIZE as u64;
    let head = inject::read_at(shm, at, funcs_region::used_len(0))?;
    let all = inject::read_at(
        shm,
        at,
        funcs_region::used_len(funcs_region::claimed(&head)),
    )?;
    Ok(funcs_region::parse(&all))
}

/// ns per tick of the counter between two (counter, ns) readings.
fn ns_per_tick(a: (u64, i64), b: (u64, i64)) -> f64 {
    let ticks = b.0.saturating_sub(a.0).max(1) as f64;
    (b.1 - a.1).max(1) as f64 / ticks
}

fn clock_pair() -> (u64, i64) {
    use sysmeter_sys::clock::{ClockId, clock_gettime_ns, counter};
    (counter(), clock_gettime_ns(ClockId::Monotonic))
}

/// Launches `argv` with the library and reads the region when it ends (or Ctrl-C, or
/// `--duration`).
pub fn run(cfg: &CallsConfig, argv: &[OsString], every: u64) -> Result<Outcome, CallsError> {
    let size = region::SIZE + if cfg.functions { funcs_region::SIZE } else { 0 };
    let (lib, shm) =
        inject::library_and_region(c"sysmeter-calls-region", size as u64, &region::header())?;
    // With --functions no library call is hooked: an empty list of globs matches nothing.
    let globs = if cfg.functions {
        String::new()
    } else {
        choose::globs(&cfg.patterns)
    };
    let env = environment(&lib, &shm, &globs, every, cfg.functions);
    let start = clock_pair();
    let mut child = inject::launch(argv, &env)?;
    let (ended, waited) = inject::watch(&mut child, cfg.duration, || {})?;
    // A short run measures the counter's rate poorly: give it 20 ms at least.
    let elapsed = clock_pair().1 - start.1;
    if elapsed < 20_000_000 {
        std::thread::sleep(std::time::Duration::from_nanos(
            (20_000_000 - elapsed) as u64,
        ));
    }
    let end = clock_pair();
    let mut region = read_region(&shm)?;
    let mut functions = cfg.functions.then(|| read_functions(&shm)).transpose()?;
    let pid = child.pid() as u32;
    let not_entered = not_entered::read(&shm, |p| cfg.follow_forks || p == pid)?;
    if !cfg.follow_forks {
        // Without -f only the launched process counts (its exec'd images keep its pid).
        region.slots.retain(|s| s.claim.pid == pid);
        if let Some(f) = functions.as_mut() {
            f.threads.retain(|t| t.claim.pid == pid);
        }
    }
    let command = match waited {
        Some((x, _)) => CommandState::Exited(x.shell_code()),
        None => CommandState::StillRunning(inject::still_running(child, lib, shm)),
    };
    Ok(Outcome {
        region,
        ns_per_tick: ns_per_tick(start, end),
        every,
        session: Stopped::new(ended, command),
        cpu_ns: waited.map(|(_, u)| (u.user_ns + u.system_ns) as f64),
        functions,
        not_entered,
    })
}
