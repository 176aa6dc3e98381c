//! The page outputs of the commands that render stored runs, `report` and `compare`:
//! `--html FILE`, `--markdown FILE` and the database the runs are read from ([`PageArgs`]),
//! opened by one rule in `commands`.
//!
//! The help texts here are `report`'s; `compare` words them for a comparison with
//! `#[command(mut_arg(..))]` on its own struct, as the target arguments do (`target.rs`).

use std::path::PathBuf;

use clap::Args;

use super::DbArgs;

/// `--html FILE`, `--markdown FILE` and `--db`.
#[derive(Debug, Args)]
pub struct PageArgs {
    /// Write one self-contained HTML page (charts inline, nothing fetched) to FILE; `-` is
    /// stdout.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the report as GitHub-flavoured Markdown to FILE; `-` is stdout.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Database to read the runs from (not opened for JSON files).
    #[command(flatten)]
    pub db: DbArgs,
}
