//! Arguments of `sysmeter report` (being written).

use clap::Args;

/// `sysmeter report`.
#[derive(Debug, Args)]
pub struct ReportArgs {}
