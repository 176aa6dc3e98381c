//! `sysmeter alloc`: validate the arguments, run the heap profile (diagnose::alloc: the
//! preload library for a launched dynamic program, uprobes for `-p` and static programs),
//! price the allocations with the latest stored bench of this host, store the run, print the
//! summary to stderr (or --out), then pass the command's exit code through.

use super::UsageError;
use super::diagnosis::{Diagnosed, DiagnosisError, diagnose_rounds, latest_bench, record};
use super::output::Stream;
use super::{Outcome, console};
use crate::cli::{ALLOC_TARGET, AllocArgs};
use crate::diagnose::alloc::{self, AllocConfig, AllocError};
use crate::diagnose::observe::target::Target;
use crate::diagnose::price::{Kind, unit_price};
use crate::model::RunKind;

/// The validated configuration from the arguments.
fn config(args: &AllocArgs) -> Result<AllocConfig, UsageError> {
    let target = super::diagnosis::target(&args.target, ALLOC_TARGET)?;
    if args.follow_forks && matches!(target, Target::Attach(_)) {
        return Err(UsageError(
            "alloc -p follows the process's threads but not its children (uprobes); drop -f, \
             or launch the program under alloc (sysmeter alloc -f -- CMD)"
                .into(),
        ));
    }
    Ok(AllocConfig {
        target,
        follow_forks: args.follow_forks,
        duration: args.target.duration,
        frame_pointers: args.frame_pointers,
        backend: args.backend,
    })
}

/// Run `sysmeter alloc`.
pub fn alloc(args: &AllocArgs) -> anyhow::Result<Outcome> {
    let cfg = config(args)?;
    diagnose_rounds(
        (&args.output, Stream::Stderr, args.rounds.rounds),
        // Printed even without a terminal: scripts and tests wait for it.
        || alloc::alloc(&cfg, &mut |text| console::errln(text)),
        |(mut output, cpu_ns), sink, started_ns| {
            let bench = latest_bench(sink);
            let pair = bench.as_ref().and_then(|b| {
                let (each, metric) = unit_price(b, Kind::Library, "malloc")?;
                // The mapping prices one call at half the pair: the pair is twice that.
                Some((each * 2.0, metric, b.id.clone()))
            });
            alloc::result::priced(&mut output.result, pair, cpu_ns);
            let run = record(RunKind::Alloc, started_ns, vec![output.result], None);
            Ok(Diagnosed::new(run, output.command))
        },
    )
}

impl DiagnosisError for AllocError {
    fn exit_code(&self) -> Option<u8> {
        AllocError::exit_code(self)
    }
    fn is_usage(&self) -> bool {
        AllocError::is_usage(self)
    }
}
