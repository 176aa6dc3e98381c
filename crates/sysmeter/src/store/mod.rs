//! The result store: the only module that knows SQL. Runs, their experiment results, the
//! metric summaries and every raw sample live in one SQLite file (default
//! `$XDG_DATA_HOME/sysmeter/sysmeter.db`), so `history`, `show` and `compare` work on past runs
//! and statistics can be recomputed later.
//!
//! A run is written incrementally: [`Store::begin_run`] inserts the run row,
//! [`Store::add_result`] commits each experiment in its own transaction as soon as it finishes
//! (so Ctrl-C or a crash loses nothing already measured), and [`Store::finish_run`] records the
//! end. [`Store::load_run`] rebuilds the exact [`RunRecord`](crate::model::RunRecord)
//! (bit-exact for floats inside the JSON columns only with serde_json's `float_roundtrip`
//! feature; summary columns and raw samples are always exact).
//! Numbers are stored as integers (ns, bytes) or REAL and never as formatted strings; the store
//! never formats anything for people. Depends only on `model` and rusqlite/serde_json.
//!
//! Layout: `schema` (numbered migrations), `write`, `read`, `rows` (row ↔ model), `error`.

mod error;
mod read;
mod rows;
mod schema;
mod write;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_file;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode};

pub use error::StoreError;
pub use read::RunListing;

/// How long a statement waits for another process holding the database before giving up.
/// Several sysmeter processes may share one file (a bench while `history` runs); commits are
/// small, so 10 s only expires when something is really stuck.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open sysmeter database.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    /// Where the database lives (`:memory:` for [`Store::open_in_memory`]); used in messages.
    path: PathBuf,
}

/// The default database file: `$XDG_DATA_HOME/sysmeter/sysmeter.db`, else
/// `$HOME/.local/share/sysmeter/sysmeter.db`; `None` when neither variable is usable.
pub fn default_db_path() -> Option<PathBuf> {
    db_path_from(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
}

/// [`default_db_path`] given the values of `XDG_DATA_HOME` and `HOME`, so it can be tested
/// without touching the process environment.
fn db_path_from(xdg_data_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    // The XDG spec says relative (or empty) values must be ignored.
    let absolute = |v: Option<OsString>| v.map(PathBuf::from).filter(|p| p.is_absolute());
    let data_home = absolute(xdg_data_home)
        .or_else(|| absolute(home).map(|home| home.join(".local").join("share")))?;
    Some(data_home.join("sysmeter").join("sysmeter.db"))
}

impl Store {
    /// Opens (creating it and its parent directories if needed) the database at `path`,
    /// brings its schema up to date and refuses files that are not sysmeter databases or were
    /// written by a newer sysmeter.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|cause| StoreError::CreateDir {
                path: dir.to_path_buf(),
                cause,
            })?;
        }
        // Two sysmeter processes opening a new database at once (a bench and a `history`)
        // can meet SQLITE_BUSY where SQLite does not call the busy handler (switching to WAL,
        // upgrading a read to a write). Such a meeting is brief: retry the whole open.
        let mut attempt = 0;
        loop {
            let conn = Connection::open(path).map_err(|source| open_error(path, source))?;
            match Store::init(conn, path.to_path_buf()) {
                Err(e) if attempt < OPEN_RETRIES && is_busy(&e) => {
                    attempt += 1;
                    std::thread::sleep(std::time::Duration::from_millis(10 * attempt as u64));
                }
                other => return other,
            }
        }
    }

    /// Opens a fresh database that lives only in memory (for tests and `--no-store` paths
    /// that still want the same code).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(|source| open_error(&path, source))?;
        Store::init(conn, path)
    }

    /// The file this store reads and writes (`:memory:` for an in-memory store).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn init(mut conn: Connection, path: PathBuf) -> Result<Store, StoreError> {
        let fail = |source| open_error(&path, source);
        // Set before anything else touches the file, so even the first read waits for a
        // concurrent writer (e.g. another sysmeter creating the same database).
        conn.busy_timeout(BUSY_TIMEOUT).map_err(fail)?;
        // WAL lets `history` read while a bench writes, and a commit never rewrites what is
        // already stored. An in-memory database answers "memory"; that is fine.
        // This is also the first statement that reads the file, so a file that is not a
        // database fails here.
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0))
            .map_err(fail)?;
        // Off by default in SQLite; the cascades from runs to results to metrics need it.
        conn.pragma_update(None, "foreign_keys", true)
            .map_err(fail)?;
        schema::migrate(&mut conn, &path)?;
        Ok(Store { conn, path })
    }
}

/// How often [`Store::open`] retries when another process holds the database briefly
/// (10 ms, 20 ms, ... between attempts: about 4 s in all).
const OPEN_RETRIES: u32 = 28;

/// Whether an open failed only because another connection held a lock at that moment.
fn is_busy(e: &StoreError) -> bool {
    let text = e.to_string();
    text.contains("database is locked") || text.contains("database is busy")
}

/// Classifies an error met while opening: a file that is not (or no longer) a database gets
/// the "not a sysmeter database" message, everything else the "cannot open" one.
fn open_error(path: &Path, cause: rusqlite::Error) -> StoreError {
    // rusqlite appends the path to some open errors; the message already names it.
    let text = cause.to_string();
    let reason = text
        .strip_suffix(&format!(": {}", path.display()))
        .unwrap_or(&text)
        .to_string();
    let path = path.to_path_buf();
    match cause.sqlite_error_code() {
        Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => {
            StoreError::NotSysmeter { path, reason }
        }
        _ => StoreError::Open { path, reason },
    }
}

/// Wraps a failed statement into [`StoreError::Sql`] with a hint chosen from its error code.
fn sql_error(path: &Path, action: &str, cause: rusqlite::Error) -> StoreError {
    StoreError::Sql {
        action: action.to_string(),
        path: path.to_path_buf(),
        hint: error::sql_hint(&cause),
        cause: Box::new(cause),
    }
}
