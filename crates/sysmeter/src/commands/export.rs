//! `sysmeter export [RUN]`: a stored run as OpenMetrics, JSON or CSV, on stdout or written
//! atomically to `--out FILE` (a temporary file in the same directory, renamed over FILE, so
//! a reader such as node_exporter's textfile collector never sees half a file).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{Outcome, UsageError, emit, open_store};
use crate::cli::{ExportArgs, ExportFormat};
use crate::report::{self, Format, openmetrics};

/// Export a stored run.
pub fn export(args: &ExportArgs) -> anyhow::Result<Outcome> {
    let store = open_store(&args.db)?;
    let run = store.load_run(&args.run)?;
    let text = match args.effective_format() {
        ExportFormat::Openmetrics => openmetrics::render(&run),
        ExportFormat::Json => report::render(&run, Format::Json, false)?,
        ExportFormat::Csv => report::render(&run, Format::Csv, false)?,
    };
    match &args.out {
        Some(path) => write_atomically(path, &text)?,
        None => emit(&text)?,
    }
    Ok(Outcome::Success)
}

/// Writes `text` to a temporary file next to `path` and renames it over `path`.
fn write_atomically(path: &Path, text: &str) -> anyhow::Result<()> {
    let fail = |e: std::io::Error| {
        UsageError(format!(
            "cannot write --out {}: {e}; choose a path in a writable directory",
            path.display()
        ))
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(fail)?;
    tmp.write_all(text.as_bytes()).map_err(fail)?;
    // NamedTempFile is created 0600; an exported file is meant to be read by other users
    // (node_exporter usually runs as its own user).
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o644))
        .map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
