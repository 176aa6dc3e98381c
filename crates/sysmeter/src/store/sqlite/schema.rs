//! The database schema as numbered migrations, and the check that a file is ours.
//!
//! Migration `i` (0-based index into [`MIGRATIONS`]) brings `PRAGMA user_version` from `i` to
//! `i + 1` inside one transaction, so a database is always at exactly one known version. Never
//! edit a migration that has shipped: append a new one. `PRAGMA application_id` marks the file
//! as sysmeter's, so another program's SQLite file is refused instead of being "migrated".
//!
//! Times are INTEGER nanoseconds, sizes INTEGER bytes; summary statistics are REAL columns so
//! `history`/`compare` can query them in SQL; the parts of the model nobody queries (host,
//! config, about, series, ...) are JSON text; raw samples are little-endian f64 BLOBs.

use std::path::Path;

use rusqlite::{Connection, TransactionBehavior};

use super::{open_error, sql_error};
use crate::store::StoreError;
use crate::store::schema::{Migrations, Types, tables_1};

/// Marks a file as a sysmeter database (`PRAGMA application_id`; ASCII "SyMt").
pub(crate) const APPLICATION_ID: i32 = 0x5379_4d74;

/// The migrations, in order. `MIGRATIONS.len()` is the schema version this build writes.
pub(crate) const MIGRATIONS: &[&str] = &Migrations {
    tables: MIGRATION_1,
    summary: MIGRATION_4,
    fleet: MIGRATION_5,
    received: MIGRATION_6,
}
.all();

/// SQLite's clock as ns since the Unix epoch (to the millisecond: `julianday` holds no more).
macro_rules! sqlite_now_ns {
    () => {
        "(CAST((julianday('now') - 2440587.5) * 86400000.0 AS INTEGER) * 1000000)"
    };
}

/// Schema 6: when the store received each run, by the store's clock (`store/retention.rs`).
/// A trigger fills it for every row inserted without one (sysmeter's own writes, and rows
/// inserted by hand or by another program through SQL). A run stored before schema 6 gets
/// what is known of it: its own start, unless that lies after the migration's clock, which
/// then stands for it (the file held the run by then), so a run dated in the future is
/// never taken for one received later.
const MIGRATION_6: &str = concat!(
    "
ALTER TABLE runs ADD COLUMN received_ns INTEGER;
UPDATE runs SET received_ns = min(started_ns, ",
    sqlite_now_ns!(),
    ");
CREATE TRIGGER runs_received AFTER INSERT ON runs WHEN NEW.received_ns IS NULL
BEGIN
    UPDATE runs SET received_ns = ",
    sqlite_now_ns!(),
    " WHERE id = NEW.id;
END;
CREATE INDEX runs_by_received ON runs(hostname, kind, received_ns);
"
);

/// Schema 5: nothing in SQLite. PostgreSQL adds the fleet's tables of numbers, kept by
/// triggers (`pg/fleet_schema.rs`); SQLite's `fleet` reads the metrics rows, so its tables
/// stay those of schema 4 and only the version moves, keeping one number for both backends.
const MIGRATION_5: &str = "-- schema 5 changes nothing in SQLite";

/// Schema 4: a result stored as its summary (a fleet store, `store/summary.rs`): the
/// compressed summary and its metrics' names, units and medians for the fleet's SQL. SQLite
/// keeps every sample, so it never fills them; the columns keep both schemas the same.
const MIGRATION_4: &str = "
ALTER TABLE results ADD COLUMN summary BLOB;
ALTER TABLE results ADD COLUMN metric_names TEXT;
ALTER TABLE results ADD COLUMN metric_units TEXT;
ALTER TABLE results ADD COLUMN medians TEXT;
";

/// Schema 1: runs, results, metrics (`store/schema.rs`), in a file marked as sysmeter's.
const MIGRATION_1: &str = concat!("\nPRAGMA application_id = 1400458612;\n", tables_1!());

/// SQLite's words for the placeholders of schema 1 (`store/schema.rs`).
const TYPES: Types = Types(["INTEGER", "REAL", "INTEGER", "TEXT", "BLOB", " STRICT"]);

/// Checks that the open file is a sysmeter database this build can use, then applies the
/// missing migrations. A database already at the current version is only read, so opening
/// it never needs the write lock.
pub(crate) fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let version = check_identity(conn, path)?;
    if version == MIGRATIONS.len() as i64 {
        return Ok(());
    }
    for (from, sql) in MIGRATIONS.iter().enumerate() {
        let to = from + 1;
        let action = format!("upgrade the schema to version {to}");
        let fail = |source| sql_error(path, &action, source);
        // IMMEDIATE takes the write lock up front: two processes creating the same database
        // serialise here, and the second sees the first's work in the re-read below.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let current: i64 = tx
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(fail)?;
        if current >= to as i64 {
            continue;
        }
        tx.execute_batch(&TYPES.fill(sql)).map_err(fail)?;
        tx.pragma_update(None, "user_version", to as i64)
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
    }
    Ok(())
}

/// Returns the schema version of a database that is sysmeter's (or still empty), and refuses
/// anything else.
fn check_identity(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let fail = |source| open_error(path, source);
    // One statement, so all three values come from the same snapshot: read one by one, a
    // migration committed by another process in between looked like foreign tables.
    let (app_id, version, tables): (i32, i64, i64) = conn
        .query_row(
            "SELECT (SELECT application_id FROM pragma_application_id), \
                    (SELECT user_version FROM pragma_user_version), \
                    (SELECT count(*) FROM sqlite_schema)",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .map_err(fail)?;
    let not_ours = |reason: String| StoreError::NotSysmeter {
        path: path.to_path_buf(),
        reason,
    };
    if app_id != 0 && app_id != APPLICATION_ID {
        return Err(not_ours(format!(
            "it belongs to another application, application_id {app_id:#x}"
        )));
    }
    if version > MIGRATIONS.len() as i64 {
        return Err(StoreError::NewerSchema {
            path: path.to_path_buf(),
            found: version,
            known: MIGRATIONS.len(),
        });
    }
    if app_id == 0 && (version != 0 || tables != 0) {
        return Err(not_ours(
            "it is an SQLite database holding tables sysmeter did not create".to_string(),
        ));
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn application_id_in_migration_matches_constant() {
        let expected = format!("PRAGMA application_id = {APPLICATION_ID};");
        assert!(MIGRATION_1.contains(&expected), "{expected}");
    }
}
