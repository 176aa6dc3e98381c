//! Arguments of `sysmeter compare` (being written).

use clap::Args;

/// `sysmeter compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {}
