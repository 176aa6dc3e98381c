//! `sysmeter calls`: validate the arguments, trace the library calls (diagnose::calls), price
//! them with the latest stored bench of this host, store the run, print the summary to
//! stderr (or --out), then pass the command's exit code through.

use super::trace::{TracerError, now_ns, traced};
use super::{Outcome, UsageError};
use crate::cli::{CALLS_TARGET, CallsArgs};
use crate::diagnose::calls::{self, CallsConfig, CallsOutput, DEFAULT_SET, select};
use crate::diagnose::price::{Kind, price};
use crate::host;
use crate::model::{RunConfig, RunKind, RunRecord};

fn usage(text: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(text.into()))
}

/// The validated configuration from the arguments.
fn config(args: &CallsArgs) -> anyhow::Result<CallsConfig> {
    let target = args
        .target
        .target(CALLS_TARGET)
        .map_err(|e| usage(e.to_string()))?;
    let given = if args.calls.is_empty() {
        vec![DEFAULT_SET.to_string()]
    } else {
        args.calls.clone()
    };
    let patterns = select::parse(&given).ok_or_else(|| {
        usage(
            "-e wants function names or globs, comma separated, optionally OBJECT:NAME \
             (e.g. -e 'malloc,str*,libc.so.6:memcpy')",
        )
    })?;
    Ok(CallsConfig {
        target,
        patterns,
        follow_forks: args.follow_forks,
        duration: args.target.duration,
    })
}

fn record(output: &CallsOutput, started_ns: i64) -> RunRecord {
    let config = RunConfig {
        profile: "calls".into(),
        cpu: None,
        selected: vec![calls::CALLS_ID.into()],
        target_ci_width: 0.0,
        calibration: None,
        seed: 1,
    };
    let mut run = RunRecord::new(RunKind::Calls, started_ns, host::read_host(), config);
    run.finished_ns = Some(now_ns());
    run.results = vec![output.result.clone()];
    run
}

impl TracerError for calls::CallsError {
    fn exit_code(&self) -> Option<u8> {
        calls::CallsError::exit_code(self)
    }
    fn is_usage(&self) -> bool {
        calls::CallsError::is_usage(self)
    }
}

/// Run `sysmeter calls`.
pub fn calls(args: &CallsArgs) -> anyhow::Result<Outcome> {
    let cfg = config(args)?;
    traced(
        &args.output,
        "library calls",
        |live| calls::calls(&cfg, live),
        |mut output: CallsOutput, bench, started_ns| {
            price(&mut output.result, Kind::Library, bench, output.cpu_ns);
            (record(&output, started_ns), output.command)
        },
    )
}
