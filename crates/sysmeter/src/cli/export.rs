//! Arguments of `sysmeter export` (being written).

use clap::Args;

/// `sysmeter export`.
#[derive(Debug, Args)]
pub struct ExportArgs {}
