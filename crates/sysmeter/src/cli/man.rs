//! Arguments of `sysmeter man` (being written).

use clap::Args;

/// `sysmeter man`.
#[derive(Debug, Args)]
pub struct ManArgs {}
