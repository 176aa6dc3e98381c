//! `sysmeter compare` (being written).

use super::{Outcome, UsageError};
use crate::cli::CompareArgs;

/// Run `sysmeter compare`.
pub fn compare(_args: &CompareArgs) -> anyhow::Result<Outcome> {
    Err(UsageError("`sysmeter compare` is not available yet".into()).into())
}
