//! Arguments of `sysmeter man` (none: it prints the whole manual page).

use clap::Args;

/// `sysmeter man`.
#[derive(Debug, Args)]
#[command(after_help = "Install, e.g.: sysmeter man > ~/.local/share/man/man1/sysmeter.1")]
pub struct ManArgs {}
