//! `sysmeter trace` (being written).

use super::{Outcome, UsageError};
use crate::cli::TraceArgs;

/// Run `sysmeter trace`.
pub fn trace(_args: &TraceArgs) -> anyhow::Result<Outcome> {
    Err(UsageError("`sysmeter trace` is not available yet".into()).into())
}
