//! `sysmeter report` (being written).

use super::{Outcome, UsageError};
use crate::cli::ReportArgs;

/// Run `sysmeter report`.
pub fn report(_args: &ReportArgs) -> anyhow::Result<Outcome> {
    Err(UsageError("`sysmeter report` is not available yet".into()).into())
}
