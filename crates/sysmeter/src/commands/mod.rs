//! One file per subcommand: glue that turns validated arguments into calls of the library
//! (harness, store, report) and writes the output. No measurement or formatting logic lives
//! here. Errors are `anyhow`; a [`UsageError`] inside one makes `main` exit with code 2.

mod bench;
mod compare;
mod completions;
mod export;
mod history;
mod host;
mod list;
mod man;
mod profile;
mod progress;
mod report;
mod run;
mod scale;
mod show;
mod trace;

pub use bench::bench;
pub use compare::compare;
pub use completions::completions;
pub use export::export;
pub use history::history;
pub use host::host;
pub use list::list;
pub use man::man;
pub use profile::profile;
pub use report::report;
pub use run::run;
pub use scale::scale;
pub use show::show;
pub use trace::trace;

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::cli::DbArgs;
use crate::store::{self, Store};

/// The user asked for something that cannot be (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

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

/// Whether stdout may carry ANSI colour (a terminal, and NO_COLOR unset).
pub fn color_allowed() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// The database from `--db`/`SYSMETER_DB` (a path, or a `postgres://` URL kept as a path) or
/// the default file in the user's data directory.
fn db_path(db: &DbArgs) -> anyhow::Result<PathBuf> {
    match &db.db {
        Some(p) => Ok(p.clone()),
        None => store::default_db_path().ok_or_else(|| {
            anyhow::Error::new(UsageError(
                "cannot find a data directory (neither XDG_DATA_HOME nor HOME is set); pass --db PATH"
                    .into(),
            ))
        }),
    }
}

/// Open the store named by `db` (a file, or a `postgres://` URL). In a fleet database
/// `latest` and `latest~N` mean this machine's runs.
fn open_store(db: &DbArgs) -> anyhow::Result<Store> {
    let path = db_path(db)?;
    // Store errors already name the database and the fix; a URL this build cannot use is the
    // user's to change (exit 2).
    let mut store = Store::open(&path).map_err(|e| {
        if e.is_usage() {
            anyhow::Error::new(UsageError(e.to_string()))
        } else {
            anyhow::Error::new(e)
        }
    })?;
    if store.is_fleet() {
        store.set_home_host(Some(crate::host::hostname()));
    }
    Ok(store)
}
