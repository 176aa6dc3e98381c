//! The in-kernel backend's two paths, on the one session loop (`observe::pump::run`): launch
//! a command (a gated child, armed so that its execve makes it a target) or attach to a
//! running process (its process id a target at once: the programs key by process, so every
//! thread, present or future, is in). Each calibrates first, then runs until the target
//! ends, Ctrl-C or `--duration`, reads the maps once and builds the trace's `Outcome`.

use std::ffi::OsString;

use sysmeter_sys::process::child::Child;

use super::super::run::Outcome;
use super::super::{Backend, CommandState, Ended, TraceConfig, TraceError, TraceObserver};
use super::maps::PerThread;
use super::{KernelTrace, Progress, calibrate, collect};
use crate::diagnose::observe::bpf::BpfError;
use crate::diagnose::observe::error::resolve_program;
use crate::diagnose::observe::overhead::Overhead;
use crate::diagnose::observe::pump::{self, Beside, LoopEnd, Watched};
use crate::diagnose::observe::session::{Pending, StopWhen, Stopped};
use crate::diagnose::observe::witness::IoCalls;

fn bpf_failed(e: BpfError) -> TraceError {
    TraceError::Io {
        what: e.what,
        error: std::io::Error::other(e.cause),
    }
}

/// The session's outcome from the maps: the calls of process `pid` (and with `-f` of every
/// process the programs followed from it).
fn outcome(
    k: &mut KernelTrace,
    cfg: &TraceConfig,
    (pid, overhead): (i32, Overhead),
    (ended, io): (Ended, IoCalls),
) -> Result<Outcome, TraceError> {
    let maps = k.read().map_err(bpf_failed)?;
    let keep = |p: u32| cfg.follow_forks || p == pid as u32;
    let settings = (cfg.selection.clone(), overhead.inside_ns());
    let (collector, threads) = collect(&maps, settings, keep, ended == Ended::Finished);
    let mut notes: Vec<String> = threads_note(&threads).into_iter().collect();
    if maps.errors_lost() > 0 {
        notes.push(format!(
            "{} failed calls are counted without their errno (the in-kernel errors map was \
             full)",
            maps.errors_lost()
        ));
    }
    Ok(Outcome {
        collector,
        overhead,
        backend: Backend::Bpf,
        why: String::new(),
        seccomp: false,
        notes,
        pinned_cpu: None,
        stats: None,
        io,
        session: Stopped {
            lost: maps.lost(),
            ..Stopped::new(ended, CommandState::NotLaunched)
        },
    })
}

/// The per-thread tally in one sentence, when more than one thread made calls.
fn threads_note(threads: &PerThread) -> Option<String> {
    let (busiest, most) = threads
        .iter()
        .max_by_key(|&(tid, n)| (*n, std::cmp::Reverse(*tid)))?;
    let total: u64 = threads.values().sum();
    (threads.len() > 1).then(|| {
        format!(
            "{} threads made system calls; the busiest, TID {busiest}, made {most} of the \
             {total}",
            threads.len()
        )
    })
}

/// Loads the programs and calibrates them.
fn loaded(k: Option<KernelTrace>) -> Result<(KernelTrace, Overhead), TraceError> {
    let mut k = match k {
        Some(k) => k,
        None => super::available().map_err(|r| TraceError::Io {
            what: "loading the in-kernel programs".into(),
            error: std::io::Error::other(r.0),
        })?,
    };
    let overhead =
        calibrate::overhead(&mut k).map_err(TraceError::io("calibrating the in-kernel backend"))?;
    Ok((k, overhead))
}

/// Drains `k` until `target` ends or `stop` says so, sampling `/proc/PID/io` of `pid`.
fn watch(
    k: &mut KernelTrace,
    pid: i32,
    target: Watched<'_>,
    stop: &mut StopWhen<'_>,
) -> std::io::Result<(LoopEnd, IoCalls)> {
    let mut io = IoCalls::default();
    io.sample(pid);
    let mut progress = Progress::default();
    let mut source = Beside(k, || io.sample(pid));
    let end = pump::run(&mut source, &mut progress, target, stop)?;
    Ok((end, io))
}

/// Launches `argv` as a target from its execve on; `k`: the programs the backend choice
/// loaded.
pub(in crate::diagnose::trace) fn launch(
    cfg: &TraceConfig,
    argv: &[OsString],
    k: Option<KernelTrace>,
) -> Result<Outcome, TraceError> {
    let program = resolve_program(&argv[0])?;
    let args: Vec<&std::ffi::OsStr> = argv.iter().map(OsString::as_os_str).collect();
    let (mut k, overhead) = loaded(k)?;
    let mut child = Child::spawn(&program, &args)
        .map_err(TraceError::io(format!("starting {}", program.display())))?;
    let pid = child.pid();
    k.arm(pid).map_err(bpf_failed)?;
    child
        .release()
        .map_err(TraceError::io("letting the command start"))?;
    let mut stop = StopWhen::until(cfg.duration, None);
    let ((ended, exit), io) = watch(&mut k, pid, Watched::Command(&mut child), &mut stop)
        .map_err(TraceError::io("waiting for the command"))?;
    let mut out = outcome(&mut k, cfg, (pid, overhead), (ended, io))?;
    out.session.command = match exit {
        Some((exit, _)) => CommandState::Exited(exit.shell_code()),
        None => CommandState::StillRunning(Pending::gated(child)),
    };
    Ok(out)
}

/// Traces running process `pid` until it ends, Ctrl-C or `--duration`.
pub(in crate::diagnose::trace) fn attach(
    cfg: &TraceConfig,
    pid: i32,
    k: Option<KernelTrace>,
    observer: &mut dyn TraceObserver,
) -> Result<Outcome, TraceError> {
    let (mut k, overhead) = loaded(k)?;
    k.target(pid).map_err(bpf_failed)?;
    let threads = std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|d| d.count())
        .map_err(|_| TraceError::NoProcess(pid))?;
    observer.attached(&super::super::run::attached_text(pid, threads, "BPF"));
    let mut stop = StopWhen::until(cfg.duration, Some(observer));
    let ((ended, _), io) = watch(&mut k, pid, Watched::Process(pid), &mut stop)
        .map_err(TraceError::io("watching the process"))?;
    outcome(&mut k, cfg, (pid, overhead), (ended, io))
}
