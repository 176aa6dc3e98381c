//! The life of a session, the same for every diagnosis: why it ended ([`Ended`]: the target
//! finished, Ctrl-C, or `--duration`), the one stop rule checked between drains
//! ([`StopWhen`] for the tracers that count events, [`launched_stop`] for a launched command
//! watched until it exits), what became of a launched command ([`CommandState`], with a
//! [`Pending`] command still to be waited for), the observer the command layer shows
//! progress through ([`Observer`]: `diagnose` never prints), and the wait that passes Ctrl-C
//! on to a launched command and kills it after a grace period ([`wait_for_end`]); the
//! findings of how a session ended ([`process_exited`], [`tracing_stopped`]); what observing
//! took ([`Watch`]: the wall time and sysmeter's own CPU time); the one end of a session
//! every diagnosis embeds in its result ([`end`], a [`SessionEnd`]).
//!
//! Depends on `sysmeter_sys` (the Ctrl-C flag, child processes) and [`super::error`].

use std::time::{Duration, Instant};

use sysmeter_sys::process::child::Child;
use sysmeter_sys::process::exit::{ChildUsage, Exit};

use super::error::ObserveError;
use super::overhead::CpuOf;
use super::witness::Blinded;
pub use crate::model::SessionEnd;
use crate::model::{Finding, units};

/// How long a command may take to exit after Ctrl-C before it is killed.
const GRACE: Duration = Duration::from_secs(3);
/// How often [`wait_for_end`] looks at the command.
const WAIT_POLL: Duration = Duration::from_millis(20);

/// A launched command's end: how it exited and what it used.
pub type Exited = (Exit, ChildUsage);

/// Why a session ended: the one answer of every diagnosis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// The command or process ended.
    Finished,
    /// Ctrl-C (SIGINT/SIGTERM).
    Interrupted,
    /// `--duration` passed.
    Duration,
}

impl Ended {
    /// The word a result's [`SessionEnd`] says it with.
    pub fn word(self) -> &'static str {
        match self {
            Ended::Finished => "finished",
            Ended::Interrupted => "interrupted",
            Ended::Duration => "duration",
        }
    }
}

/// The end of a session as every diagnosis embeds it in its result: why it `ended`, the
/// launched command's `exit_code`, the wall and own CPU time `watched` ([`Watch::read`]),
/// the records `lost`, and the tracepoint hidden when the witness found it `blinded`.
pub fn end(
    ended: Ended,
    exit_code: Option<i32>,
    (wall_ns, own_cpu_ns): (u64, u64),
    lost: u64,
    blinded: Option<&Blinded>,
) -> SessionEnd {
    SessionEnd {
        ended: ended.word().into(),
        exit_code,
        wall_ns,
        own_cpu_ns,
        lost,
        blinded: blinded.map(|b| b.witness.event.to_string()),
    }
}

/// How a session stopped, as a diagnosis holds it until its result is built: why observing
/// `ended`, what became of a launched `command` (still to be waited for when it outlived the
/// session), the wall and own CPU time `watched` ([`Watch::read`]) and the records `lost` on
/// the way. [`Stopped::end`] makes it the result's [`SessionEnd`] once the witness judged.
#[derive(Debug)]
pub struct Stopped {
    /// Why observing stopped.
    pub ended: Ended,
    /// What became of a launched command.
    pub command: CommandState,
    /// Wall time and this process's CPU time observed, ns.
    pub watched: (u64, u64),
    /// Records lost on the way (full rings, full maps).
    pub lost: u64,
}

/// A session that ended by itself with nothing launched, as a result built from data
/// alone (tests, the uprobe backend's maps) starts.
impl Default for Stopped {
    fn default() -> Stopped {
        Stopped::new(Ended::Finished, CommandState::NotLaunched)
    }
}

impl Stopped {
    /// A session on a target that ended by itself, nothing lost and nothing measured yet
    /// (each path fills in what it saw).
    pub fn new(ended: Ended, command: CommandState) -> Stopped {
        Stopped {
            ended,
            command,
            watched: (0, 0),
            lost: 0,
        }
    }

    /// Whether a command was launched (not `-p`).
    pub fn launched(&self) -> bool {
        !matches!(self.command, CommandState::NotLaunched)
    }

    /// The result's [`SessionEnd`], with the witness's verdict when it found the mechanism
    /// `blinded`.
    pub fn end(&self, blinded: Option<&Blinded>) -> SessionEnd {
        end(
            self.ended,
            exit_of(&self.command),
            self.watched,
            self.lost,
            blinded,
        )
    }

    /// [`ended_by_exit`]: the finding of a `-p` process whose exit ended the session
    /// `after_ns` into it.
    pub fn exited(&self, after_ns: u64) -> Option<Finding> {
        ended_by_exit(self.ended, self.launched(), after_ns)
    }

    /// [`tracing_stopped`] of this session (`detached`: what became of a `-p` process).
    pub fn tracing_stopped(&self, detached: &str) -> Option<Finding> {
        tracing_stopped(self.ended, &self.command, detached)
    }
}

/// The exit code a [`SessionEnd`] records of `command`: only a command that ended has one.
pub fn exit_of(command: &CommandState) -> Option<i32> {
    match command {
        CommandState::Exited(code) => Some(*code),
        _ => None,
    }
}

/// What became of a launched command.
#[derive(Debug)]
pub enum CommandState {
    /// Nothing was launched (`-p`).
    NotLaunched,
    /// It exited with this code (128 + signal when killed).
    Exited(i32),
    /// Observing stopped before it ended; wait for it with [`Pending::wait`].
    StillRunning(Pending),
}

/// A launched command that outlived the session, as its diagnosis left it (still traced,
/// detached, or only watched through perf events).
pub trait StillRunning: std::fmt::Debug {
    /// Waits for the command to end; its exit code (128 + signal when killed).
    fn wait(self: Box<Self>) -> Result<i32, ObserveError>;
}

/// A launched command that outlived the session; [`Pending::wait`] gives its exit code.
#[derive(Debug)]
pub struct Pending(Box<dyn StillRunning>);

/// A command watched only through perf events (closed now): still our child, waited for.
#[derive(Debug)]
struct Gated(Child);

impl StillRunning for Gated {
    fn wait(mut self: Box<Self>) -> Result<i32, ObserveError> {
        exit_code(self.0.wait(true)).map_err(ObserveError::io("waiting for the traced command"))
    }
}

impl Pending {
    /// A command left as `how` says.
    pub fn new(how: impl StillRunning + 'static) -> Pending {
        Pending(Box::new(how))
    }

    /// A launched command that was only watched through perf events (closed now).
    pub fn gated(child: Child) -> Pending {
        Pending::new(Gated(child))
    }

    /// Waits for the command to end; its exit code (128 + signal when killed).
    pub fn wait(self) -> Result<i32, ObserveError> {
        self.0.wait()
    }
}

/// The shell's exit code of a child that was waited for (blocking).
pub fn exit_code(waited: std::io::Result<Option<Exited>>) -> std::io::Result<i32> {
    waited?
        .map(|(exit, _)| exit.shell_code())
        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::WouldBlock))
}

/// Told what a session on a running process (`-p`) is doing, so the command layer can show
/// it (`diagnose` never prints).
pub trait Observer {
    /// Tracing has begun (one sentence saying what and how to stop).
    fn attached(&mut self, text: &str);
    /// Events counted so far (a few times a second at most).
    fn progress(&mut self, calls: u64);
}

/// How often the observer hears the running count.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Ctrl-C and `--duration`, checked between stops or drains; also passes the running count
/// to the observer of an attached trace (every `PROGRESS_EVERY`). `trace` and `calls`
/// both stop by it.
pub struct StopWhen<'o> {
    deadline: Option<Instant>,
    observer: Option<&'o mut dyn Observer>,
    next_progress: Instant,
    /// What stopped the trace, once it did.
    pub why: Option<Ended>,
    /// Whether Ctrl-C stops it (all but [`StopWhen::never`]).
    on_interrupt: bool,
}

impl<'o> StopWhen<'o> {
    /// Stops after `duration` (from now), if given, or on Ctrl-C.
    pub fn until(
        duration: Option<Duration>,
        observer: Option<&'o mut dyn Observer>,
    ) -> StopWhen<'o> {
        StopWhen {
            deadline: duration.map(|d| Instant::now() + d),
            observer,
            next_progress: Instant::now(),
            why: None,
            on_interrupt: true,
        }
    }

    /// Never stops: a session that only its source ends (`pump::UntilSet`: `run`'s lookup
    /// tracer, which must keep tracing through Ctrl-C while the command it traces, which
    /// receives the Ctrl-C too, finishes).
    pub fn never() -> StopWhen<'o> {
        StopWhen {
            deadline: None,
            observer: None,
            next_progress: Instant::now(),
            why: None,
            on_interrupt: false,
        }
    }

    /// Whether to stop now (remembering why), given the number of calls seen so far.
    pub fn check(&mut self, calls: u64) -> bool {
        if let Some(o) = self.observer.as_mut() {
            let now = Instant::now();
            if now >= self.next_progress {
                self.next_progress = now + PROGRESS_EVERY;
                o.progress(calls);
            }
        }
        if self.on_interrupt && sysmeter_sys::signal::interrupted() {
            self.why = Some(Ended::Interrupted);
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.why = Some(Ended::Duration);
        }
        self.why.is_some()
    }

    /// Why to stop now, if it is time (for the sessions that show no count of calls).
    pub fn now(&mut self) -> Option<Ended> {
        self.check(0);
        self.why
    }
}

/// When observation began, by the wall clock and by this process's CPU clock: the wall
/// time a session observed and the CPU time sysmeter spent reading its events (its cost).
#[derive(Debug, Clone, Copy)]
pub struct Watch {
    /// The start (`--duration` and the progress line count from it).
    pub start: Instant,
    cpu0: u64,
}

impl Watch {
    /// Starts both clocks now.
    pub fn start() -> Watch {
        Watch {
            start: Instant::now(),
            cpu0: process_cpu_ns(),
        }
    }

    /// The wall time since the start and this process's CPU time in it, ns.
    pub fn read(&self) -> (u64, u64) {
        let wall = u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        (wall, process_cpu_ns().saturating_sub(self.cpu0))
    }
}

fn process_cpu_ns() -> u64 {
    super::overhead::cpu_ns(CpuOf::Process).max(0.0) as u64
}

/// The finding of a tracing session (`trace`, `calls`) that Ctrl-C or `--duration` stopped,
/// with what became of the program: a launched command's fate is said the same way by every
/// tracer; `detached` (after "; ") says what became of a process traced with `-p`. `None`
/// when the program's own end stopped the session.
pub fn tracing_stopped(ended: Ended, command: &CommandState, detached: &str) -> Option<Finding> {
    let how = match ended {
        Ended::Finished => return None,
        Ended::Interrupted => "tracing stopped by Ctrl-C",
        Ended::Duration => "tracing stopped after --duration",
    };
    let then = match command {
        CommandState::NotLaunched => detached,
        CommandState::StillRunning(_) => "the command keeps running",
        CommandState::Exited(_) => "the command ended meanwhile",
    };
    Some(Finding::new("ended", format!("{how}; {then}"), None))
}

/// The finding of a session on a running process (`-p`) that ended because the process
/// exited, `after_ns` into the session. Every diagnosis says it the same way, so a reader of
/// a short report knows the process's end, not `--duration`, cut it short.
pub fn process_exited(after_ns: u64) -> Finding {
    Finding::new("ended", exited_sentence(after_ns), None)
}

/// [`process_exited`] when the session ended as `Finished` with no command launched: then
/// only the observed process's exit can have ended it (a launched command's end is said by
/// its exit status instead). The one rule of every `-p` diagnosis.
pub fn ended_by_exit(ended: Ended, launched: bool, after_ns: u64) -> Option<Finding> {
    (ended == Ended::Finished && !launched).then(|| process_exited(after_ns))
}

/// The sentence of [`process_exited`], for a diagnosis that gathers its notes as text.
pub fn exited_sentence(after_ns: u64) -> String {
    format!(
        "The process exited {} into the session; observing stopped with it (before any \
         --duration).",
        units::duration_ns(after_ns as f64)
    )
}

/// Why the observation of launched `child` ends now, if it does: the command ended (with
/// its exit), Ctrl-C, or `duration` passed since `start`.
pub fn launched_stop(
    child: &mut Child,
    start: Instant,
    duration: Option<Duration>,
) -> std::io::Result<Option<(Ended, Option<Exited>)>> {
    if let Some(info) = child.wait(false)? {
        return Ok(Some((Ended::Finished, Some(info))));
    }
    if sysmeter_sys::signal::interrupted() {
        return Ok(Some((Ended::Interrupted, None)));
    }
    Ok(duration
        .is_some_and(|d| start.elapsed() >= d)
        .then_some((Ended::Duration, None)))
}

/// Waits for the command to end. Once Ctrl-C arrived (before or during the wait), passes
/// SIGINT on to the command (the terminal's Ctrl-C reached it already, a signal sent to
/// sysmeter alone did not; a second SIGINT is harmless) and kills it if it is still running
/// `GRACE` later, so sysmeter never hangs on a command that ignores SIGINT.
pub fn wait_for_end(child: &mut Child) -> std::io::Result<Option<(Exit, ChildUsage)>> {
    let mut interrupted_at: Option<Instant> = None;
    loop {
        if let Some(info) = child.wait(false)? {
            return Ok(Some(info));
        }
        match interrupted_at {
            None if sysmeter_sys::signal::interrupted() => {
                let _ = child.signal(libc::SIGINT);
                interrupted_at = Some(Instant::now());
            }
            Some(at) if at.elapsed() >= GRACE => {
                let _ = child.signal(libc::SIGKILL);
                return child.wait(true);
            }
            _ => {}
        }
        std::thread::sleep(WAIT_POLL);
    }
}
