//! `sysmeter report RUN --html FILE [--markdown FILE]`: render a stored run (or a run saved
//! with `--format json`) as a self-contained HTML page and/or Markdown, and write the files
//! by the one output rule (`outfile`). A run file that cannot be read or is not a run, and an
//! output path that cannot be written, are usage errors (exit 2).

use std::path::Path;

use super::infile::read_record;
use super::outfile::OutFile;
use super::{Outcome, UsageError, console, open_pages, open_store_to_read, run_history};
use crate::cli::ReportArgs;
use crate::model::RunRecord;
use crate::report::{self, Format};

/// Run `sysmeter report`.
pub fn report(args: &ReportArgs) -> anyhow::Result<Outcome> {
    let run = load(args)?;
    let (html, markdown) = open_pages(&args.pages)?;
    if let Some(out) = html {
        write(out, &report::html::render(&run)?, "HTML report", &run)?;
    }
    if let Some(out) = markdown {
        let text = report::render(&run, Format::Markdown, false)?;
        write(out, &text, "Markdown report", &run)?;
    }
    Ok(Outcome::Success)
}

/// The run named by `args.run`: a JSON file when such a file exists, else a store reference.
fn load(args: &ReportArgs) -> anyhow::Result<RunRecord> {
    let path = Path::new(&args.run);
    if path.is_file() {
        let fix = "write one with `sysmeter bench --format json --out FILE`";
        let mut run = read_record(&args.run, fix)?;
        // A file written by this version carries its intervals; an older one gets those of
        // its rounds (the store is not opened for a file).
        let carried = (run.results.iter().flat_map(|r| &r.metrics)).any(|m| m.run_to_run.is_some());
        if !carried {
            run_history::annotate(None, &mut run);
        }
        return Ok(run);
    }
    if args.run.ends_with(".json") {
        return Err(UsageError(format!(
            "no run file {}: give an existing JSON file written by `sysmeter bench --format json`, \
             or a run id from `sysmeter history`",
            path.display()
        ))
        .into());
    }
    let store = open_store_to_read(&args.pages.db)?;
    // Store errors already name the reference, the database and the fix.
    let mut run = store.load_run(&args.run)?;
    run_history::annotate(Some(&store), &mut run);
    Ok(run)
}

/// Writes `content` to `out` and, for a file, says so on stderr.
fn write(out: OutFile, content: &str, what: &str, run: &RunRecord) -> anyhow::Result<()> {
    let (stdout, path) = (out.is_stdout(), out.path().to_path_buf());
    out.write(content)?;
    if !stdout {
        console::errln(format!(
            "wrote the {what} of run {} to {}",
            run.id,
            path.display()
        ));
    }
    Ok(())
}
