//! `sysmeter calls`: validate the arguments, trace the library calls (diagnose::calls), price
//! them with the latest stored bench of this host, store the run, print the summary to
//! stderr (or --out), then pass the command's exit code through.

use super::diagnosis::{Diagnosed, DiagnosisError, LiveCount, diagnose_rounds, priced, record};
use super::output::Stream;
use super::{Outcome, UsageError};
use crate::cli::{CALLS_TARGET, CallsArgs};
use crate::diagnose::calls::{self, CallsConfig, CallsOutput, DEFAULT_SET, select};
use crate::diagnose::price::Kind;
use crate::model::RunKind;

fn usage(text: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(text.into()))
}

/// The validated configuration from the arguments.
fn config(args: &CallsArgs) -> anyhow::Result<CallsConfig> {
    let target = super::diagnosis::target(&args.target, CALLS_TARGET)?;
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
        backend: args.backend,
        every: if args.time_every_call { 1 } else { 64 },
        functions: args.functions,
    })
}

/// Run `sysmeter calls`.
pub fn calls(args: &CallsArgs) -> anyhow::Result<Outcome> {
    let cfg = config(args)?;
    diagnose_rounds(
        (&args.output, Stream::Stderr, args.rounds.rounds),
        || LiveCount::counting("library calls", |live| calls::calls(&cfg, live)),
        |mut output: CallsOutput, sink, started_ns| {
            // The program's own functions have no price in the bench.
            if !cfg.functions {
                priced(sink, &mut output.result, Kind::Library, output.cpu_ns);
            }
            let run = record(RunKind::Calls, started_ns, vec![output.result], None);
            Ok(Diagnosed::new(run, output.command))
        },
    )
}

impl DiagnosisError for calls::CallsError {
    fn exit_code(&self) -> Option<u8> {
        calls::CallsError::exit_code(self)
    }
    fn is_usage(&self) -> bool {
        calls::CallsError::is_usage(self)
    }
}
