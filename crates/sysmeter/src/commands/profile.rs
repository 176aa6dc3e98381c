//! `sysmeter profile` (being written).

use super::{Outcome, UsageError};
use crate::cli::ProfileArgs;

/// Run `sysmeter profile`.
pub fn profile(_args: &ProfileArgs) -> anyhow::Result<Outcome> {
    Err(UsageError("`sysmeter profile` is not available yet".into()).into())
}
