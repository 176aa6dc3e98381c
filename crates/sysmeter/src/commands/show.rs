//! `sysmeter show RUN`: one stored run, rendered like a fresh result of its kind.

use crate::cli::ShowArgs;
use crate::model::RunKind;
use crate::report::{Format, profile_text, render};

use super::{Outcome, color_allowed, emit, open_store};

/// Print a stored run.
pub fn show(args: &ShowArgs) -> anyhow::Result<Outcome> {
    let store = open_store(&args.db)?;
    let run = store.load_run(&args.run)?;
    let color = color_allowed();
    // A profile reads best as its flat profile and call graph, as `profile` printed it.
    let special = match (run.kind, args.format) {
        (RunKind::Profile, Format::Text) => profile_text::render(&run, color),
        _ => None,
    };
    let text = match special {
        Some(t) => t,
        None => render(&run, args.format, color)?,
    };
    emit(&text)?;
    Ok(Outcome::Success)
}
