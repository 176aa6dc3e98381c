//! `sysmeter report RUN --html FILE [--markdown FILE]`: render a stored run (or a run saved
//! with `--format json`) as a self-contained HTML page and/or Markdown, and write the files.

use std::path::Path;

use anyhow::Context;

use super::{Outcome, UsageError, open_store};
use crate::cli::ReportArgs;
use crate::model::{RunRecord, SCHEMA_VERSION};
use crate::report::{self, Format};

/// Run `sysmeter report`.
pub fn report(args: &ReportArgs) -> anyhow::Result<Outcome> {
    let run = load(args)?;
    if let Some(path) = &args.html {
        write(path, &report::html::render(&run)?, "HTML report", &run)?;
    }
    if let Some(path) = &args.markdown {
        let markdown = report::render(&run, Format::Markdown, false)?;
        write(path, &markdown, "Markdown report", &run)?;
    }
    Ok(Outcome::Success)
}

/// The run named by `args.run`: a JSON file when such a file exists, else a store reference.
fn load(args: &ReportArgs) -> anyhow::Result<RunRecord> {
    let path = Path::new(&args.run);
    if path.is_file() {
        return load_json(path);
    }
    if args.run.ends_with(".json") {
        return Err(UsageError(format!(
            "no run file {}: give an existing JSON file written by `sysmeter bench --format json`, \
             or a run id from `sysmeter history`",
            path.display()
        ))
        .into());
    }
    let store = open_store(&args.db)?;
    // Store errors already name the reference, the database and the fix.
    Ok(store.load_run(&args.run)?)
}

/// A run record saved as JSON (`--format json`), refused when its schema is newer.
fn load_json(path: &Path) -> anyhow::Result<RunRecord> {
    let text = std::fs::read_to_string(path).with_context(|| {
        format!(
            "could not read run file {}; check the path and its permissions",
            path.display()
        )
    })?;
    let run: RunRecord = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a sysmeter run in JSON; write one with `sysmeter bench --format json --out FILE`",
            path.display()
        )
    })?;
    if run.schema > SCHEMA_VERSION {
        return Err(UsageError(format!(
            "{} uses result schema {}, newer than this sysmeter reads ({SCHEMA_VERSION}); \
             render it with a newer sysmeter",
            path.display(),
            run.schema
        ))
        .into());
    }
    Ok(run)
}

/// Writes `content` to `path` (`-` = stdout) and says so on stderr.
fn write(path: &Path, content: &str, what: &str, run: &RunRecord) -> anyhow::Result<()> {
    if path == Path::new("-") {
        print!("{content}");
        return Ok(());
    }
    std::fs::write(path, content).with_context(|| {
        format!(
            "could not write the {what} to {}; check that the directory exists and is writable",
            path.display()
        )
    })?;
    eprintln!("wrote the {what} of run {} to {}", run.id, path.display());
    Ok(())
}
