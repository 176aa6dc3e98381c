//! `sysmeter import FILE…`: stores run records written with `--format json` on other
//! machines in this store (SQLite or PostgreSQL), so one file can gather a fleet. Each run
//! keeps its id and its host; a run already stored is skipped. A file that is not a run
//! record, or a record that cannot be stored as it is (a number out of the store's range, a
//! control character in its id or hostname), is refused with one sentence on stderr and
//! nothing of it stored; the other files are still imported, and the command exits 2 —
//! nothing already imported is lost, and importing again is safe, also at the same time.

use std::fmt::Write;

use super::infile::read_record;
use super::{Outcome, emit, is_usage_error, open_store};
use crate::cli::ImportArgs;
use crate::store::StoreError;

/// What to do with a file that is not a run record.
const FIX: &str =
    "import files written by `sysmeter bench --format json` or `sysmeter show RUN --format json`";

/// Imports every file.
pub fn import(args: &ImportArgs) -> anyhow::Result<Outcome> {
    let mut store = open_store(&args.db)?;
    if args.with_samples {
        store.keep_samples(true);
    }
    let (mut imported, mut skipped, mut refused) = (0, 0, 0);
    let mut out = String::new();
    for file in &args.files {
        let name = file.display().to_string();
        let run = match read_record(&name, FIX) {
            Ok(run) => run,
            Err(e) if is_usage_error(&e) => {
                super::console::errln(format!("error: {e}"));
                refused += 1;
                continue;
            }
            Err(e) => return Err(e),
        };
        let stored = match store.import_run(&run) {
            Ok(stored) => stored,
            Err(e @ StoreError::Refused { .. }) => {
                super::console::errln(format!("error: {name}: {e}"));
                refused += 1;
                continue;
            }
            Err(e) => {
                // What was imported before stays stored: say so before the error.
                emit(&out)?;
                return Err(super::full_disk::named(e));
            }
        };
        if stored {
            imported += 1;
            writeln!(
                out,
                "imported run {} of host {} from {name}",
                run.id, run.host.hostname
            )?;
        } else {
            skipped += 1;
            writeln!(out, "skipped run {} from {name}: already stored", run.id)?;
        }
    }
    if imported > 0 {
        super::full_disk::checkpoint(&mut store);
    }
    writeln!(
        out,
        "{imported} run(s) imported, {skipped} already stored, {refused} file(s) refused, in {}; \
         `sysmeter fleet` compares the hosts.",
        store.path().display()
    )?;
    emit(&out)?;
    Ok(if refused > 0 {
        Outcome::Code(2)
    } else {
        Outcome::Success
    })
}
