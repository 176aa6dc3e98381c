//! The ptrace backend's two paths: launch a command (TRACEME child, optional seccomp filter
//! for `-e`, tracer and tracee pinned to one CPU unless `--no-pin`) and attach to a running
//! process (PTRACE_SEIZE every thread; the tracer is pinned to the CPU the process last ran
//! on). Both calibrate the overhead with the same placement first.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::time::Duration;

use sysmeter_sys::ptrace::{Options, SpawnSpec, TracedChild, WaitTicker, spawn_traced};
use sysmeter_sys::seccomp::SeccompFilter;

use super::super::calibrate;
use super::super::names::Arch;
use super::super::ptrace::{AttachError, End, Session};
use super::super::summary::Collector;
use super::super::{Backend, CommandState, Ended, TraceConfig, TraceError, TraceObserver};
use super::{Outcome, PendingKind, StopWhen, last_cpu};
use crate::diagnose::observe::error::resolve_program;
use crate::diagnose::observe::session::{Pending, Stopped};

/// How often a blocked `waitpid` wakes up to check Ctrl-C and `--duration`.
const TICK: Duration = Duration::from_millis(50);

/// Pins the tracer to `cpu` (or the CPU it is on now); the CPU it ended up on.
fn pin_to(cpu: Option<usize>) -> Option<usize> {
    let cpu = cpu.or_else(sysmeter_sys::sched::current_cpu)?;
    sysmeter_sys::sched::pin_current_thread(cpu).ok()?;
    Some(cpu)
}

fn c_strings(argv: &[OsString]) -> Result<Vec<CString>, TraceError> {
    argv.iter()
        .map(|a| {
            CString::new(a.as_bytes()).map_err(|_| {
                TraceError::CommandNotFound(format!(
                    "{} (contains a NUL byte)",
                    a.to_string_lossy()
                ))
            })
        })
        .collect()
}

/// What both paths set up before tracing: the overhead calibration (a traced child forked
/// with or without the `-e` seccomp filter, pinned to `cpu` when given), the collector that
/// subtracts it, and the ticker that wakes a blocked `waitpid` (it stops when dropped).
fn prepare(
    cfg: &TraceConfig,
    seccomp: bool,
    cpu: Option<usize>,
) -> Result<(calibrate::Overhead, Collector, WaitTicker), TraceError> {
    let overhead = calibrate::ptrace_overhead(seccomp, cpu).map_err(TraceError::io(
        "calibrating the ptrace overhead (forking a traced child)",
    ))?;
    let collector = Collector::new(cfg.selection.clone(), overhead.inside_ns());
    let ticker =
        WaitTicker::start(TICK).map_err(TraceError::io("installing the SIGALRM ticker"))?;
    Ok((overhead, collector, ticker))
}

fn outcome(collector: Collector, overhead: calibrate::Overhead, cpu: Option<usize>) -> Outcome {
    Outcome {
        collector,
        overhead,
        backend: Backend::Ptrace,
        why: String::new(),
        seccomp: false,
        notes: Vec::new(),
        session: Stopped::new(Ended::Finished, CommandState::NotLaunched),
        pinned_cpu: cpu,
        io: Default::default(),
        stats: None,
    }
}

/// Launches `argv` under ptrace and traces it to its end (or Ctrl-C / `--duration`).
pub(super) fn launch(cfg: &TraceConfig, argv: &[OsString]) -> Result<Outcome, TraceError> {
    let program = resolve_program(&argv[0])?;
    let program_c = c_strings(&[program.clone().into_os_string()])?.remove(0);
    let argv_c = c_strings(argv)?;
    let cpu = if cfg.pin { pin_to(None) } else { None };
    let arch = Arch::native();
    let filter = cfg
        .selection
        .as_ref()
        .and_then(|s| SeccompFilter::trace_only(arch.audit(), &s.numbers(arch)));
    let seccomp = filter.is_some();
    let (overhead, mut collector, _ticker) = prepare(cfg, seccomp, cpu)?;
    let spec = SpawnSpec {
        program: &program_c,
        argv: &argv_c,
        cpu,
        seccomp: filter.as_ref(),
        options: Options {
            // With a seccomp filter every descendant must stay traced (see seccomp.rs).
            follow_forks: cfg.follow_forks || seccomp,
            seccomp,
            exit_kill: true,
        },
    };
    let (child, mut session) = start(&spec, cfg.follow_forks, &program)?;
    let mut stop = StopWhen::until(cfg.duration, None);
    let end = session
        .run(&mut collector, &mut |c| stop.check(c.total_calls()))
        .map_err(TraceError::io("waiting for the traced command"))?;
    let mut out = outcome(collector, overhead, cpu);
    out.seccomp = seccomp;
    out.session.ended = stop.why.unwrap_or(Ended::Finished);
    out.stats = Some(session.stats);
    out.session.command = after_launch(end, session, child, &mut out)?;
    Ok(out)
}

/// Spawns the command under ptrace and resumes it.
fn start(
    spec: &SpawnSpec,
    follow_forks: bool,
    program: &std::path::Path,
) -> Result<(TracedChild, Session), TraceError> {
    let shown = program.display();
    let child =
        spawn_traced(spec).map_err(TraceError::io(format!("starting {shown} under ptrace")))?;
    let seccomp = spec.seccomp.is_some();
    let session = Session::launched(child.pid(), seccomp, follow_forks, true);
    let resuming = format!("resuming traced PID {}", child.pid());
    session.start().map_err(TraceError::io(resuming))?;
    Ok((child, session))
}

/// What happens to the command after the trace loop returned `end`.
fn after_launch(
    end: End,
    mut session: Session,
    mut child: TracedChild,
    out: &mut Outcome,
) -> Result<CommandState, TraceError> {
    Ok(match end {
        End::AllGone => {
            child.reaped();
            CommandState::Exited(session.exit_code.unwrap_or(0))
        }
        End::Requested if out.seccomp => {
            session.stop_recording();
            out.collector.drop_open();
            out.notes.push(
                "the command keeps running under the tracer (silently) until it ends: its \
                 seccomp filter would make the selected calls fail without a tracer"
                    .into(),
            );
            let pending = PendingKind::Silent(Box::new(session), child);
            CommandState::StillRunning(Pending::new(pending))
        }
        End::Requested => detach(&mut session, out, child)?,
    })
}

fn detach(
    session: &mut Session,
    out: &mut Outcome,
    mut child: TracedChild,
) -> Result<CommandState, TraceError> {
    let left = session
        .detach_all(&mut out.collector)
        .map_err(TraceError::io("detaching from the traced command"))?;
    if left > 0 {
        out.notes.push(format!(
            "{left} thread(s) did not stop within 5 s to be detached"
        ));
    }
    Ok(match session.exit_code {
        Some(code) => {
            child.reaped();
            CommandState::Exited(code)
        }
        None => CommandState::StillRunning(Pending::new(PendingKind::Detached(child))),
    })
}

/// Attaches to every thread of `pid` and traces until it ends, Ctrl-C or `--duration`,
/// then detaches, leaving it running.
pub(super) fn attach(
    cfg: &TraceConfig,
    pid: i32,
    observer: &mut dyn TraceObserver,
) -> Result<Outcome, TraceError> {
    let cpu = if cfg.pin { pin_to(last_cpu(pid)) } else { None };
    let (overhead, mut collector, _ticker) = prepare(cfg, false, None)?;
    let mut session = Session::attach(pid, cfg.follow_forks).map_err(|e| match e {
        AttachError::NoProcess => TraceError::NoProcess(pid),
        AttachError::Refused(error) => TraceError::refused(pid, error),
        AttachError::Other(error) => TraceError::Io {
            what: format!("attaching to PID {pid}"),
            error,
        },
    })?;
    observer.attached(&super::attached_text(pid, session.task_count(), "ptrace"));
    let mut stop = StopWhen::until(cfg.duration, Some(observer));
    let end = session
        .run(&mut collector, &mut |c| stop.check(c.total_calls()))
        .map_err(TraceError::io(format!("following PID {pid}")))?;
    let mut out = outcome(collector, overhead, cpu);
    out.session.ended = stop.why.unwrap_or(Ended::Finished);
    if cfg.selection.is_some() {
        out.notes.push(
            "-e with -p: every call still stops the process (a seccomp filter cannot be added \
             to a running process); only the selected calls are counted"
                .into(),
        );
    }
    if end == End::Requested {
        let left = session
            .detach_all(&mut out.collector)
            .map_err(TraceError::io(format!("detaching from PID {pid}")))?;
        if left > 0 {
            out.notes.push(format!(
                "{left} thread(s) of PID {pid} did not stop within 5 s to be detached"
            ));
        }
    }
    out.stats = Some(session.stats);
    Ok(out)
}
