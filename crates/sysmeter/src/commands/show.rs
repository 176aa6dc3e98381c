//! `sysmeter show RUN`: one stored run, rendered like a fresh bench result.

use crate::cli::ShowArgs;
use crate::report::render;

use super::{Outcome, color_allowed, emit, open_store};

/// Print a stored run.
pub fn show(args: &ShowArgs) -> anyhow::Result<Outcome> {
    let store = open_store(&args.db)?;
    let run = store.load_run(&args.run)?;
    emit(&render(&run, args.format, color_allowed())?)?;
    Ok(Outcome::Success)
}
