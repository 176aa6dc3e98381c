//! Arguments of `sysmeter trace` (being written).

use clap::Args;

/// `sysmeter trace`.
#[derive(Debug, Args)]
pub struct TraceArgs {}
