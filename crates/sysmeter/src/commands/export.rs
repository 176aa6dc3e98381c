//! `sysmeter export [RUN]`: a stored run as OpenMetrics, JSON or CSV, or for a profile viewer
//! (pprof, speedscope, callgrind, Chrome trace, Firefox Profiler: `report::export`), on stdout or written to `--out FILE` by the one
//! output rule (`outfile`): atomically for a regular file (a temporary file in the target's
//! directory renamed over it, so a reader such as node_exporter's textfile collector never
//! sees half a file), straight into a device or FIFO. A binary format is never written to a
//! terminal (as `gzip` refuses): exit 2 with the sentence that names `--out`. A format that
//! does not fit the run's kind is refused the same way.

use std::io::IsTerminal;

use super::outfile::open_opt;
use super::{Outcome, UsageError, emit, open_store_to_read, protected, run_history};
use crate::cli::{ExportArgs, ExportFormat};
use crate::model::RunRecord;
use crate::report::export::{ExportError, callgrind, chrome_trace, firefox, pprof, speedscope};
use crate::report::{self, Format, openmetrics};

/// Export a stored run.
pub fn export(args: &ExportArgs) -> anyhow::Result<Outcome> {
    let format = args.effective_format();
    let to_stdout = args.out.as_deref().is_none_or(|p| p.as_os_str() == "-");
    if format.is_binary() && to_stdout && std::io::stdout().is_terminal() {
        return Err(UsageError(
            "pprof output is binary and stdout is a terminal; write it to a file with --out FILE \
             (or redirect stdout)"
                .into(),
        )
        .into());
    }
    let store = open_store_to_read(&args.db)?;
    let out = open_opt(args.out.as_deref(), "--out", &protected(&args.db))?;
    let mut run = store.load_run(&args.run)?;
    run_history::annotate(Some(&store), &mut run);
    let text = match format {
        ExportFormat::Openmetrics => openmetrics::render(&run),
        ExportFormat::Json => report::render(&run, Format::Json, false)?,
        ExportFormat::Csv => report::render(&run, Format::Csv, false)?,
        ExportFormat::Pprof => {
            let bytes = pprof::encode(&run).map_err(refused)?;
            match out {
                Some(file) => file.write_bytes(&bytes)?,
                None => super::console::out_bytes(&bytes)?,
            }
            return Ok(Outcome::Success);
        }
        ExportFormat::Speedscope => viewer(speedscope::encode, &run)?,
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

/// A run the format cannot hold is bad input (exit 2), with the error's sentence.
fn refused(e: ExportError) -> anyhow::Error {
    UsageError(e.to_string()).into()
}

/// A viewer's text file of `run` (UTF-8: JSON or callgrind); a run it does not fit is bad
/// input (exit 2).
fn viewer(
    encode: fn(&RunRecord) -> Result<Vec<u8>, ExportError>,
    run: &RunRecord,
) -> anyhow::Result<String> {
    Ok(String::from_utf8(encode(run).map_err(refused)?)?)
}
