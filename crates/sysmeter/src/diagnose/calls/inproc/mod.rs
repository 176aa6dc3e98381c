//! The in-process backend of `calls` for launched, dynamically linked programs: sysmeter's
//! preload library (`sysmeter_sys::preload`) is handed to the command in a memfd
//! (`LD_PRELOAD=/proc/self/fd/N`, appended to any preload already set, with
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
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;

use sysmeter_sys::preload;
use sysmeter_sys::process::child::Child;

use super::{CallsConfig, CallsError};
use crate::diagnose::observe::error::{ObserveError, resolve_program};
use crate::diagnose::observe::session::{
    CommandState, Ended, Exited, Pending, launched_stop, wait_for_end,
};

/// Everything an in-process run produced.
#[derive(Debug)]
pub struct Outcome {
    /// The region as the run left it.
    pub region: region::Region,
    /// ns per counter tick, measured across the run.
    pub ns_per_tick: f64,
    /// 1 in this many calls timed per function and thread (1: every call).
    pub every: u64,
    /// Why it ended.
    pub ended: Ended,
    /// The command's fate.
    pub command: CommandState,
    /// CPU time of the command, ns.
    pub cpu_ns: Option<f64>,
    /// With `--functions`: what the -finstrument-functions hooks recorded.
    pub functions: Option<funcs_region::Functions>,
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> CallsError {
    let what = what.to_string();
    move |error| CallsError::Target(ObserveError::Io { what, error })
}

/// The command's environment: ours plus the preload library, the region and the choice.
fn environment(lib: &File, shm: &File, globs: &str, every: u64, functions: bool) -> Vec<OsString> {
    let lib_path = format!("/proc/self/fd/{}", lib.as_raw_fd());
    let mut env: Vec<OsString> = Vec::new();
    let mut preload = lib_path.clone();
    for (k, v) in std::env::vars_os() {
        let key = k.as_bytes();
        if key == b"LD_PRELOAD" && !v.is_empty() {
            // Ours last: the program's own preloads keep their precedence.
            preload = format!("{}:{lib_path}", v.to_string_lossy());
        } else if !key.starts_with(b"SYSMETER_CALLS_") && key != b"LD_BIND_NOW" {
            let mut kv = k.clone();
            kv.push("=");
            kv.push(&v);
            env.push(kv);
        }
    }
    env.push(format!("LD_PRELOAD={preload}").into());
    env.push("LD_BIND_NOW=1".into());
    env.push(format!("SYSMETER_CALLS_SHM={}", shm.as_raw_fd()).into());
    env.push(format!("SYSMETER_CALLS_FUNCS={globs}").into());
    env.push(format!("SYSMETER_CALLS_SAMPLE={every}").into());
    if functions {
        env.push("SYSMETER_CALLS_FUNCTIONS=1".into());
    }
    env
}

fn read_region(shm: &File) -> Result<region::Region, CallsError> {
    let mut head = vec![0u8; region::used_len(0)];
    shm.read_exact_at(&mut head, 0)
        .map_err(io("reading the calls region"))?;
    let mut all = vec![0u8; region::used_len(region::claimed(&head))];
    shm.read_exact_at(&mut all, 0)
        .map_err(io("reading the calls region"))?;
    Ok(region::parse(&all).unwrap_or_default())
}

/// The area of the -finstrument-functions hooks, after the slots.
fn read_functions(shm: &File) -> Result<funcs_region::Functions, CallsError> {
    let at = region::SIZE as u64;
    let mut head = vec![0u8; funcs_region::used_len(0)];
    shm.read_exact_at(&mut head, at)
        .map_err(io("reading the functions area"))?;
    let mut all = vec![0u8; funcs_region::used_len(funcs_region::claimed(&head))];
    shm.read_exact_at(&mut all, at)
        .map_err(io("reading the functions area"))?;
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

fn launch(argv: &[OsString], env: &[OsString]) -> Result<Child, CallsError> {
    let program = resolve_program(&argv[0])?;
    let env: Vec<&std::ffi::OsStr> = env.iter().map(OsString::as_os_str).collect();
    let args: Vec<&std::ffi::OsStr> = argv.iter().map(OsString::as_os_str).collect();
    let mut child =
        Child::spawn_env(&program, &args, Some(&env)).map_err(io("starting the command"))?;
    child.release().map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => CallsError::Target(ObserveError::CommandNotFound(
            argv[0].to_string_lossy().into_owned(),
        )),
        _ => io("starting the command")(e),
    })?;
    Ok(child)
}

/// Until the command ends, Ctrl-C (passed on; the command is waited for) or `--duration`
/// (the counts so far are read; the command keeps running).
fn watch(
    child: &mut Child,
    duration: Option<std::time::Duration>,
) -> Result<(Ended, Option<Exited>), CallsError> {
    let start = std::time::Instant::now();
    loop {
        let stop = launched_stop(child, start, duration).map_err(io("waiting for the command"))?;
        match stop {
            Some((Ended::Interrupted, _)) => {
                let waited = wait_for_end(child).map_err(io("waiting for the command"))?;
                return Ok((Ended::Interrupted, waited));
            }
            Some(done) => return Ok(done),
            None => std::thread::sleep(std::time::Duration::from_millis(20)),
        }
    }
}

/// Launches `argv` with the library and reads the region when it ends (or Ctrl-C, or
/// `--duration`).
pub fn run(cfg: &CallsConfig, argv: &[OsString], every: u64) -> Result<Outcome, CallsError> {
    let lib = preload::library_memfd().map_err(io("writing the preload library"))?;
    let mut shm = preload::inherited_memfd(c"sysmeter-calls-region")
        .map_err(io("creating the calls region"))?;
    let size = region::SIZE + if cfg.functions { funcs_region::SIZE } else { 0 };
    shm.set_len(size as u64)
        .and_then(|()| shm.write_all(&region::header()))
        .map_err(io("creating the calls region"))?;
    // With --functions no library call is hooked: an empty list of globs matches nothing.
    let globs = if cfg.functions {
        String::new()
    } else {
        choose::globs(&cfg.patterns)
    };
    let env = environment(&lib, &shm, &globs, every, cfg.functions);
    let start = clock_pair();
    let mut child = launch(argv, &env)?;
    let (ended, waited) = watch(&mut child, cfg.duration)?;
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
    if !cfg.follow_forks {
        // Without -f only the launched process counts (its exec'd images keep its pid).
        let pid = child.pid() as u32;
        region.slots.retain(|s| s.pid == pid);
        if let Some(f) = functions.as_mut() {
            f.threads.retain(|t| t.pid == pid);
        }
    }
    let command = match waited {
        Some((x, _)) => CommandState::Exited(x.shell_code()),
        None => CommandState::StillRunning(Pending::gated(child)),
    };
    Ok(Outcome {
        region,
        ns_per_tick: ns_per_tick(start, end),
        every,
        ended,
        command,
        cpu_ns: waited.map(|(_, u)| (u.user_ns + u.system_ns) as f64),
        functions,
    })
}
