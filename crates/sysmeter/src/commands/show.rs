//! `sysmeter show RUN`: one stored run, rendered like a fresh result of its kind (`--full`
//! for every table of a bench run), or only "this machine at a glance" (`--summary`).

use crate::cli::ShowArgs;
use crate::report::{Format, render_view, summary};

use super::{Outcome, Stream, UsageError, emit, open_store_to_read, run_history};

/// Print a stored run.
pub fn show(args: &ShowArgs) -> anyhow::Result<Outcome> {
    if args.summary && matches!(args.format, Format::Json | Format::Csv) {
        return Err(anyhow::Error::new(UsageError(
            "--summary prints text or markdown; for the whole record use `show --format json` \
             (or csv) without --summary"
                .to_string(),
        )));
    }
    let store = open_store_to_read(&args.db)?;
    let mut run = store.load_run(&args.run)?;
    run_history::annotate(Some(&store), &mut run);
    let text = match args.summary {
        true => summary(&run, args.format).unwrap_or_default(),
        false => render_view(&run, args.format, Stream::Stdout.color(), args.full)?,
    };
    emit(&text)?;
    Ok(Outcome::Success)
}
