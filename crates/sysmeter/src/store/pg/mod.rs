//! The PostgreSQL backend (cargo feature `pg`): one database shared by a fleet of machines,
//! each storing its runs next to the others'. The tables are those of the SQLite backend with
//! PostgreSQL types; `schema` numbers and tracks the migrations in `sysmeter_schema`.
//! Layout: `schema` (and `fleet_schema`, the tables the fleet reduction reads), `write`,
//! `read`, `fleet` and `reduce`. Depends on the `postgres` crate (blocking client, no
//! TLS) and the store's rows and errors only.
//!
//! The client is in a `RefCell` because the driver needs `&mut` even to read, while the
//! store's read API takes `&self`; a `Store` is used from one thread at a time.

mod fleet;
mod fleet_schema;
mod read;
mod reduce;
mod schema;
mod write;

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use postgres::error::SqlState;
use postgres::{Client, Config, IsolationLevel, NoTls, Transaction};

use super::{PgUrl, StoreError};

/// How long connecting may take when the URL does not say (`connect_timeout=`): an
/// unreachable host should fail in seconds, not after the kernel's TCP timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An open connection to a sysmeter database on a PostgreSQL server.
pub(super) struct Pg {
    client: RefCell<Client>,
    /// The URL without its password, as a path for the messages shared with SQLite.
    location: PathBuf,
}

impl std::fmt::Debug for Pg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pg")
            .field("location", &self.location)
            .finish()
    }
}

impl Pg {
    /// Connects to `url` and brings the schema up to date (see `schema::migrate`).
    pub(super) fn connect(url: &PgUrl) -> Result<Pg, StoreError> {
        let shown = url.shown().to_string();
        let mut config: Config = url.as_str().parse().map_err(|e| StoreError::BadUrl {
            url: shown.clone(),
            reason: describe(&e),
        })?;
        // `postgres://` alone parses, then fails to connect for want of a host: say it is
        // the URL that is wrong (a usage error), not the server.
        if config.get_hosts().is_empty() {
            return Err(StoreError::BadUrl {
                url: shown,
                reason: "it names no host".into(),
            });
        }
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_application_name().is_none() {
            config.application_name("sysmeter");
        }
        let mut client = config.connect(NoTls).map_err(|e| {
            let reason = describe(&e);
            // The driver is built without TLS: say so rather than blame the server.
            let hint = if reason.contains("TLS") {
                "this sysmeter cannot use TLS yet; remove sslmode=require from the URL and \
                 reach the server over a trusted network or an SSH tunnel"
            } else {
                "check that the server is running and that the URL's host, port, user, \
                 password and database are right"
            };
            StoreError::Connect {
                url: shown.clone(),
                reason,
                hint,
            }
        })?;
        let location = PathBuf::from(shown);
        schema::migrate(&mut client, &location)?;
        Ok(Pg {
            client: RefCell::new(client),
            location,
        })
    }

    /// Wraps a failed statement into [`StoreError::Server`].
    fn error(&self, action: &str, e: &postgres::Error) -> StoreError {
        server_error(&self.location, action, e)
    }
}

/// A read-only transaction over one snapshot (repeatable read), for reads of several
/// statements that must agree with each other while a bench goes on writing.
fn snapshot(client: &mut Client) -> Result<Transaction<'_>, postgres::Error> {
    client
        .build_transaction()
        .isolation_level(IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
}

/// [`StoreError::Server`] for a failed statement, with a hint chosen from its SQLSTATE.
fn server_error(location: &Path, action: &str, e: &postgres::Error) -> StoreError {
    StoreError::Server {
        action: action.to_string(),
        url: location.display().to_string(),
        reason: describe(e),
        hint: hint(e),
    }
}

/// The driver's error in one line: the server's own message (and detail) for a database
/// error, else the driver's description followed by its causes.
fn describe(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        };
    }
    let mut text = e.to_string();
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        text.push_str(&format!(": {c}"));
        cause = c.source();
    }
    text
}

/// The advice part of a [`StoreError::Server`] message.
fn hint(e: &postgres::Error) -> &'static str {
    if e.is_closed() {
        return "the connection to the server was lost; check the server and retry";
    }
    let Some(code) = e.code() else {
        return "check the connection to the server and retry";
    };
    if *code == SqlState::INSUFFICIENT_PRIVILEGE {
        "grant the database user the right to create tables and to read and write them, \
         or pass another --db"
    } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
        "the server is read-only (a standby?); point --db at the primary"
    } else if *code == SqlState::UNIQUE_VIOLATION {
        "a run with this id is already stored (two machines started a run in the same second \
         with the same random suffix); run again"
    } else if *code == SqlState::T_R_SERIALIZATION_FAILURE
        || *code == SqlState::T_R_DEADLOCK_DETECTED
        || *code == SqlState::ADMIN_SHUTDOWN
    {
        "the server gave up on the statement; retry"
    } else if *code == SqlState::DISK_FULL {
        "the server is out of disk space; free some, or pass another --db"
    } else {
        "if it persists, check the server log and the database"
    }
}
