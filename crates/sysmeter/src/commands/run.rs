//! `sysmeter run` (being written).

use super::{Outcome, UsageError};
use crate::cli::RunArgs;

/// Run `sysmeter run`.
pub fn run(_args: &RunArgs) -> anyhow::Result<Outcome> {
    Err(UsageError("`sysmeter run` is not available yet".into()).into())
}
