//! The SQLite backend: one file per database, opened with WAL and a busy timeout so several
//! sysmeter processes can share it. Layout: `schema` (numbered migrations, identity check),
//! `write`, `read`. Depends on rusqlite and the store's rows and errors only.

mod fleet;
mod read;
mod schema;
mod write;

use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode};

pub(super) use schema::MIGRATIONS;

use super::StoreError;
use super::error::sql_hint;

/// How long a statement waits for another process holding the database before giving up.
/// Several sysmeter processes may share one file (a bench while `history` runs); commits are
/// small, so 10 s only expires when something is really stuck.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// How often [`Sqlite::open`] retries when another process holds the database briefly
/// (10 ms, 20 ms, ... between attempts: about 4 s in all).
const OPEN_RETRIES: u32 = 28;

/// An open SQLite database.
#[derive(Debug)]
pub(super) struct Sqlite {
    pub(super) conn: Connection,
    /// The file (`:memory:` for an in-memory database); used in messages.
    path: PathBuf,
}

impl Sqlite {
    /// Opens (creating it and its parent directories if needed) the database at `path`,
    /// brings its schema up to date and refuses files that are not sysmeter databases or were
    /// written by a newer sysmeter.
    pub(super) fn open(path: &Path) -> Result<Sqlite, StoreError> {
        // A directory, device or FIFO is no database: SQLite would say only "unable to open".
        if let Some(meta) = std::fs::metadata(path).ok().filter(|m| !m.is_file()) {
            let what = if meta.is_dir() {
                "a directory"
            } else {
                "not a regular file"
            };
            return Err(StoreError::NotSysmeter {
                path: path.to_path_buf(),
                reason: format!("it is {what}"),
            });
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|cause| StoreError::CreateDir {
                    path: dir.to_path_buf(),
                    cause,
                })?;
        }
        // The runs hold command lines and host details: a new database is the user's alone
        // (SQLite gives its -wal and -shm files the database's permissions). An existing
        // file, or one another process creates first, keeps its own.
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path);
        // Two sysmeter processes opening a new database at once (a bench and a `history`)
        // can meet SQLITE_BUSY where SQLite does not call the busy handler (switching to WAL,
        // upgrading a read to a write). Such a meeting is brief: retry the whole open.
        let mut attempt = 0;
        loop {
            let conn = Connection::open(path).map_err(|source| open_error(path, source))?;
            match Sqlite::init(conn, path.to_path_buf()) {
                Err(e) if attempt < OPEN_RETRIES && is_busy(&e) => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(10 * u64::from(attempt)));
                }
                other => return other,
            }
        }
    }

    /// Opens a fresh database that lives only in memory.
    pub(super) fn open_in_memory() -> Result<Sqlite, StoreError> {
        Sqlite::open_absent(Path::new(":memory:"))
    }

    /// A fresh database in memory that messages call `path` (a file not created yet).
    pub(super) fn open_absent(path: &Path) -> Result<Sqlite, StoreError> {
        let conn = Connection::open_in_memory().map_err(|source| open_error(path, source))?;
        Sqlite::init(conn, path.to_path_buf())
    }

    fn init(mut conn: Connection, path: PathBuf) -> Result<Sqlite, StoreError> {
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
        Ok(Sqlite { conn, path })
    }
}

impl Sqlite {
    /// Copies what the write-ahead log holds into the database file, without waiting for
    /// readers (`PASSIVE`). SQLite does this on its own every 1000 pages and at close, but
    /// says nothing when it fails there; asked here, a full disk is said. What is in the log
    /// is stored either way.
    pub(super) fn checkpoint(&mut self) -> Result<(), StoreError> {
        self.conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
            .map_err(|e| sql_error(&self.path, "checkpoint the write-ahead log", e))
    }
}

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
        hint: sql_hint(&cause),
        cause: Box::new(cause),
    }
}
