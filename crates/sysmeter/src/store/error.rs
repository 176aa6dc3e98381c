//! The errors of the store. Each message names the database (file path, or PostgreSQL URL
//! without its password), says what was attempted and how to fix it, because it reaches the
//! user unchanged through `main`.
//!
//! The underlying error is part of the message and deliberately not exposed as
//! `Error::source`, so printing the error with `{}` or with anyhow's `{:#}` gives the same one
//! sentence instead of repeating the cause.
//!
//! [`sql_hint`] turns an SQLite error code into the advice part of a message, so callers only
//! say what they were doing (the PostgreSQL equivalent is in `pg/mod.rs`, next to the
//! driver it needs).

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

/// Everything that can go wrong opening, writing or reading a sysmeter database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The directory for the database could not be created.
    #[error(
        "cannot create directory {} for the database: {cause}; create it by hand or pass --db PATH",
        .path.display()
    )]
    CreateDir {
        /// The directory that could not be created.
        path: PathBuf,
        /// Why.
        cause: std::io::Error,
    },
    /// SQLite could not open (or first touch) the file.
    #[error(
        "cannot open database {}: {reason}; check the directory exists and is writable, \
         or pass --db PATH",
        .path.display()
    )]
    Open {
        /// The database file.
        path: PathBuf,
        /// What SQLite said (e.g. `unable to open database file`).
        reason: String,
    },
    /// The file exists but is not an SQLite database written by sysmeter.
    #[error(
        "{} is not a sysmeter database ({reason}); move it away or pass another --db",
        .path.display()
    )]
    NotSysmeter {
        /// The file.
        path: PathBuf,
        /// What gave it away (e.g. `file is not a database`).
        reason: String,
    },
    /// The schema version of the file is newer than this build understands.
    #[error(
        "database {} was written by a newer sysmeter (schema {found}, this build knows {known}); \
         upgrade sysmeter or use another --db",
        .path.display()
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// `PRAGMA user_version` found in the file.
        found: i64,
        /// Number of migrations this build has.
        known: usize,
    },
    /// No run matches the reference (id, id prefix, `latest`, `latest~N`, `latest:KIND`).
    #[error(
        "no run '{reference}' in {}; `sysmeter history` lists the runs",
        .path.display()
    )]
    RunNotFound {
        /// The reference as given.
        reference: String,
        /// The database searched.
        path: PathBuf,
    },
    /// An id prefix matches more than one run.
    #[error(
        "run prefix '{reference}' matches {} runs in {} ({}); give more characters of the id",
        .matches.len(), .path.display(), .matches.join(", ")
    )]
    AmbiguousRun {
        /// The prefix as given.
        reference: String,
        /// The database searched.
        path: PathBuf,
        /// Ids that start with the prefix (at most a few).
        matches: Vec<String>,
    },
    /// A reference that is neither an id nor of the form `latest` / `latest~N` /
    /// `latest:KIND` / `latest:KIND~N` with a known kind.
    #[error(
        "'{reference}' is not a run reference; use a run id, a unique id prefix, `latest`, \
         `latest~N` (N = how many runs back) or `latest:KIND` / `latest:KIND~N` (the latest \
         run of a kind: {})",
        crate::model::RunKind::names()
    )]
    BadReference {
        /// The reference as given.
        reference: String,
    },
    /// A statement failed on an open database.
    #[error("cannot {action} in database {}: {cause}; {hint}", .path.display())]
    Sql {
        /// What was being done (e.g. `store run 2026…`).
        action: String,
        /// The database file.
        path: PathBuf,
        /// What SQLite said (boxed: rusqlite's error is large and this is the cold path).
        cause: Box<rusqlite::Error>,
        /// How to fix it, derived from the error code.
        hint: &'static str,
    },
    /// A stored value could not be turned back into the result model.
    #[error(
        "run {run_id} in {} has an unreadable {field} ({detail}); the row was damaged or \
         written by an incompatible tool: delete the run or use another --db",
        .path.display()
    )]
    Decode {
        /// The run being read.
        run_id: String,
        /// Which column or value (e.g. `host_json`).
        field: String,
        /// What was wrong with it.
        detail: String,
        /// The database file.
        path: PathBuf,
    },
    /// A PostgreSQL URL was given to a build without the `pg` feature.
    #[error(
        "cannot use database {url}: this sysmeter was built without PostgreSQL support; \
         rebuild with `cargo build --features pg`"
    )]
    PgNotBuilt {
        /// The URL, without its password.
        url: String,
    },
    /// The PostgreSQL URL could not be parsed.
    #[error(
        "{url} is not a valid PostgreSQL URL ({reason}); write it as \
         postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE"
    )]
    BadUrl {
        /// The URL, without its password.
        url: String,
        /// What the driver said.
        reason: String,
    },
    /// The PostgreSQL server could not be reached or refused the login.
    #[error("cannot connect to PostgreSQL database {url}: {reason}; {hint}")]
    Connect {
        /// The URL, without its password.
        url: String,
        /// What the driver said.
        reason: String,
        /// How to fix it.
        hint: &'static str,
    },
    /// A statement failed on a PostgreSQL database.
    #[error("cannot {action} in database {url}: {reason}; {hint}")]
    Server {
        /// What was being done (e.g. `store run 2026…`).
        action: String,
        /// The URL, without its password.
        url: String,
        /// What the server or the driver said.
        reason: String,
        /// How to fix it, derived from the SQLSTATE.
        hint: &'static str,
    },
    /// `latest` / `latest~N` found no run of this machine in a fleet database.
    #[error(
        "no run '{reference}' of host {hostname} in {}; `sysmeter history --all-hosts` lists \
         every machine's runs, and `sysmeter show ID` shows any of them",
        .path.display()
    )]
    NoRunOfHost {
        /// The reference as given.
        reference: String,
        /// The machine whose runs were searched.
        hostname: String,
        /// The database searched.
        path: PathBuf,
    },
    /// A value of the result model could not be encoded for storage.
    #[error(
        "cannot encode {field} of run {run_id} for database {}: {cause}; this is a bug in \
         sysmeter, please report it",
        .path.display()
    )]
    Encode {
        /// The run being written.
        run_id: String,
        /// Which value.
        field: String,
        /// What went wrong (serde_json's message, or a number out of range).
        cause: String,
        /// The database file.
        path: PathBuf,
    },
    /// A run from elsewhere (`import`) that cannot be stored as it is: nothing of it was.
    #[error("run {run_id} is refused: {reason}; nothing of it was stored")]
    Refused {
        /// The run's id (control characters shown escaped).
        run_id: String,
        /// What is wrong with it.
        reason: String,
    },
}

// PostgreSQL: variants exist in every build, so messages and callers need no cfg.
impl StoreError {
    /// Whether the error is about the `--db` value itself (a PostgreSQL URL this build
    /// cannot use), which commands report as a usage error (exit 2).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            StoreError::PgNotBuilt { .. } | StoreError::BadUrl { .. } | StoreError::Refused { .. }
        )
    }
}

impl StoreError {
    /// The SQLite file (or directory) whose file system may be why this failed: an open
    /// that failed, a directory not created, or a statement that met an I/O error or a full
    /// disk. SQLite says "disk I/O error" for a full disk met while opening (its shared
    /// memory file), so the caller asks the file system (`commands::full_disk`).
    pub fn file_system_path(&self) -> Option<&Path> {
        match self {
            StoreError::Open { path, .. } | StoreError::CreateDir { path, .. } => Some(path),
            StoreError::Sql { path, cause, .. } => match cause.sqlite_error_code() {
                Some(ErrorCode::SystemIoFailure | ErrorCode::DiskFull | ErrorCode::CannotOpen) => {
                    Some(path)
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether SQLite itself said the disk is full (`SQLITE_FULL`: no space, or the
    /// user's quota used up).
    pub fn said_full(&self) -> bool {
        matches!(self, StoreError::Sql { cause, .. }
            if cause.sqlite_error_code() == Some(ErrorCode::DiskFull))
    }
}

/// The advice part of an [`StoreError::Sql`] message, chosen from SQLite's error code.
pub(crate) fn sql_hint(err: &rusqlite::Error) -> &'static str {
    let Some(code) = err.sqlite_error_code() else {
        return "this is a bug in sysmeter, please report it";
    };
    match code {
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => {
            "another process held the database for more than 10 s; retry when it is done"
        }
        ErrorCode::ReadOnly | ErrorCode::PermissionDenied | ErrorCode::CannotOpen => {
            "check that the file and its directory are writable, or pass --db PATH"
        }
        ErrorCode::DiskFull => "free some disk space, or pass --db PATH on another file system",
        ErrorCode::SystemIoFailure => "check the disk and the file system, or pass --db PATH",
        ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase => {
            "the file is damaged; move it away or pass another --db"
        }
        ErrorCode::ConstraintViolation => {
            "the run id is missing or already stored; this is a bug in sysmeter, please report it"
        }
        _ => "if it persists, move the database away or pass another --db",
    }
}
