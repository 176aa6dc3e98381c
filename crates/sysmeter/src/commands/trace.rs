//! `sysmeter trace`: validate the arguments, trace (diagnose::trace), store the run, print
//! the summary to stderr (or --out) so the command's stdout stays untouched, then pass the
//! command's exit code through.

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::output::{Ending, Sink, Stream};
use super::{Outcome, UsageError};
use crate::cli::{TRACE_TARGET, TraceArgs};
use crate::diagnose::trace::{
    self, BackendChoice, CommandState, Selection, TraceConfig, TraceObserver, TraceOutput,
};
use crate::host;
use crate::model::{RunConfig, RunKind, RunRecord};

fn usage(text: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(text.into()))
}

/// The validated configuration from the arguments.
fn config(args: &TraceArgs) -> anyhow::Result<TraceConfig> {
    let target = args
        .target
        .target(TRACE_TARGET)
        .map_err(|e| usage(e.to_string()))?;
    let selection = if args.calls.is_empty() {
        None
    } else {
        Some(Selection::parse(&args.calls).map_err(usage)?)
    };
    let backend = match args.forced_ptrace() {
        None => BackendChoice::Auto,
        Some(true) => BackendChoice::Ptrace,
        Some(false) => BackendChoice::Tracepoint,
    };
    Ok(TraceConfig {
        target,
        selection,
        follow_forks: args.follow_forks,
        backend,
        duration: args.target.duration,
        pin: !args.no_pin,
    })
}

/// Shows an attached trace: the "tracing PID …" sentence, then (only when stderr is a
/// terminal; indicatif hides itself otherwise) a live count of the calls traced.
pub(super) struct LiveCount {
    pub(super) bar: ProgressBar,
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
}

impl TraceObserver for LiveCount {
    fn attached(&mut self, text: &str) {
        // Printed even without a terminal: scripts and tests wait for it.
        super::console::errln(text);
    }

    fn progress(&mut self, calls: u64) {
        self.bar
            .set_message(format!("{calls} {} traced", self.what));
        self.bar.tick();
    }
}

pub(super) fn now_ns() -> i64 {
    jiff::Timestamp::now().as_nanosecond() as i64
}

fn record(output: &TraceOutput, started_ns: i64) -> RunRecord {
    let config = RunConfig {
        profile: "trace".into(),
        cpu: output.pinned_cpu.map(|c| c as u32),
        selected: vec!["trace".into()],
        target_ci_width: 0.0,
        calibration: None,
        seed: 1,
    };
    let mut run = RunRecord::new(RunKind::Trace, started_ns, host::read_host(), config);
    run.finished_ns = Some(now_ns());
    run.results = vec![output.result.clone()];
    run
}

/// The ending of a failed `trace` or `calls`: a program that could not be started ends with
/// the shell's code and sentence (`code`), bad input is a usage error (exit 2), anything else
/// a failure.
pub(super) fn failed<E>(e: E, code: Option<u8>, is_usage: bool) -> anyhow::Result<Outcome>
where
    E: std::error::Error + Send + Sync + 'static,
{
    if let Some(code) = code {
        super::console::errln(format!("error: {e}"));
        return Ok(Outcome::Code(code));
    }
    Err(if is_usage {
        usage(e.to_string())
    } else {
        anyhow::Error::new(e)
    })
}

/// The errors of a tracer (`trace`, `calls`): the shell's code when the command cannot be
/// started, and whether it is bad input.
pub(super) trait TracerError: std::error::Error + Send + Sync + 'static {
    fn exit_code(&self) -> Option<u8>;
    fn is_usage(&self) -> bool;
}

impl TracerError for trace::TraceError {
    fn exit_code(&self) -> Option<u8> {
        trace::TraceError::exit_code(self)
    }
    fn is_usage(&self) -> bool {
        trace::TraceError::is_usage(self)
    }
}

/// What `trace` and `calls` do around their tracer: the Ctrl-C flag, the sink opened before
/// anything is traced (a bad --out or database fails first), the live counter of `what`,
/// the error exit; then `record` turns the output into a run (pricing it with the latest
/// bench of this host), which is stored and printed, and the command's exit code passes
/// through.
pub(super) fn traced<O, E: TracerError>(
    output: &crate::cli::OutputArgs,
    what: &'static str,
    trace: impl FnOnce(&mut LiveCount) -> Result<O, E>,
    record: impl FnOnce(O, Option<&RunRecord>, i64) -> (RunRecord, CommandState),
) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let mut sink = Sink::open(output, Stream::Stderr)?;
    let started_ns = now_ns();
    let mut live = LiveCount::new(what);
    let traced = trace(&mut live);
    live.bar.finish_and_clear();
    let output = match traced {
        Ok(o) => o,
        Err(e) => {
            let (code, is_usage) = (e.exit_code(), e.is_usage());
            return failed(e, code, is_usage);
        }
    };
    let bench = latest_bench(&mut sink);
    let (run, command) = record(output, bench.as_ref(), started_ns);
    let finished = sink.finish(&run, Ending::default())?;
    // A command still running when tracing stopped (--duration) is waited for after the
    // summary is out, so its exit code can still pass through.
    let code = match command {
        CommandState::NotLaunched => None,
        CommandState::Exited(code) => Some(code),
        CommandState::StillRunning(pending) => Some(pending.wait()?),
    };
    Ok(finished.outcome(code))
}

/// The latest bench run of this host in the store, to price calls with (`None` without a
/// store or a bench run).
fn latest_bench(sink: &mut Sink) -> Option<RunRecord> {
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

/// Run `sysmeter trace`.
pub fn trace(args: &TraceArgs) -> anyhow::Result<Outcome> {
    let cfg = config(args)?;
    traced(
        &args.output,
        "system calls",
        |live| trace::trace(&cfg, live),
        |mut output: TraceOutput, bench, started_ns| {
            let kind = crate::diagnose::price::Kind::Syscall;
            crate::diagnose::price::price(&mut output.result, kind, bench, None);
            (record(&output, started_ns), output.command)
        },
    )
}
