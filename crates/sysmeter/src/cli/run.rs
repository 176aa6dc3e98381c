//! Arguments of `sysmeter run` (being written).

use clap::Args;

/// `sysmeter run`.
#[derive(Debug, Args)]
pub struct RunArgs {}
