//! `sysmeter export` (being written).

use super::{Outcome, UsageError};
use crate::cli::ExportArgs;

/// Run `sysmeter export`.
pub fn export(_args: &ExportArgs) -> anyhow::Result<Outcome> {
    Err(UsageError("`sysmeter export` is not available yet".into()).into())
}
