//! Arguments of `sysmeter completions`: which shell to print a completion script for.

use clap::Args;
use clap_complete::Shell;

/// `sysmeter completions SHELL`.
#[derive(Debug, Args)]
#[command(
    after_help = "Install, e.g.: sysmeter completions bash > ~/.local/share/bash-completion/completions/sysmeter
               sysmeter completions zsh > ~/.zfunc/_sysmeter   (with fpath+=~/.zfunc)
               sysmeter completions fish > ~/.config/fish/completions/sysmeter.fish"
)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: Shell,
}
