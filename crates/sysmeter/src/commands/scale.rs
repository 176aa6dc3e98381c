//! `sysmeter scale` (being written).

use super::{Outcome, UsageError};
use crate::cli::ScaleArgs;

/// Run `sysmeter scale`.
pub fn scale(_args: &ScaleArgs) -> anyhow::Result<Outcome> {
    Err(UsageError("`sysmeter scale` is not available yet".into()).into())
}
