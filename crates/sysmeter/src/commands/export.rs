//! `sysmeter export [RUN]`: a stored run as OpenMetrics, JSON or CSV, or as the file a
//! viewer opens (callgrind, Chrome trace, Firefox Profiler: `report::export`), on stdout or written to
//! `--out FILE` by the one output rule (`outfile`): atomically for a regular file (a
//! temporary file in the target's directory renamed over it, so a reader such as
//! node_exporter's textfile collector never sees half a file), straight into a device or
//! FIFO.

use super::outfile::open_opt;
use super::{Outcome, UsageError, emit, open_store_to_read, protected, run_history};
use crate::cli::{ExportArgs, ExportFormat};
use crate::model::RunRecord;
use crate::report::export::{ExportError, callgrind, chrome_trace, firefox};
use crate::report::{self, Format, openmetrics};

/// Export a stored run.
pub fn export(args: &ExportArgs) -> anyhow::Result<Outcome> {
    let store = open_store_to_read(&args.db)?;
    let out = open_opt(args.out.as_deref(), "--out", &protected(&args.db))?;
    let mut run = store.load_run(&args.run)?;
    run_history::annotate(Some(&store), &mut run);
    let text = match args.effective_format() {
        ExportFormat::Openmetrics => openmetrics::render(&run),
        ExportFormat::Json => report::render(&run, Format::Json, false)?,
        ExportFormat::Csv => report::render(&run, Format::Csv, false)?,
        ExportFormat::Callgrind => viewer(callgrind::encode, &run)?,
        ExportFormat::ChromeTrace => viewer(chrome_trace::encode, &run)?,
        ExportFormat::Firefox => viewer(firefox::encode, &run)?,
    };
    match out {
        Some(file) => file.write(&text)?,
        None => emit(&text)?,
    }
    Ok(Outcome::Success)
}

/// A viewer's file of `run` (UTF-8 text: JSON or callgrind); a run it does not fit is bad
/// input (exit 2).
fn viewer(
    encode: fn(&RunRecord) -> Result<Vec<u8>, ExportError>,
    run: &RunRecord,
) -> anyhow::Result<String> {
    let bytes = encode(run).map_err(|e| UsageError(e.to_string()))?;
    Ok(String::from_utf8(bytes)?)
}
