//! Arguments of `sysmeter completions` (being written).

use clap::Args;

/// `sysmeter completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {}
