//! `sysmeter run`: run a command (or watch a running process for a while) and say where its
//! time went — real, user and system time, CPU use relative to the CPUs it may use, peak
//! memory, page faults, context switches, bytes read and written — with a timeline of the
//! machine sampled from /proc while it ran (the vmstat / iostat / netstat view) and a
//! verdict from [`classify`].
//!
//! Submodules: `launch` (spawn, sample, reap with wait4), `attach` (/proc deltas of a running
//! process), `sample` (the only file reading), `procfs` and `timeline` (pure parsing and
//! rates), `measure` (the sampling loop's state), `record` (the [`RunRecord`]). Depends on
//! `model`, `stats`, `host`, `model::units` (through classify), [`target`](super::observe::target) and
//! `sysmeter_sys::process`;
//! never prints, never stores: the command does that.

mod attach;
pub mod classify;
mod launch;
mod lookups;
mod measure;
mod procfs;
mod record;
mod sample;
mod timeline;

use std::ffi::{OsStr, OsString};
use std::time::Duration;

pub use measure::Measurement;
pub use sysmeter_sys::process::exit::Exit;

use crate::diagnose::observe::lookups::StartLookups;
use crate::diagnose::observe::session::{CommandState, Ended, Stopped, Watch};
use crate::diagnose::observe::target::{Target, Unresolved};
use crate::diagnose::run::classify::Verdict;
use crate::model::{HostInfo, RunRecord};

/// Why `run` could not measure.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Nothing after `--`.
    #[error("no command to run; put it after `--`, e.g. `sysmeter run -- sleep 1`")]
    NoCommand,
    /// The command could not be started.
    #[error("cannot run `{command}`: {source}; check the name, PATH and the execute permission")]
    Spawn {
        /// The program.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// No such process.
    #[error("process {pid} does not exist; check the PID (e.g. with `ps -e`)")]
    NoProcess {
        /// The pid.
        pid: i32,
    },
    /// /proc/PID cannot be read.
    #[error(
        "cannot read /proc/{pid}/stat: {source}; the process may be hidden (hidepid) or \
         another user's: run as its owner or as root"
    )]
    Unreadable {
        /// The pid.
        pid: i32,
        /// Why.
        source: std::io::Error,
    },
    /// Waiting for or polling the process failed.
    #[error("waiting for process {pid} failed: {source}")]
    Wait {
        /// The pid.
        pid: i32,
        /// Why.
        source: std::io::Error,
    },
    /// The SIGINT/SIGTERM handler could not be installed.
    #[error("cannot install the Ctrl-C handler: {0}")]
    Signal(std::io::Error),
}

impl RunError {
    fn spawn(program: &OsStr, source: std::io::Error) -> RunError {
        RunError::Spawn {
            command: program.to_string_lossy().into_owned(),
            source,
        }
    }

    /// The shell's exit code for a command that could not be started: 127 when it was not
    /// found, 126 when it could not be executed; `None` for the other errors.
    pub fn spawn_exit_code(&self) -> Option<u8> {
        match self {
            RunError::Spawn { source, command } => {
                let program = std::path::Path::new(command);
                Some(Unresolved::of_exec_error(source, program).exit_code())
            }
            _ => None,
        }
    }
}

/// What `run` traces of a launched command's path lookups.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookupMode {
    /// The path-taking calls, their time and failures, and the paths (uprobes; root).
    Paths,
    /// The calls, their time and failures only.
    Calls,
    /// Nothing.
    Off,
}

/// What `run` traces of a launched command's path lookups, and the tracer that does it
/// (`trace`'s, handed in by the command: a diagnosis never imports another).
#[derive(Clone, Copy)]
pub struct LookupPlan {
    /// What to trace.
    pub mode: LookupMode,
    /// Opens the trace on the gated child.
    pub start: StartLookups,
}

/// The finished run.
#[derive(Debug)]
pub struct RunOutput {
    /// The record to store and render (kind `run`, one result `run`).
    pub record: RunRecord,
    /// The verdict (also in the record's findings).
    pub verdict: Verdict,
    /// How a launched command ended (`None` when attached).
    pub exit: Option<Exit>,
    /// Whether sysmeter received SIGINT/SIGTERM during the run.
    pub interrupted: bool,
}

/// The command line as one shell-like string (for titles and findings).
pub fn command_line(argv: &[OsString]) -> String {
    argv.iter()
        .map(|a| {
            let s = a.to_string_lossy();
            if s.is_empty() || s.contains(|c: char| c.is_whitespace() || "'\"$\\".contains(c)) {
                format!("'{}'", s.replace('\'', r"'\''"))
            } else {
                s.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// How long `-p PID` watches without `--duration`: until it exits or Ctrl-C.
const FOREVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// Runs `target` to its end (tracing its lookups as `lookups` says), or watches it for
/// `duration` (default: until it exits or Ctrl-C), sampling every `interval`.
pub fn run(
    target: &Target,
    (duration, interval): (Option<Duration>, Duration),
    lookups: LookupPlan,
    host: HostInfo,
) -> Result<RunOutput, RunError> {
    let interval = interval.max(Duration::from_millis(1));
    let started_ns = jiff::Timestamp::now().as_nanosecond() as i64;
    let watch = Watch::start();
    let (measurement, exit, exited) = match target {
        Target::Launch(argv) => {
            let l = launch::launch(argv, interval, lookups)?;
            (l.measurement, Some(l.exit), true)
        }
        Target::Attach(pid) => {
            let duration = duration.unwrap_or(FOREVER);
            let (measurement, exited) = attach::attach(*pid, duration, interval)?;
            (measurement, None, exited)
        }
    };
    let finished_ns = jiff::Timestamp::now().as_nanosecond() as i64;
    let interrupted = measurement.signal != 0;
    // The session's wall time is the real time measured: one wall time per run (issue 43),
    // not the watch's, which also holds the launch and setup around the command.
    let (_, own_cpu_ns) = watch.read();
    let session = Stopped {
        watched: (measurement.real_ns, own_cpu_ns),
        ..Stopped::new(ended(exited, interrupted, exit.is_some()), command(exit))
    };
    let (record, verdict) = record::build(record::Parts {
        target,
        measurement: &measurement,
        session,
        interval_ms: interval.as_millis() as u64,
        host,
        started_ns,
        finished_ns,
    });
    Ok(RunOutput {
        record,
        verdict,
        exit,
        interrupted,
    })
}

/// Why watching ended: a launched command is watched to its end (Ctrl-C, passed on to it,
/// is said as `interrupted`); an attached process by its exit, Ctrl-C or `--duration`.
fn ended(exited: bool, interrupted: bool, launched: bool) -> Ended {
    match (launched, exited, interrupted) {
        (true, _, true) | (false, false, true) => Ended::Interrupted,
        (true, _, false) | (false, true, _) => Ended::Finished,
        (false, false, false) => Ended::Duration,
    }
}

/// A launched command's state once `run` reaped it (`None`: attached).
fn command(exit: Option<Exit>) -> CommandState {
    exit.map_or(CommandState::NotLaunched, |e| {
        CommandState::Exited(e.shell_code())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_launched_command_is_watched_to_its_end_an_attached_one_until_a_stop() {
        assert_eq!(ended(true, false, true), Ended::Finished);
        assert_eq!(ended(true, true, true), Ended::Interrupted);
        assert_eq!(ended(true, false, false), Ended::Finished);
        assert_eq!(ended(false, true, false), Ended::Interrupted);
        assert_eq!(ended(false, false, false), Ended::Duration);
    }

    #[test]
    fn command_lines_quote_what_a_shell_would_split() {
        let argv: Vec<OsString> = ["sh", "-c", "exit 7", "it's"].map(OsString::from).to_vec();
        assert_eq!(command_line(&argv), r"sh -c 'exit 7' 'it'\''s'");
    }

    #[test]
    fn spawn_errors_map_to_shell_codes() {
        let nf = RunError::spawn(OsStr::new("x"), std::io::ErrorKind::NotFound.into());
        assert_eq!(nf.spawn_exit_code(), Some(127));
        let denied = RunError::spawn(OsStr::new("x"), std::io::ErrorKind::PermissionDenied.into());
        assert_eq!(denied.spawn_exit_code(), Some(126));
        assert_eq!(RunError::NoProcess { pid: 1 }.spawn_exit_code(), None);
    }
}
