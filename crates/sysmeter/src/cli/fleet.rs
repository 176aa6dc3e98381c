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
