//! `sysmeter locks`: validate, observe the futex calls (`diagnose::locks`), store, and print
//! the report to stderr (or `--out`): the observed command owns stdout. Exits with the
//! command's exit code (130 when Ctrl-C stopped it).

use super::diagnosis::{Diagnosed, DiagnosisError, checked_target, diagnose_rounds, ended, record};
use super::output::Stream;
use super::{Outcome, console};
use crate::cli::{LOCKS_TARGET, LocksArgs};
use crate::diagnose::locks::{self, Backend, LocksError, Settings};
use crate::diagnose::observe::backend::Request;
use crate::diagnose::observe::target::Target;
use crate::model::RunKind;

impl DiagnosisError for LocksError {
    fn is_usage(&self) -> bool {
        matches!(
            self,
            LocksError::Unavailable(_) | LocksError::NoSuchPid { .. }
        )
    }
}

/// Run `sysmeter locks`.
pub fn locks(args: &LocksArgs) -> anyhow::Result<Outcome> {
    let target = match checked_target(&args.target, LOCKS_TARGET)? {
        Ok(target) => target,
        Err(cannot_start) => return Ok(cannot_start),
    };
    let settings = Settings {
        duration: args.target.duration,
        backend: backend(args.backend)?,
    };
    diagnose_rounds(
        (&args.output, Stream::Stderr, args.rounds.rounds),
        // Printed even without a terminal: scripts and tests wait for it.
        || locks::locks(&target, &settings, &mut |text| console::errln(text)),
        |out, _, started_ns| {
            let mut run = record(RunKind::Locks, started_ns, vec![out.result], None);
            // For -p, Ctrl-C is the normal way to stop: the run is complete, not interrupted.
            run.interrupted = out.interrupted && matches!(target, Target::Launch(_));
            Ok(Diagnosed::new(run, ended(out.exit)))
        },
    )
}

/// The backend `--backend` asks for (exit 2 with the reason when `bpf` cannot run here),
/// announced in one line on stderr.
fn backend(request: Request<Backend>) -> anyhow::Result<Backend> {
    let chosen =
        locks::choose(request).map_err(|e| anyhow::Error::new(super::UsageError(e.to_string())))?;
    console::errln(chosen.line("locks"));
    Ok(chosen.backend)
}
