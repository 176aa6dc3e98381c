//! `sysmeter run`: validate the target, open the store, run or watch, store the record, and
//! write the report to stderr or `--out` (stdout belongs to the command), then exit with
//! the command's own exit code.

use std::io::{IsTerminal, Write};
use std::time::Duration;

use anyhow::Context;

use super::{Outcome, UsageError, open_outputs};
use crate::cli::{RUN_TARGET, RunArgs};
use crate::diagnose::run::{self, RunError, RunOutput};
use crate::store::Store;
use crate::{host, report};

/// Whether the report on stderr may carry ANSI colour.
fn stderr_color() -> bool {
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Stores the record; returns the error text if that failed.
fn store(store: Option<Store>, out: &RunOutput) -> Option<String> {
    let mut s = store?;
    let run = &out.record;
    let stored = s
        .begin_run(run)
        .and_then(|()| {
            run.results
                .iter()
                .enumerate()
                .try_for_each(|(i, r)| s.add_result(&run.id, i, r))
        })
        .and_then(|()| s.finish_run(&run.id, run.finished_ns, run.interrupted));
    match stored {
        Ok(()) => {
            eprintln!("stored as run {} in {}", run.id, s.path().display());
            None
        }
        Err(e) => Some(e.to_string()),
    }
}

/// Run `sysmeter run`.
pub fn run(args: &RunArgs) -> anyhow::Result<Outcome> {
    let target = args
        .target
        .target(RUN_TARGET)
        .map_err(|e| UsageError(e.to_string()))?;
    // Fail on a bad --out or database before running anything.
    let (mut out_file, store_handle) = open_outputs(&args.output)?;
    let interval = Duration::from_millis(args.interval);
    let duration = args.target.duration;
    let output = match run::run(&target, duration, interval, host::read_host()) {
        Ok(o) => o,
        Err(e) => return failed(e),
    };
    let store_error = store(store_handle, &output);
    let color = out_file.is_none() && stderr_color();
    let text = report::render(&output.record, args.output.format, color)?;
    match out_file.as_mut() {
        Some(f) => f.write_all(text.as_bytes()).context("writing --out")?,
        None => eprint!("{text}"),
    }
    if let Some(e) = &store_error {
        eprintln!("warning: the report was written but not stored: {e}");
    }
    Ok(match output.exit {
        // The command's own exit code wins over anything of ours.
        Some(exit) => Outcome::Code(u8::try_from(exit.shell_code()).unwrap_or(255)),
        None if output.interrupted => Outcome::Interrupted,
        None if store_error.is_some() => Outcome::MeasurementFailed,
        None => Outcome::Success,
    })
}

/// Maps a run error to the exit code: 126/127 like a shell when the command could not be
/// started, 2 for a bad target, 1 otherwise.
fn failed(e: RunError) -> anyhow::Result<Outcome> {
    if let Some(code) = e.spawn_exit_code() {
        eprintln!("error: {e}");
        return Ok(Outcome::Code(code));
    }
    match e {
        RunError::NoCommand | RunError::NoProcess { .. } | RunError::Unreadable { .. } => {
            Err(UsageError(e.to_string()).into())
        }
        other => Err(other.into()),
    }
}
