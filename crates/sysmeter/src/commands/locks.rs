//! `sysmeter locks`: validate, observe the futex calls (`diagnose::locks`), store, and print
//! the report to stderr (or `--out`): the observed command owns stdout. Exits with the
//! command's exit code (130 when Ctrl-C stopped it).

use anyhow::Context;

use super::output::{Ending, Sink, Stream};
use super::{Outcome, UsageError, console};
use crate::cli::{LOCKS_TARGET, LocksArgs};
use crate::diagnose::locks::{self, LocksError, Settings};
use crate::diagnose::observe::target::Target;
use crate::model::{RunConfig, RunKind, RunRecord};

fn usage(message: String) -> anyhow::Error {
    anyhow::Error::new(UsageError(message))
}

fn now_ns() -> i64 {
    jiff::Timestamp::now().as_nanosecond() as i64
}

fn record(out: &locks::Locks, started_ns: i64, interrupted: bool) -> RunRecord {
    let config = RunConfig {
        profile: "locks".into(),
        cpu: None,
        selected: vec!["locks".into()],
        target_ci_width: 0.0,
        calibration: None,
        seed: 1,
    };
    let mut run = RunRecord::new(RunKind::Locks, started_ns, crate::host::read_host(), config);
    run.finished_ns = Some(now_ns());
    run.interrupted = interrupted;
    run.results = vec![out.result.clone()];
    run
}

/// Run `sysmeter locks`.
pub fn locks(args: &LocksArgs) -> anyhow::Result<Outcome> {
    let target = match super::profile::checked_target(&args.target, LOCKS_TARGET)? {
        Ok(t) => t,
        Err((code, why)) => {
            console::errln(format!("error: {why}"));
            return Ok(Outcome::Code(code));
        }
    };
    let settings = Settings {
        duration: args.target.duration,
    };
    let sink = Sink::open(&args.output, Stream::Stderr)?;
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let started_ns = now_ns();
    // Printed even without a terminal: scripts and tests wait for it.
    let observed = locks::locks(&target, &settings, &mut |text| console::errln(text));
    let out = match observed {
        Ok(o) => o,
        Err(e @ (LocksError::Unavailable(_) | LocksError::NoSuchPid { .. })) => {
            return Err(usage(e.to_string()));
        }
        Err(e) => return Err(anyhow::Error::new(e)),
    };
    // For -p, Ctrl-C is the normal way to stop: the run is complete, not interrupted.
    let interrupted = out.interrupted && matches!(target, Target::Launch(_));
    let run = record(&out, started_ns, interrupted);
    let finished = sink.finish(&run, Ending::default())?;
    Ok(finished.outcome(out.exit.map(|e| e.shell_code())))
}
