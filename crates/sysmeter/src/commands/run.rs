//! `sysmeter run`: validate the target, open the store, run or watch, store the record, and
//! write the report to stderr or `--out` (stdout belongs to the command), then exit with
//! the command's own exit code.

use std::time::Duration;

use super::Outcome;
use super::diagnosis::{Diagnosed, DiagnosisError, diagnose, ended};
use super::output::Stream;
use crate::cli::{RUN_TARGET, RunArgs};
use crate::diagnose::run::{self, RunError};
use crate::diagnose::trace;
use crate::host;

/// Run `sysmeter run`.
pub fn run(args: &RunArgs) -> anyhow::Result<Outcome> {
    let target = super::diagnosis::target(&args.target, RUN_TARGET)?;
    let interval = Duration::from_millis(args.interval);
    let duration = args.target.duration;
    let lookups = run::LookupPlan {
        mode: args.lookups.into(),
        start: trace::lookup_trace::start,
    };
    diagnose(
        (&args.output, Stream::Stderr),
        || run::run(&target, (duration, interval), lookups, host::read_host()),
        |output, _, _| Ok(Diagnosed::new(output.record, ended(output.exit))),
    )
}

/// A run error ends like a shell's when the command could not be started (126/127), as a
/// usage error for a bad target (exit 2), as a failure otherwise.
impl DiagnosisError for RunError {
    fn exit_code(&self) -> Option<u8> {
        self.spawn_exit_code()
    }
    fn is_usage(&self) -> bool {
        matches!(
            self,
            RunError::NoCommand | RunError::NoProcess { .. } | RunError::Unreadable { .. }
        )
    }
}
