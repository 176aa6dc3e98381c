//! Arguments of `sysmeter scale` (being written).

use clap::Args;

/// `sysmeter scale`.
#[derive(Debug, Args)]
pub struct ScaleArgs {}
