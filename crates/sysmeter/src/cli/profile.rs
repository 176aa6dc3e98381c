//! Arguments of `sysmeter profile` (being written).

use clap::Args;

/// `sysmeter profile`.
#[derive(Debug, Args)]
pub struct ProfileArgs {}
