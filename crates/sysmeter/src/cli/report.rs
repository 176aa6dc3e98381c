//! Arguments of `sysmeter report`.

use clap::{ArgGroup, Args};

use super::pages::PageArgs;

/// `sysmeter report`.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("output").required(true).multiple(true).args(["html", "markdown"])))]
pub struct ReportArgs {
    /// Run id, unique id prefix, `latest`, `latest~N`, the latest of a kind (`latest:KIND`,
    /// `latest:KIND~N`, e.g. `latest:profile`), or a JSON file written by `sysmeter bench
    /// --format json`.
    #[arg(default_value = "latest", value_name = "RUN")]
    pub run: String,
    /// `--html`, `--markdown` and the database to read the run from (not used for a JSON
    /// file).
    #[command(flatten)]
    pub pages: PageArgs,
}
