//! The one runner of every diagnosis command (`run`, `trace`, `calls`, `profile`, `locks`,
//! `scale`). Each command validates its own arguments, then hands the runner two steps:
//! `observe` (the diagnosis itself) and `finish` (its output made into a run record).
//! Around them the runner does what every diagnosis must do the same way:
//!
//! 1. installs the Ctrl-C flag (a diagnosis stops cleanly on it and keeps what it saw);
//! 2. opens the sink *before* observing, so a bad `--out` or database fails first and
//!    nothing measured is lost to it;
//! 3. ends a failed diagnosis one way ([`DiagnosisError`]): a command that could not be
//!    started exits with the shell's code (126/127) and sentence, bad input is a usage error
//!    (exit 2), anything else a failure (exit 1);
//! 4. stores and prints the record, then passes the observed command's exit code through,
//!    waiting first for a command that outlived the session (`--duration`).

mod rounds;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::output::{Ending, Sink, Stream};
use super::{Outcome, UsageError, console};
use crate::cli::OutputArgs;
use crate::cli::target::{Rules, TargetArgs};
use crate::diagnose::observe::attachable::check_observable;
use crate::diagnose::observe::error::{ObserveError, resolve_program};
use crate::diagnose::observe::session::{CommandState, Observer};
use crate::diagnose::observe::target::Target;
use crate::diagnose::price;
use crate::host;
use crate::model::{ExperimentResult, RunConfig, RunKind, RunRecord};

/// How a diagnosis's error ends the command.
pub(super) trait DiagnosisError: std::error::Error + Send + Sync + 'static {
    /// The shell's code (126/127) when the observed command could not be started.
    fn exit_code(&self) -> Option<u8> {
        None
    }
    /// Whether the error is bad input (exit 2).
    fn is_usage(&self) -> bool;
}

impl DiagnosisError for ObserveError {
    fn exit_code(&self) -> Option<u8> {
        ObserveError::exit_code(self)
    }
    fn is_usage(&self) -> bool {
        ObserveError::is_usage(self)
    }
}

/// What a diagnosis produced, ready to store and print.
pub(super) struct Diagnosed {
    /// The record (kind, results, interrupted).
    pub run: RunRecord,
    /// How the observed command ended, for its exit code.
    pub command: CommandState,
    /// Whether the diagnosis itself failed part way (beyond a failed result).
    pub failed: bool,
    /// A line for stderr after the report (what an interruption kept, why it failed).
    pub epilogue: Option<String>,
}

impl Diagnosed {
    /// A record whose command ended as `command`.
    pub fn new(run: RunRecord, command: CommandState) -> Diagnosed {
        Diagnosed {
            run,
            command,
            failed: false,
            epilogue: None,
        }
    }
}

/// The target `args` name under `rules`, as a usage error (exit 2) when they name none or
/// name a PID that cannot be observed — checked before the store is opened or anything is
/// measured, the same way for every diagnosis.
pub(super) fn target(args: &TargetArgs, rules: Rules) -> Result<Target, UsageError> {
    let target = args.target(rules).map_err(|e| UsageError(e.to_string()))?;
    if let Target::Attach(pid) = target {
        check_observable(pid).map_err(|e| UsageError(e.to_string()))?;
    }
    Ok(target)
}

/// The target `args` name under `rules` ([`target`]), and for a command, whether it can be
/// started at all, before anything is opened: the `Err` is the outcome of a command that
/// cannot start, its sentence printed (`error: …`, the sentence of every diagnosis,
/// `ObserveError`) and the shell's exit code (127 not found, 126 not executable, from the one
/// mapping `observe::target::Unresolved::exit_code`). `profile` and `locks` check here; the
/// tracers find out at their launch, through the same error.
pub(super) fn checked_target(
    args: &TargetArgs,
    rules: Rules,
) -> anyhow::Result<Result<Target, Outcome>> {
    let target = target(args, rules)?;
    if let Target::Launch(argv) = &target {
        let program = argv.first().map(|a| a.as_os_str()).unwrap_or_default();
        if let Err(e) = resolve_program(program)
            && let Some(code) = e.exit_code()
        {
            console::errln(format!("error: {e}"));
            return Ok(Err(Outcome::Code(code)));
        }
    }
    Ok(Ok(target))
}

/// Runs one diagnosis: see the module documentation. `stream` is where the report goes
/// without `--out` (stderr when the observed command owns stdout). `finish` gets the sink
/// (to read the latest bench from its store) and when observing started.
pub(super) fn diagnose<O, E: DiagnosisError>(
    (output, stream): (&OutputArgs, Stream),
    observe: impl FnOnce() -> Result<O, E>,
    finish: impl FnOnce(O, &mut Sink, i64) -> anyhow::Result<Diagnosed>,
) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let mut sink = Sink::open(output, stream)?;
    let started_ns = now_ns();
    let observed = match observe() {
        Ok(o) => o,
        Err(e) => return failed(e),
    };
    let diagnosed = finish(observed, &mut sink, started_ns)?;
    end(sink, diagnosed)
}

/// [`diagnose`] `rounds` times (`--rounds N`) into one record: each round observes and
/// finishes as one diagnosis would; the record is the last round's, with every round's
/// aggregation kept in each result's rounds artifact (`model::tally`) and a finding saying
/// how many rounds were made. Ctrl-C or a round that fails ends the rounds early, keeping
/// those before it (said in the finding); a failure of the first round ends as [`diagnose`].
pub(super) fn diagnose_rounds<O, E: DiagnosisError>(
    (output, stream, rounds): (&OutputArgs, Stream, u32),
    mut observe: impl FnMut() -> Result<O, E>,
    mut finish: impl FnMut(O, &mut Sink, i64) -> anyhow::Result<Diagnosed>,
) -> anyhow::Result<Outcome> {
    if rounds <= 1 {
        return diagnose((output, stream), observe, finish);
    }
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let mut sink = Sink::open(output, stream)?;
    let started_ns = now_ns();
    let mut kept: Vec<Diagnosed> = Vec::new();
    for round in 1..=rounds {
        console::errln(format!("round {round} of {rounds}"));
        let observed = match observe() {
            Ok(o) => o,
            Err(e) if kept.is_empty() => return failed(e),
            Err(e) => {
                console::errln(format!(
                    "round {round} failed ({e}); keeping the rounds before it"
                ));
                break;
            }
        };
        let mut diagnosed = finish(observed, &mut sink, now_ns())?;
        let stop = diagnosed.run.interrupted || sysmeter_sys::signal::interrupted();
        // A command that outlived --duration ends before the next round starts.
        if round < rounds
            && !stop
            && let CommandState::StillRunning(pending) = diagnosed.command
        {
            diagnosed.command = CommandState::Exited(pending.wait()?);
        }
        kept.push(diagnosed);
        if stop {
            break;
        }
    }
    let mut diagnosed = rounds::merged(kept, rounds)?;
    diagnosed.run.started_ns = started_ns;
    end(sink, diagnosed)
}

/// Stores and prints the record of a diagnosis, then passes the observed command's exit
/// code through.
fn end(sink: Sink, diagnosed: Diagnosed) -> anyhow::Result<Outcome> {
    let ending = Ending {
        failed: diagnosed.failed,
        ..Ending::default()
    };
    let finished = sink.finish(&diagnosed.run, ending)?;
    if let Some(line) = diagnosed.epilogue {
        console::errln(line);
    }
    // A command still running when observing stopped (--duration) is waited for after the
    // report is out, so its exit code can still pass through.
    let code = match diagnosed.command {
        CommandState::NotLaunched => None,
        CommandState::Exited(code) => Some(code),
        CommandState::StillRunning(pending) => Some(pending.wait()?),
    };
    Ok(finished.outcome(code))
}

/// The ending of a failed diagnosis (see [`DiagnosisError`]).
fn failed<E: DiagnosisError>(e: E) -> anyhow::Result<Outcome> {
    if let Some(code) = e.exit_code() {
        console::errln(format!("error: {e}"));
        return Ok(Outcome::Code(code));
    }
    Err(match e.is_usage() {
        true => anyhow::Error::new(UsageError(e.to_string())),
        false => anyhow::Error::new(e),
    })
}

/// How a command that the diagnosis saw end (or never launched: `None`) ended.
pub(super) fn ended(exit: Option<sysmeter_sys::process::exit::Exit>) -> CommandState {
    match exit {
        Some(e) => CommandState::Exited(e.shell_code()),
        None => CommandState::NotLaunched,
    }
}

/// Now, in ns since the epoch.
pub(super) fn now_ns() -> i64 {
    jiff::Timestamp::now().as_nanosecond() as i64
}

/// The run record of a diagnosis of `kind` that began at `started_ns` and ends now, with
/// its results (`cpu`: the CPU the tracer pinned the command to, if any).
pub(super) fn record(
    kind: RunKind,
    started_ns: i64,
    results: Vec<ExperimentResult>,
    cpu: Option<u32>,
) -> RunRecord {
    let config = RunConfig {
        profile: kind.as_str().into(),
        cpu,
        selected: results.iter().map(|r| r.id.clone()).collect(),
        target_ci_width: 0.0,
        calibration: None,
        seed: 1,
    };
    let mut run = RunRecord::new(kind, started_ns, host::read_host(), config);
    run.finished_ns = Some(now_ns());
    run.results = results;
    run
}

/// The latest bench run of this host in the store, to price calls with (`None` without a
/// store or a bench run).
pub(super) fn latest_bench(sink: &mut Sink) -> Option<RunRecord> {
    let store = sink.take_store()?;
    let host = host::hostname();
    let found = store
        .list_host_runs(usize::MAX, Some(&host))
        .ok()
        .and_then(|runs| runs.into_iter().find(|r| r.kind == RunKind::Bench.as_str()))
        .and_then(|r| store.load_run(&r.id).ok());
    sink.put_store(Some(store));
    found
}

/// Prices the calls of `result` (of `kind`) by this host's latest bench run in the store
/// ([`latest_bench`]; unpriced without one); `cpu_ns`: the program's CPU time, when known.
pub(super) fn priced(
    sink: &mut Sink,
    result: &mut ExperimentResult,
    kind: price::Kind,
    cpu_ns: Option<f64>,
) {
    let bench = latest_bench(sink);
    price::price(result, kind, bench.as_ref(), cpu_ns);
}

/// The live line of an observed command: the "tracing PID …" sentence, then (only when
/// stderr is a terminal; indicatif hides itself otherwise) a live count of what was seen.
pub(super) struct LiveCount {
    bar: ProgressBar,
    /// What is counted (`system calls`, `library calls`).
    what: &'static str,
}

impl LiveCount {
    pub(super) fn new(what: &'static str) -> LiveCount {
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}") {
            bar.set_style(style);
        }
        LiveCount { bar, what }
    }

    /// Clears the live line (before the report is printed).
    pub(super) fn clear(&self) {
        self.bar.finish_and_clear();
    }

    /// Runs `observe` with a live count of `what` (`system calls`) as its observer, and
    /// clears the line when it returns.
    pub(super) fn counting<R>(what: &'static str, observe: impl FnOnce(&mut LiveCount) -> R) -> R {
        let mut live = LiveCount::new(what);
        let observed = observe(&mut live);
        live.clear();
        observed
    }
}

impl Observer for LiveCount {
    fn attached(&mut self, text: &str) {
        // Printed even without a terminal: scripts and tests wait for it.
        console::errln(text);
    }

    fn progress(&mut self, calls: u64) {
        self.bar
            .set_message(format!("{calls} {} traced", self.what));
        self.bar.tick();
    }
}
