//! `sysmeter calls`: library calls of a launched command or a running process — per function
//! the count, total, mean and median inclusive time, share of the traced time and the calling
//! threads, sorted like `strace -c` (an `ltrace -c` that works with BIND_NOW and threads).
//!
//! Two backends (docs/calls.md), chosen by [`inproc::choose`]: for a launched, dynamically
//! linked program, a preloaded library counts the calls in the process ([`inproc`]);
//! otherwise uprobes. The uprobe mechanism: uprobes and uretprobes defined in tracefs (`probes`) on the
//! program's PLT stubs or a library's definitions ([`select`], read from ELF by `observe::elf`),
//! opened as tracepoints through perf_event_open with `inherit` and read from one ring per CPU
//! (`rings`); the program never stops. Entries and returns are paired per thread
//! (`collector`) after the per-call probe cost, measured first (`calibrate`), is
//! subtracted. The result is one [`ExperimentResult`] (`calls`) with a metric per function.
//!
//! `--functions` ([`functions`]) uses the in-process library's -finstrument-functions hooks
//! instead: exact calls of the program's own functions per caller → callee edge, with self
//! and inclusive time, as the `calls.functions` result.
//!
//! Depends on `model`, `stats`, `host`, `diagnose::trace` (its errors, overhead, target
//! checks) and sysmeter-sys; never on `store`, `report` or `commands`.

mod calibrate;
mod collector;
pub mod functions;
pub mod inproc;
mod probes;
mod record;
mod rings;
pub mod select;
mod session;

use std::time::Duration;

pub use inproc::choose::Backend;
pub use select::{DEFAULT_SET, Pattern};

use crate::diagnose::observe::backend::{Reason, Request, Unavailable};
use crate::diagnose::observe::error::ObserveError;
use crate::diagnose::observe::inject;
use crate::diagnose::observe::session::{CommandState, Ended, Observer, Stopped, Watch};
use crate::diagnose::observe::target::Target;
use crate::model::{ExperimentResult, Finding};

/// The result id of a `calls` run.
pub const CALLS_ID: &str = "calls";

/// A validated `calls` configuration.
#[derive(Debug, Clone)]
pub struct CallsConfig {
    /// Command or process.
    pub target: Target,
    /// `-e`: the functions (the default set when not given).
    pub patterns: Vec<Pattern>,
    /// `-f`: follow child processes (threads are always followed).
    pub follow_forks: bool,
    /// `--duration`.
    pub duration: Option<Duration>,
    /// `--backend`.
    pub backend: Request<Backend>,
    /// In process: 1 in this many calls timed per function and thread (1: every call).
    pub every: u64,
    /// `--functions`: the program's own functions through -finstrument-functions.
    pub functions: bool,
}

/// Why `calls` could not run.
#[derive(Debug, thiserror::Error)]
pub enum CallsError {
    /// Launching or attaching failed as it would for `trace`.
    #[error(transparent)]
    Target(#[from] ObserveError),
    /// Nothing matched `-e`.
    #[error("no function of {object} matches -e {patterns}; {hint}")]
    NothingMatches {
        /// The program.
        object: String,
        /// The patterns as given.
        patterns: String,
        /// What it imports, or why nothing can be probed.
        hint: String,
    },
    /// The program is not an ELF file sysmeter can read.
    #[error("{0}; give the program itself (e.g. the interpreter of a script)")]
    Elf(#[from] crate::diagnose::observe::elf::ElfError),
    /// The in-process backend was asked for where it cannot work.
    #[error(transparent)]
    BackendUnavailable(#[from] Unavailable),
    /// `--functions` cannot count this program.
    #[error("{0}")]
    Backend(String),
    /// Uprobes cannot be used here.
    #[error("uprobes unavailable: {reason}; {fix}")]
    Unavailable {
        /// What is missing.
        reason: String,
        /// How to fix it.
        fix: String,
    },
}

impl CallsError {
    /// Whether the user gave something that cannot be traced, or must change a setting
    /// first (exit 2).
    pub fn is_usage(&self) -> bool {
        match self {
            CallsError::Target(t) => t.is_usage(),
            // Missing privileges or tracefs are the user's to fix, as for `locks` and
            // `profile --off-cpu` (exit 2).
            CallsError::NothingMatches { .. }
            | CallsError::Elf(_)
            | CallsError::Backend(_)
            | CallsError::BackendUnavailable(_)
            | CallsError::Unavailable { .. } => true,
        }
    }

    /// The shell's code when the command cannot be started (127, 126).
    pub fn exit_code(&self) -> Option<u8> {
        match self {
            CallsError::Target(t) => t.exit_code(),
            _ => None,
        }
    }
}

/// The result of a `calls` run.
#[derive(Debug)]
pub struct CallsOutput {
    /// The `calls` experiment result.
    pub result: ExperimentResult,
    /// Why tracing ended.
    pub ended: Ended,
    /// The launched command's fate.
    pub command: CommandState,
    /// CPU time of the launched command with the probes' cost taken out (calls × the
    /// measured on-CPU cost per probed call), ns.
    pub cpu_ns: Option<f64>,
}

impl CallsOutput {
    fn new(result: ExperimentResult, session: Stopped, cpu_ns: Option<f64>) -> CallsOutput {
        CallsOutput {
            result,
            ended: session.ended,
            command: session.command,
            cpu_ns,
        }
    }
}

/// Traces the library calls of `cfg.target` to its end (or Ctrl-C, or `--duration`). The
/// caller installs the Ctrl-C flag first.
pub fn calls(cfg: &CallsConfig, observer: &mut dyn Observer) -> Result<CallsOutput, CallsError> {
    use inproc::choose::{backend, why_not};
    let watch = Watch::start();
    let program = match &cfg.target {
        Target::Launch(argv) => crate::diagnose::observe::error::resolve_program(&argv[0])?,
        Target::Attach(pid) => std::path::PathBuf::from(format!("/proc/{pid}/exe")),
    };
    let why = why_not(&cfg.target, &program, &cfg.patterns);
    if cfg.functions {
        return functions_run(cfg, &program, why, (watch, observer));
    }
    let chosen = backend(cfg.backend, why).map_err(CallsError::BackendUnavailable)?;
    let sentence = chosen.line("");
    let chosen = chosen.backend;
    if chosen == Backend::InProcess {
        inproc::choose::check_imports(&program, &cfg.patterns)?;
    }
    observer.attached(&sentence);
    if let (Backend::InProcess, Target::Launch(argv)) = (chosen, &cfg.target) {
        let mut out = inproc::run(cfg, argv, cfg.every)?;
        out.session.watched = watch.read();
        let mut result = inproc::record::build(&out, &cfg.target.text(), &sentence);
        out.not_entered.into_findings(&mut result.findings);
        // In process nothing travels through a ring: nothing is lost on the way, only the
        // programs the library could not enter go uncounted.
        out.session.lost = out.not_entered.count();
        result.session = Some(out.session.end(None));
        return Ok(CallsOutput::new(result, out.session, out.cpu_ns));
    }
    let started = std::time::Instant::now();
    let mut out = session::run(cfg, observer)?;
    out.session.watched = watch.read();
    let mut result = record::build(&out, cfg, started.elapsed());
    let launched = matches!(cfg.target, Target::Launch(_));
    if launched && !out.opened_after_exec && inject::changes_ids(&program) {
        not_seen_after_setuid_exec(&program, &mut result.findings);
    }
    result.session = Some(out.session.end(None));
    let probes = out.collector.total_calls() as f64 * out.added_cpu_ns;
    let cpu_ns = out.cpu_ns.map(|c| (c - probes).max(0.0));
    Ok(CallsOutput::new(result, out.session, cpu_ns))
}

/// Says first that a launched setuid or setgid program's calls were not seen: the kernel
/// removed the probes at its exec (never "0 calls" without the reason).
fn not_seen_after_setuid_exec(program: &std::path::Path, findings: &mut Vec<Finding>) {
    let why = format!(
        "{} is setuid or setgid to another user, and the kernel removes a process's probes \
         when it execs such a program, so its calls were not seen (attach to it with -p PID \
         once it runs, or launch a copy without the setuid bit)",
        program.display()
    );
    match findings.iter_mut().find(|f| f.key == "lost") {
        Some(f) => f.text = format!("Not counted: {why}. {}", f.text),
        None => findings.insert(
            0,
            Finding::new("lost", format!("Not counted: {why}."), None),
        ),
    }
}

/// `--functions`: the in-process backend only, on a program built for it.
fn functions_run(
    cfg: &CallsConfig,
    program: &std::path::Path,
    why: Option<Reason>,
    (watch, observer): (Watch, &mut dyn Observer),
) -> Result<CallsOutput, CallsError> {
    if let Some(why) = why {
        return Err(CallsError::Backend(format!(
            "--functions works in process only, and here {why}: launch the program itself \
             (see docs/calls.md)"
        )));
    }
    if let Some(why) = functions::check(program) {
        return Err(CallsError::Backend(why));
    }
    let Target::Launch(argv) = &cfg.target else {
        return Err(CallsError::Backend("--functions launches a command".into()));
    };
    let sentence = "backend: inproc (-finstrument-functions hooks in the process)";
    observer.attached(sentence);
    let mut out = inproc::run(cfg, argv, cfg.every)?;
    out.session.watched = watch.read();
    let mut result = functions::record::build(&out, program, &cfg.target.text(), sentence);
    result.session = Some(out.session.end(None));
    Ok(CallsOutput::new(result, out.session, out.cpu_ns))
}
