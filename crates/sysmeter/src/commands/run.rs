//! `sysmeter run`: validate the target, open the store, run or watch, store the record, and
//! write the report to stderr or `--out` (stdout belongs to the command), then exit with
//! the command's own exit code.

use std::time::Duration;

use super::output::{Ending, Sink, Stream};
use super::{Outcome, UsageError};
use crate::cli::{RUN_TARGET, RunArgs};
use crate::diagnose::run::{self, RunError};
use crate::diagnose::trace;
use crate::host;

/// Run `sysmeter run`.
pub fn run(args: &RunArgs) -> anyhow::Result<Outcome> {
    let target = args
        .target
        .target(RUN_TARGET)
        .map_err(|e| UsageError(e.to_string()))?;
    // Fail on a bad --out or database before running anything.
    let sink = Sink::open(&args.output, Stream::Stderr)?;
    let interval = Duration::from_millis(args.interval);
    let duration = args.target.duration;
    let lookups = run::LookupPlan {
        mode: args.lookups.into(),
        start: trace::lookup_trace::start,
    };
    let output = match run::run(&target, (duration, interval), lookups, host::read_host()) {
        Ok(o) => o,
        Err(e) => return failed(e),
    };
    let finished = sink.finish(&output.record, Ending::default())?;
    Ok(finished.outcome(output.exit.map(|e| e.shell_code())))
}

/// Maps a run error to the exit code: 126/127 like a shell when the command could not be
/// started, 2 for a bad target, 1 otherwise.
fn failed(e: RunError) -> anyhow::Result<Outcome> {
    if let Some(code) = e.spawn_exit_code() {
        super::console::errln(format!("error: {e}"));
        return Ok(Outcome::Code(code));
    }
    match e {
        RunError::NoCommand | RunError::NoProcess { .. } | RunError::Unreadable { .. } => {
            Err(UsageError(e.to_string()).into())
        }
        other => Err(other.into()),
    }
}
