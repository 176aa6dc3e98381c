//! Arguments of `sysmeter report`.

use std::path::PathBuf;

use clap::{ArgGroup, Args};

use super::DbArgs;

/// `sysmeter report`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("output").required(true).multiple(true).args(["html", "markdown"])))]
pub struct ReportArgs {
    /// Run id, unique id prefix, `latest`, `latest~N`, or a JSON file written by
    /// `sysmeter bench --format json`.
    #[arg(default_value = "latest", value_name = "RUN")]
    pub run: String,
    /// Write one self-contained HTML page (charts inline, nothing fetched) to FILE; `-` is
    /// stdout.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Write the report as GitHub-flavoured Markdown to FILE; `-` is stdout.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Database to read the run from (not used for a JSON file).
    #[command(flatten)]
    pub db: DbArgs,
}
