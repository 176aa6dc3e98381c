//! `sysmeter show RUN`: one stored run, rendered like a fresh result of its kind.

use crate::cli::ShowArgs;
use crate::report::render;

use super::{Outcome, Stream, emit, open_store};

/// Print a stored run.
pub fn show(args: &ShowArgs) -> anyhow::Result<Outcome> {
    let store = open_store(&args.db)?;
    let run = store.load_run(&args.run)?;
    emit(&render(&run, args.format, Stream::Stdout.color())?)?;
    Ok(Outcome::Success)
}
