//! `sysmeter completions` (being written).

use super::{Outcome, UsageError};
use crate::cli::CompletionsArgs;

/// Run `sysmeter completions`.
pub fn completions(_args: &CompletionsArgs) -> anyhow::Result<Outcome> {
    Err(UsageError("`sysmeter completions` is not available yet".into()).into())
}
