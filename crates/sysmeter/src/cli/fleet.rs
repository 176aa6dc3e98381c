//! `sysmeter import` and `sysmeter fleet`: gathering other machines' runs into a store and
//! reading a store of many machines as a fleet.

use std::path::PathBuf;

use clap::Args;

use super::DbArgs;
use crate::report::fleet::FleetFormat;

/// `sysmeter import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// Run records written with `--format json` (by `bench`, `show`, …) on any machine.
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Database to import into.
    #[command(flatten)]
    pub db: DbArgs,
    /// Keep the raw samples in a PostgreSQL fleet store too (by default it keeps the
    /// summaries only: statistics, series points, findings, machine state).
    #[arg(long)]
    pub with_samples: bool,
}

/// `sysmeter prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// How many of each host's latest runs of each kind to keep (1 or more): the last ones
    /// the store received that ended (finished, or stopped by Ctrl-C), never one dated after
    /// the store received it. A run that never ended (killed, or still running) is kept only
    /// while no run of its host and kind that ended came after it, and then only N of them.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub keep: u32,
    /// Only list the runs that would be deleted, and why.
    #[arg(long)]
    pub dry_run: bool,
    /// Database to prune.
    #[command(flatten)]
    pub db: DbArgs,
}

/// `sysmeter fleet`.
#[derive(Debug, Args)]
pub struct FleetArgs {
    /// Only metrics whose experiment id (`os.syscall`) or EXPERIMENT/METRIC name matches
    /// this pattern; `*` matches any text, `?` one character (e.g. `os.*`, `mem.latency/*`).
    #[arg(long, value_name = "PATTERN")]
    pub metric: Option<String>,
    /// Only runs started on or after DATE (`2026-11-01`, or `2026-11-01T08:00:00Z`, UTC).
    #[arg(long, value_name = "DATE")]
    pub since: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FleetFormat::Text)]
    pub format: FleetFormat,
    /// Database to read.
    #[command(flatten)]
    pub db: DbArgs,
}
