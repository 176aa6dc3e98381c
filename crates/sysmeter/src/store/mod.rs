//! The result store: the only module that knows SQL. Runs, their experiment results, the
//! metric summaries and every raw sample live in a database, so `history`, `show` and
//! `compare` work on past runs and statistics can be recomputed later. Two backends keep the
//! same tables: an embedded SQLite file (the default, `$XDG_DATA_HOME/sysmeter/sysmeter.db`)
//! and, for fleets, a PostgreSQL server named by a `postgres://` URL (cargo feature `pg`)
//! where many machines store their runs side by side.
//!
//! A run is written incrementally: [`Store::begin_run`] inserts the run row,
//! [`Store::put_result`] commits each experiment in its own transaction as soon as it finishes
//! (so Ctrl-C or a crash loses nothing already measured; with several rounds
//! [`Store::put_result`] with `Put::Replace` stores it again after each round), and [`Store::finish_run`]
//! records the end. [`Store::load_run`] rebuilds the exact [`RunRecord`](crate::model::RunRecord)
//! (bit-exact for floats inside the JSON columns only with serde_json's `float_roundtrip`
//! feature; summary columns and raw samples are always exact).
//! Numbers are stored as integers (ns, bytes) or floating-point columns and never as
//! formatted strings; the store never formats anything for people. Depends only on `model`,
//! rusqlite, postgres and serde_json.
//!
//! Layout: `target` (path or URL), `rows` (model ↔ rows, shared by both backends), `read` and
//! `write` (the backend-independent API), `schema` (what both schemas share, and the order of
//! the migrations), `sqlite/` and `pg/` (SQL, schema and migrations of each backend), `error`.

mod columns;
mod error;
pub mod fleet;
#[cfg(feature = "pg")]
mod pg;
mod read;
mod retention;
mod rows;
mod rows_extra;
mod schema;
mod sqlite;
mod summary;
mod target;
mod write;
pub use write::Put;
use write::Writes;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_file;
#[cfg(test)]
mod tests_hosts;
#[cfg(test)]
mod tests_machine;
#[cfg(test)]
mod tests_replace;

use std::ffi::OsString;
use std::path::{Path, PathBuf};

pub use error::StoreError;
pub use read::RunListing;
pub use retention::{Beyond, FUTURE_SLACK_NS};
pub use target::{DbTarget, PgUrl};

/// The schema version this build writes (the number of migrations; the same for both
/// backends, whose version N has the same `runs`, `results` and `metrics` columns; from 5 a
/// PostgreSQL database also has the fleet's derived tables, `pg/fleet_schema.rs`). Both
/// backends' lists come from one `store::schema::Migrations::all`, whose array type keeps
/// their lengths equal.
pub const DB_SCHEMA_VERSION: usize = sqlite::MIGRATIONS.len();

/// An open sysmeter database.
#[derive(Debug)]
pub struct Store {
    backend: Backend,
    /// The machine whose runs `latest` / `latest~N` count (see [`Store::set_home_host`]).
    home_host: Option<String>,
    /// Whether raw samples are written (see [`Store::keep_samples`]).
    samples: bool,
}

/// The database behind a [`Store`].
#[derive(Debug)]
enum Backend {
    Sqlite(sqlite::Sqlite),
    #[cfg(feature = "pg")]
    Pg(pg::Pg),
}

/// Calls the same method on whichever backend the store has (`&` access).
macro_rules! on_backend {
    ($store:expr, $b:ident => $call:expr) => {
        match &$store.backend {
            $crate::store::Backend::Sqlite($b) => $call,
            #[cfg(feature = "pg")]
            $crate::store::Backend::Pg($b) => $call,
        }
    };
}

/// Calls the same method on whichever backend the store has (`&mut` access).
macro_rules! on_backend_mut {
    ($store:expr, $b:ident => $call:expr) => {
        match &mut $store.backend {
            $crate::store::Backend::Sqlite($b) => $call,
            #[cfg(feature = "pg")]
            $crate::store::Backend::Pg($b) => $call,
        }
    };
}
pub(crate) use {on_backend, on_backend_mut};

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
    /// Opens the database named by a `--db` value: a `postgres://` / `postgresql://` URL is
    /// a PostgreSQL server (see [`DbTarget::parse`]), anything else an SQLite file. See
    /// [`Store::open_target`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::open_target(&DbTarget::parse(path.as_os_str()))
    }

    /// Opens (creating it if needed) the database `target`, brings its schema up to date and
    /// refuses databases that are not sysmeter's or were written by a newer sysmeter. An
    /// SQLite file gets its parent directories created; a PostgreSQL URL needs a build with
    /// the `pg` feature ([`StoreError::PgNotBuilt`] otherwise).
    pub fn open_target(target: &DbTarget) -> Result<Store, StoreError> {
        let backend = match target {
            DbTarget::File(path) => Backend::Sqlite(sqlite::Sqlite::open(path)?),
            DbTarget::Postgres(url) => open_postgres(url)?,
        };
        Ok(Store {
            backend,
            home_host: None,
            samples: true,
        })
    }

    /// An empty store standing for the SQLite file `path` that does not exist: a command that
    /// only reads finds no runs there and creates nothing (no file, no directories), while
    /// its messages still name `path`.
    pub fn open_absent(path: &Path) -> Result<Store, StoreError> {
        Ok(Store {
            backend: Backend::Sqlite(sqlite::Sqlite::open_absent(path)?),
            home_host: None,
            samples: true,
        })
    }

    /// Opens a fresh SQLite database that lives only in memory (for tests and `--no-store`
    /// paths that still want the same code).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        Ok(Store {
            backend: Backend::Sqlite(sqlite::Sqlite::open_in_memory()?),
            home_host: None,
            samples: true,
        })
    }

    /// Where this store reads and writes, for messages: the SQLite file (`:memory:` for an
    /// in-memory store), or the PostgreSQL URL without its password.
    pub fn path(&self) -> &Path {
        on_backend!(self, b => b.location())
    }

    /// Whether this is a database shared by many machines (PostgreSQL). Commands then scope
    /// `history` and `latest` to this machine unless told otherwise.
    pub fn is_fleet(&self) -> bool {
        !matches!(self.backend, Backend::Sqlite(_))
    }

    /// Makes `latest` and `latest~N` in [`Store::load_run`] count only the runs of machine
    /// `hostname` (`None`: every run). Run ids and id prefixes still find any machine's run.
    pub fn set_home_host(&mut self, hostname: Option<String>) {
        self.home_host = hostname;
    }

    /// Whether the results written from now on to a fleet store (PostgreSQL) keep their raw
    /// samples (the default of the library) or only their summary (`store/summary.rs`:
    /// statistics, series points, findings, machine state; the commands' default for a fleet
    /// store, `--with-samples` to keep them). An SQLite file always keeps everything.
    pub fn keep_samples(&mut self, keep: bool) {
        self.samples = keep;
    }

    /// The machine set by [`Store::set_home_host`].
    pub fn home_host(&self) -> Option<&str> {
        self.home_host.as_deref()
    }
}

#[cfg(feature = "pg")]
fn open_postgres(url: &PgUrl) -> Result<Backend, StoreError> {
    Ok(Backend::Pg(pg::Pg::connect(url)?))
}

#[cfg(not(feature = "pg"))]
fn open_postgres(url: &PgUrl) -> Result<Backend, StoreError> {
    Err(StoreError::PgNotBuilt {
        url: url.shown().to_string(),
    })
}

#[cfg(test)]
impl Store {
    /// The SQLite connection, for tests that look under the hood.
    fn sqlite_conn(&self) -> &rusqlite::Connection {
        match &self.backend {
            Backend::Sqlite(s) => &s.conn,
            #[cfg(feature = "pg")]
            Backend::Pg(_) => panic!("not an SQLite store"),
        }
    }
}
