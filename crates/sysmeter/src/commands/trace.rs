//! `sysmeter trace`: validate the arguments, trace (diagnose::trace), store the run, print
//! the summary to stderr (or --out) so the command's stdout stays untouched, then pass the
//! command's exit code through.

use super::diagnosis::{Diagnosed, LiveCount, diagnose_rounds, priced, record};
use super::output::Stream;
use super::{Outcome, UsageError};
use crate::cli::{TRACE_TARGET, TraceArgs};
use crate::diagnose::price::Kind;
use crate::diagnose::trace::{self, Selection, TraceConfig, TraceOutput};
use crate::model::RunKind;

fn usage(text: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(UsageError(text.into()))
}

/// The validated configuration from the arguments.
fn config(args: &TraceArgs) -> anyhow::Result<TraceConfig> {
    let target = super::diagnosis::target(&args.target, TRACE_TARGET)?;
    let selection = if args.calls.is_empty() {
        None
    } else {
        Some(Selection::parse(&args.calls).map_err(usage)?)
    };
    Ok(TraceConfig {
        target,
        selection,
        follow_forks: args.follow_forks,
        backend: args.backend,
        duration: args.target.duration,
        pin: !args.no_pin,
    })
}

/// Run `sysmeter trace`.
pub fn trace(args: &TraceArgs) -> anyhow::Result<Outcome> {
    let cfg = config(args)?;
    diagnose_rounds(
        (&args.output, Stream::Stderr, args.rounds.rounds),
        || LiveCount::counting("system calls", |live| trace::trace(&cfg, live)),
        |mut output: TraceOutput, sink, started_ns| {
            priced(sink, &mut output.result, Kind::Syscall, None);
            let cpu = output.pinned_cpu.map(|c| c as u32);
            let run = record(RunKind::Trace, started_ns, vec![output.result], cpu);
            Ok(Diagnosed::new(run, output.command))
        },
    )
}
