//! `sysmeter alloc`: validate the arguments (`-p` is refused: the hooks need a launch), run
//! the heap profile (diagnose::alloc), price the allocations with the latest stored bench
//! of this host, store the run, print the summary to stderr (or --out), then pass the
//! command's exit code through.

use super::Outcome;
use super::UsageError;
use super::diagnosis::{Diagnosed, DiagnosisError, diagnose, latest_bench, record};
use super::output::Stream;
use crate::cli::{ALLOC_TARGET, AllocArgs};
use crate::diagnose::alloc::{self, AllocConfig, AllocError};
use crate::diagnose::observe::target::Target;
use crate::diagnose::price::{Kind, unit_price};
use crate::model::RunKind;

/// The validated configuration from the arguments.
fn config(args: &AllocArgs) -> Result<AllocConfig, UsageError> {
    match super::diagnosis::target(&args.target, ALLOC_TARGET)? {
        Target::Attach(pid) => Err(UsageError(format!(
            "alloc cannot attach to PID {pid}: its allocation hooks live in a library the \
             dynamic linker loads when a program starts; launch the program under it instead \
             (sysmeter alloc -- CMD)"
        ))),
        Target::Launch(argv) => Ok(AllocConfig {
            argv,
            follow_forks: args.follow_forks,
            duration: args.target.duration,
            frame_pointers: args.frame_pointers,
        }),
    }
}

/// Run `sysmeter alloc`.
pub fn alloc(args: &AllocArgs) -> anyhow::Result<Outcome> {
    let cfg = config(args)?;
    diagnose(
        (&args.output, Stream::Stderr),
        || alloc::alloc(&cfg),
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
