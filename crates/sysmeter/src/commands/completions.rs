//! `sysmeter completions SHELL`: the completion script generated from the clap definitions,
//! so it can never disagree with the real flags.

use clap::CommandFactory;

use super::{Outcome, emit};
use crate::cli::{Cli, CompletionsArgs};

/// Print the completion script for `args.shell` on stdout.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<Outcome> {
    let mut cmd = Cli::command();
    // Into a buffer: clap_complete panics when its writer fails (e.g. a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "sysmeter", &mut script);
    emit(&String::from_utf8_lossy(&script))?;
    Ok(Outcome::Success)
}
