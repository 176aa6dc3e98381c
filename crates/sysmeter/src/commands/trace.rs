//! `sysmeter trace`: validate the arguments, trace (diagnose::trace), store the run, print
//! the summary to stderr (or --out) so the command's stdout stays untouched, then pass the
//! command's exit code through.

use std::io::{IsTerminal, Write};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};

use super::{Outcome, UsageError, open_outputs};
use crate::cli::{TRACE_TARGET, TraceArgs};
use crate::diagnose::trace::{
    self, BackendChoice, CommandState, Selection, TraceConfig, TraceObserver, TraceOutput,
};
use crate::model::{RunConfig, RunKind, RunRecord, SCHEMA_VERSION};
use crate::store::Store;
use crate::{host, report};

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
struct LiveCount {
    bar: ProgressBar,
}

impl LiveCount {
    fn new() -> LiveCount {
        let bar = ProgressBar::new_spinner();
        if let Ok(style) = ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}") {
            bar.set_style(style);
        }
        LiveCount { bar }
    }
}

impl TraceObserver for LiveCount {
    fn attached(&mut self, text: &str) {
        // Printed even without a terminal: scripts and tests wait for it.
        eprintln!("{text}");
    }

    fn progress(&mut self, calls: u64) {
        self.bar.set_message(format!("{calls} system calls traced"));
        self.bar.tick();
    }
}

/// Whether the summary (on stderr) may carry ANSI colour.
fn stderr_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn now_ns() -> i64 {
    jiff::Timestamp::now().as_nanosecond() as i64
}

fn record(output: &TraceOutput, started_ns: i64) -> RunRecord {
    RunRecord {
        schema: SCHEMA_VERSION,
        id: crate::harness::new_run_id(),
        kind: RunKind::Trace,
        started_ns,
        finished_ns: Some(now_ns()),
        interrupted: false,
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        host: host::read_host(),
        config: RunConfig {
            profile: "trace".into(),
            cpu: output.pinned_cpu.map(|c| c as u32),
            selected: vec!["trace".into()],
            target_ci_width: 0.0,
            calibration: None,
            seed: 1,
        },
        results: vec![output.result.clone()],
    }
}

fn store_run(store: Option<Store>, run: &RunRecord) -> Vec<String> {
    let Some(mut s) = store else {
        return Vec::new();
    };
    let stored = s
        .begin_run(run)
        .and_then(|()| s.add_result(&run.id, 0, &run.results[0]))
        .and_then(|()| s.finish_run(&run.id, run.finished_ns, run.interrupted));
    match stored {
        Ok(()) => {
            eprintln!("stored as run {} in {}", run.id, s.path().display());
            Vec::new()
        }
        Err(e) => vec![e.to_string()],
    }
}

/// Run `sysmeter trace`.
pub fn trace(args: &TraceArgs) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let cfg = config(args)?;
    // Fail on a bad --out or database before tracing anything.
    let (mut out_file, store) = open_outputs(&args.output)?;
    let started_ns = now_ns();
    let mut live = LiveCount::new();
    let traced = trace::trace(&cfg, &mut live);
    live.bar.finish_and_clear();
    let output = match traced {
        Ok(o) => o,
        Err(e) => {
            if let Some(code) = e.exit_code() {
                eprintln!("error: {e}");
                return Ok(Outcome::Code(code));
            }
            return Err(if e.is_usage() {
                usage(e.to_string())
            } else {
                anyhow::Error::new(e)
            });
        }
    };
    let run = record(&output, started_ns);
    let color = out_file.is_none() && stderr_color();
    let text = report::render(&run, args.output.format, color)?;
    match out_file.as_mut() {
        Some(f) => f.write_all(text.as_bytes()).context("writing --out")?,
        None => eprint!("{text}"),
    }
    let store_errors = store_run(store, &run);
    for e in &store_errors {
        eprintln!("warning: the summary was printed but not stored: {e}");
    }
    let code = match output.command {
        CommandState::NotLaunched => None,
        CommandState::Exited(code) => Some(code),
        CommandState::StillRunning(pending) => Some(pending.wait()?),
    };
    Ok(match code {
        Some(c) => Outcome::Code(c.clamp(0, 255) as u8),
        None if !store_errors.is_empty() => Outcome::MeasurementFailed,
        None => Outcome::Success,
    })
}
