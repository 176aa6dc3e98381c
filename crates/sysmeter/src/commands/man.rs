//! `sysmeter man` (being written).

use super::{Outcome, UsageError};
use crate::cli::ManArgs;

/// Run `sysmeter man`.
pub fn man(_args: &ManArgs) -> anyhow::Result<Outcome> {
    Err(UsageError("`sysmeter man` is not available yet".into()).into())
}
