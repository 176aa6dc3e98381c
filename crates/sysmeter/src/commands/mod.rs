//! One file per subcommand: glue that turns validated arguments into calls of the library
//! (harness, store, report) and writes the output. No measurement or formatting logic lives
//! here. Errors are `anyhow`; a [`UsageError`] inside one makes `main` exit with code 2.

mod alloc;
mod bench;
mod calls;
mod compare;
mod completions;
pub mod console;
mod diagnosis;
mod export;
mod fleet;
mod full_disk;
mod history;
mod host;
mod import;
mod infile;
#[cfg(test)]
mod json_docs;
mod list;
mod live;
mod locks;
mod man;
mod outfile;
mod output;
mod profile;
mod progress;
mod prune;
mod report;
mod run;
mod run_history;
mod scale;
mod serve;
mod show;
mod trace;

pub use alloc::alloc;
pub use bench::bench;
pub use calls::calls;
pub use compare::compare;
pub use completions::completions;
pub use export::export;
pub use fleet::fleet;
pub use history::history;
pub use host::host;
pub use import::import;
pub use list::list;
pub use live::live;
pub use locks::locks;
pub use man::man;
pub use output::{Ending, Finished, Sink, Stream};
pub use profile::profile;
pub use prune::prune;
pub use report::report;
pub use run::run;
pub use scale::scale;
pub use serve::serve;
pub use show::show;
pub use trace::trace;

use std::path::PathBuf;

use crate::cli::{DbArgs, PageArgs};
use crate::store::{self, Store};

/// The user asked for something that cannot be (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Whether `e` is bad input (exit code 2): a [`UsageError`], or a run reference that names
/// no run or several (`show`, `compare`, `export`, `report` all take one), which is the same
/// kind of mistake as an unknown experiment id.
pub fn is_usage_error(e: &anyhow::Error) -> bool {
    e.downcast_ref::<UsageError>().is_some()
        || matches!(
            e.downcast_ref::<store::StoreError>(),
            Some(
                store::StoreError::RunNotFound { .. }
                    | store::StoreError::AmbiguousRun { .. }
                    | store::StoreError::BadReference { .. }
            )
        )
}

/// How a command ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything worked (exit 0).
    Success,
    /// A measurement failed (exit 1).
    MeasurementFailed,
    /// Stopped by Ctrl-C (exit 130).
    Interrupted,
    /// Exit with this code (e.g. `run -- CMD` passes the command's own exit code through).
    Code(u8),
}

/// Writes `text` to stdout through the one writer ([`console::out`]): a reader that stopped
/// reading (`sysmeter history | head -1`) ends the output quietly.
pub fn emit(text: &str) -> anyhow::Result<()> {
    console::out(text)
}

/// The database from `--db`, else `SYSMETER_DB` (a path, or a `postgres://` URL kept as a
/// path), else the default file in the user's data directory. The environment is read here,
/// not by clap, so an explicit `--no-store` wins over `SYSMETER_DB` (clap counts a value from
/// the environment as given, and refused `--no-store` beside it).
fn db_path(db: &DbArgs) -> anyhow::Result<PathBuf> {
    let env = std::env::var_os("SYSMETER_DB").filter(|v| !v.is_empty());
    match db.db.clone().or(env.map(PathBuf::from)) {
        Some(p) => Ok(p),
        None => store::default_db_path().ok_or_else(|| {
            anyhow::Error::new(UsageError(
                "cannot find a data directory (neither XDG_DATA_HOME nor HOME is set); pass --db PATH"
                    .into(),
            ))
        }),
    }
}

/// The files an output must never replace: the SQLite database of `db` (its -wal and -shm
/// are checked beside it); nothing for a PostgreSQL URL.
fn protected(db: &DbArgs) -> Vec<PathBuf> {
    match db_path(db).map(|p| store::DbTarget::parse(p.as_os_str())) {
        Ok(store::DbTarget::File(path)) => vec![path],
        _ => Vec::new(),
    }
}

/// The `--html` and `--markdown` files of `report` and `compare`, opened by the one output
/// rule (`outfile`) before any run is loaded; neither may replace the database.
fn open_pages(
    pages: &PageArgs,
) -> anyhow::Result<(Option<outfile::OutFile>, Option<outfile::OutFile>)> {
    let protect = protected(&pages.db);
    let html = outfile::open_opt(pages.html.as_deref(), "--html", &protect)?;
    let markdown = outfile::open_opt(pages.markdown.as_deref(), "--markdown", &protect)?;
    Ok((html, markdown))
}

/// Open the store named by `db` to read from it: like [`open_store`], but an SQLite file
/// that does not exist is read as an empty store and not created — a mistyped `--db` makes
/// no directories and no empty database, and says it has no runs.
fn open_store_to_read(db: &DbArgs) -> anyhow::Result<Store> {
    let path = db_path(db)?;
    let absent = matches!(
        store::DbTarget::parse(path.as_os_str()),
        store::DbTarget::File(_)
    ) && std::fs::symlink_metadata(&path).is_err();
    if absent {
        return Store::open_absent(&path).map_err(anyhow::Error::new);
    }
    open_path(&path)
}

/// Open the store named by `db` (a file, or a `postgres://` URL). In a fleet database
/// `latest` and `latest~N` mean this machine's runs.
fn open_store(db: &DbArgs) -> anyhow::Result<Store> {
    open_path(&db_path(db)?)
}

/// [`open_store`] of `path`, already resolved from `--db`, `SYSMETER_DB` or the default.
fn open_path(path: &std::path::Path) -> anyhow::Result<Store> {
    crate::host::check_hostname_override().map_err(UsageError)?;
    // Store errors already name the database and the fix; a URL this build cannot use is the
    // user's to change (exit 2).
    let mut store = Store::open(path).map_err(|e| {
        if e.is_usage() {
            anyhow::Error::new(UsageError(e.to_string()))
        } else {
            full_disk::named(e)
        }
    })?;
    if store.is_fleet() {
        store.set_home_host(Some(crate::host::hostname()));
        // A fleet store keeps summaries unless a command is asked for the samples.
        store.keep_samples(false);
    }
    Ok(store)
}
