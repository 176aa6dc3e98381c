//! `sysmeter completions SHELL`: the completion script generated from the clap definitions,
//! so it can never disagree with the real flags.

use clap::CommandFactory;

use super::Outcome;
use crate::cli::{Cli, CompletionsArgs};

/// Print the completion script for `args.shell` on stdout.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<Outcome> {
    let mut cmd = Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "sysmeter", &mut std::io::stdout());
    Ok(Outcome::Success)
}
