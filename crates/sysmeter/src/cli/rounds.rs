//! `--rounds N` of the diagnoses (`profile`, `alloc`, `calls`, `locks`, `trace`): observe the
//! command N times and keep each round's aggregation in the one run, so that `compare` can
//! tell the run-to-run noise from a change. Clap definitions only.

use clap::Args;

/// The number of rounds of a diagnosis.
#[derive(Debug, Clone, Copy, Args)]
pub struct RoundsArgs {
    /// Run the command N times and keep each round's aggregation (stacks, sites, calls) in
    /// the one run: the report shows the last round, `compare` judges a change against the
    /// spread between rounds (docs/compare.md).
    #[arg(long, value_name = "N", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
}
