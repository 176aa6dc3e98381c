//! The tracepoint backend's two paths: launch a command (a gated child; events opened on
//! its pid with `enable_on_exec` before it may exec) and attach to a running process (events
//! per thread, rescanning `/proc/PID/task` until no new thread shows up). The tracee never
//! stops, so nothing is pinned; stopping the trace just closes the events.

use std::ffi::{CString, OsString};

use sysmeter_sys::process::child::Child;

use super::super::calibrate;
use super::super::names::Arch;
use super::super::summary::Collector;
use super::super::tracepoint::{self, Calls, Ids, OpenSpec, Rings};
use super::super::{Backend, CommandState, Ended, TraceConfig, TraceError, TraceObserver};
use super::{Outcome, StopWhen, each_thread, online_cpus};
use crate::diagnose::observe::error::resolve_program;
use crate::diagnose::observe::pump::{self, Beside, Watched};
use crate::diagnose::observe::session::{Pending, Stopped};
use crate::diagnose::observe::witness::IoCalls;

fn kernel_filter(cfg: &TraceConfig) -> Option<CString> {
    let arch = Arch::native();
    cfg.selection
        .as_ref()
        .and_then(|s| tracepoint::filter_for(&s.numbers(arch)))
}

fn outcome(calls: Calls, overhead: calibrate::Overhead) -> Outcome {
    Outcome {
        collector: calls.collector,
        overhead,
        backend: Backend::Tracepoint,
        why: String::new(),
        seccomp: false,
        notes: Vec::new(),
        session: Stopped {
            lost: calls.lost,
            ..Stopped::new(Ended::Finished, CommandState::NotLaunched)
        },
        pinned_cpu: None,
        stats: None,
        io: IoCalls::default(),
    }
}

/// A perf error: a permission problem says how to fix it; anything else names `what`.
fn perf_failed(what: &'static str) -> impl Fn(std::io::Error) -> TraceError {
    move |e| match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => open_failed(e),
        _ => TraceError::Io {
            what: what.into(),
            error: e,
        },
    }
}

fn open_failed(e: std::io::Error) -> TraceError {
    match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => TraceError::TracepointsUnavailable {
            reason: format!("perf_event_open refused the raw_syscalls events ({e})"),
            fix: "run as root or `sysctl kernel.perf_event_paranoid=-1`".into(),
        },
        _ => TraceError::Io {
            what: "opening the raw_syscalls perf events".into(),
            error: e,
        },
    }
}

/// Launches `argv` with tracepoints on it from its execve on.
pub(super) fn launch(
    cfg: &TraceConfig,
    argv: &[OsString],
    ids: Ids,
) -> Result<Outcome, TraceError> {
    let program = resolve_program(&argv[0])?;
    let args: Vec<&std::ffi::OsStr> = argv.iter().map(OsString::as_os_str).collect();
    let cpus = online_cpus();
    let (overhead, calibration) = calibrate::tracepoint_overhead(ids, &cpus)
        .map_err(perf_failed("calibrating the tracepoint overhead"))?;
    let collector = Collector::new(cfg.selection.clone(), overhead.inside_ns());
    let mut child = Child::spawn(&program, &args)
        .map_err(TraceError::io(format!("starting {}", program.display())))?;
    let spec = OpenSpec {
        targets: &[child.pid()],
        cpus: &cpus,
        follow_forks: cfg.follow_forks,
        enable_on_exec: true,
        filter: kernel_filter(cfg),
        paths: &[],
    };
    let mut rings = Rings::open(ids, &spec).map_err(open_failed)?;
    drop(calibration);
    // The kernel's read and write counts, from the exec on, until the last look before
    // the command is reaped.
    let mut io = IoCalls::default();
    io.sample(child.pid());
    child
        .release()
        .map_err(TraceError::io("letting the command start"))?;
    let mut stop = StopWhen::until(cfg.duration, None);
    let mut calls = rings.calls(collector);
    let pid = child.pid();
    let watched = Watched::Command(&mut child);
    let mut source = Beside(&mut rings, || io.sample(pid));
    let (ended, exit) = pump::run(&mut source, &mut calls, watched, &mut stop)
        .map_err(TraceError::io("waiting for the command"))?;
    let mut out = outcome(calls, overhead);
    out.io = io;
    out.session.ended = ended;
    out.session.command = match exit {
        Some((exit, _)) => CommandState::Exited(exit.shell_code()),
        None => CommandState::StillRunning(Pending::gated(child)),
    };
    Ok(out)
}

/// Opens events on every thread of `pid`, rescanning until no new thread appears.
fn open_all_threads(ids: Ids, pid: i32, spec: &OpenSpec) -> Result<(Rings, usize), TraceError> {
    let mut rings = Rings::empty(ids, tracepoint::ring_size(spec.cpus.len()));
    let threads = each_thread(pid, |tid| rings.add(tid, spec))
        .map_err(open_failed)?
        .ok_or(TraceError::NoProcess(pid))?;
    Ok((rings, threads))
}

/// Traces running process `pid` with tracepoints until it ends, Ctrl-C or `--duration`.
pub(super) fn attach(
    cfg: &TraceConfig,
    pid: i32,
    ids: Ids,
    observer: &mut dyn TraceObserver,
) -> Result<Outcome, TraceError> {
    let cpus = online_cpus();
    let (overhead, calibration) = calibrate::tracepoint_overhead(ids, &cpus)
        .map_err(perf_failed("calibrating the tracepoint overhead"))?;
    let collector = Collector::new(cfg.selection.clone(), overhead.inside_ns());
    let spec = OpenSpec {
        targets: &[],
        cpus: &cpus,
        follow_forks: cfg.follow_forks,
        enable_on_exec: false,
        filter: kernel_filter(cfg),
        paths: &[],
    };
    let (mut rings, threads) = open_all_threads(ids, pid, &spec)?;
    rings.enable().map_err(open_failed)?;
    drop(calibration);
    observer.attached(&super::attached_text(pid, threads, "tracepoints"));
    let mut stop = StopWhen::until(cfg.duration, Some(observer));
    let mut io = IoCalls::default();
    io.sample(pid);
    let mut calls = rings.calls(collector);
    let mut source = Beside(&mut rings, || io.sample(pid));
    let (ended, _) = pump::run(&mut source, &mut calls, Watched::Process(pid), &mut stop)
        .map_err(TraceError::io("watching the process"))?;
    let mut out = outcome(calls, overhead);
    out.io = io;
    out.session.ended = ended;
    Ok(out)
}
