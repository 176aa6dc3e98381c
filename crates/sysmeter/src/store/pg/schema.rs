//! The PostgreSQL schema as numbered migrations, tracked in `sysmeter_schema` (one row per
//! applied migration; the highest `version` is the schema version), and the check that a
//! database is ours.
//!
//! Migration N has the same tables and columns as SQLite's migration N (`sqlite/schema.rs`;
//! schemas 1 to 3 are written once for both, in `store/schema.rs`), with PostgreSQL types: BIGINT for SQLite's INTEGER (ns, bytes, counts), DOUBLE PRECISION for
//! REAL, BOOLEAN for the 0/1 flag, BYTEA for the raw-sample BLOBs, JSONB for the host and
//! config descriptions (so a fleet can ask e.g. `host_json->'cpu'->>'model'` in SQL) and TEXT
//! for the result-level JSON, which is only ever read back whole and is kept byte for byte.
//! Never edit a migration that has shipped: append a new one to both backends. Schema 5 adds
//! tables of PostgreSQL's own, derived from these and kept by triggers (`fleet_schema.rs`).
//!
//! All pending migrations run in one transaction (PostgreSQL's DDL is transactional) under an
//! advisory lock, so two machines opening a new fleet database at once serialise, and the
//! second finds the work done.

use std::path::Path;

use postgres::{Client, GenericClient};

use super::fleet_schema::{MIGRATION_5, fleet_by_retention};
use super::server_error;
use crate::store::StoreError;
use crate::store::schema::{Migrations, Types, tables_1};

/// The migrations, in order. `MIGRATIONS.len()` is the schema version this build writes.
pub(crate) const MIGRATIONS: &[&str] = &Migrations {
    tables: MIGRATION_1,
    summary: MIGRATION_4,
    fleet: MIGRATION_5,
    received: MIGRATION_6,
}
.all();

/// Schema 6: when the store received each run, by the server's clock (the one clock every
/// member of a fleet shares; `store/retention.rs`): a default, so rows written through SQL
/// get it too. A run stored before schema 6 gets what is known of it: its own start, unless
/// that lies after the migration's clock, which then stands for it, so a run dated in the
/// future is never taken for one received later. The fleet's triggers are held off while
/// the old rows are filled; then the fleet tables take each host's latest run by
/// retention's rule and are filled again (`fleet_schema.rs`, `fleet_by_retention`).
const MIGRATION_6: &str = concat!(
    "
ALTER TABLE runs ADD COLUMN received_ns BIGINT NOT NULL
    DEFAULT (extract(epoch FROM clock_timestamp()) * 1e9)::bigint;
ALTER TABLE runs DISABLE TRIGGER fleet_runs_updated;
UPDATE runs SET received_ns = least(started_ns, received_ns);
ALTER TABLE runs ENABLE TRIGGER fleet_runs_updated;
CREATE INDEX runs_by_received ON runs (hostname, kind, received_ns);
",
    fleet_by_retention!()
);

/// Schema 4: a result stored as its summary (the default of a fleet store,
/// `store/summary.rs`): the zlib-compressed summary, and the names, units and medians of its
/// metrics as arrays (in the order of the summary's metrics; a NaN median is NULL), which
/// the fleet's SQL unnests. Such a result has no `metrics` rows.
const MIGRATION_4: &str = "
ALTER TABLE results ADD COLUMN summary BYTEA;
ALTER TABLE results ADD COLUMN metric_names TEXT[];
ALTER TABLE results ADD COLUMN metric_units TEXT[];
ALTER TABLE results ADD COLUMN medians DOUBLE PRECISION[];
-- Compress a row's arrays too (the summary is compressed already): ~4 KB less per run.
ALTER TABLE results SET (toast_tuple_target = 128);
";

/// Key of the advisory lock taken while migrating (ASCII "SyMt", SQLite's application id).
const MIGRATION_LOCK: i64 = 0x5379_4d74;

/// Schema 1: runs, results, metrics (`store/schema.rs`), and the index of a fleet's
/// `history` and `latest`, which look at one machine's runs.
const MIGRATION_1: &str = concat!(
    tables_1!(),
    "CREATE INDEX runs_by_host ON runs (hostname, started_ns);\n"
);

/// PostgreSQL's words for the placeholders of schema 1 (`store/schema.rs`; module docs).
const TYPES: Types = Types([
    "BIGINT",
    "DOUBLE PRECISION",
    "BOOLEAN",
    "JSONB",
    "BYTEA",
    "",
]);

/// Checks that the database is one this build can use, then applies the missing migrations.
/// A database already at the current version is only read, so a user with read rights only
/// can still run `history` and `show`.
pub(super) fn migrate(client: &mut Client, location: &Path) -> Result<(), StoreError> {
    let known = MIGRATIONS.len();
    if read_version(client, location)? == known {
        return Ok(());
    }
    let fail = |e: postgres::Error| server_error(location, "upgrade the schema", &e);
    let mut tx = client.transaction().map_err(fail)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(fail)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS sysmeter_schema (
             version    BIGINT PRIMARY KEY,
             applied_by TEXT NOT NULL,
             applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
         )",
    )
    .map_err(fail)?;
    // Read again under the lock: another process may have migrated meanwhile.
    let current = read_version(&mut tx, location)?;
    let applied_by = concat!("sysmeter ", env!("CARGO_PKG_VERSION"));
    for (from, sql) in MIGRATIONS.iter().enumerate().skip(current) {
        let to = from as i64 + 1;
        let fail = |e: postgres::Error| {
            server_error(location, &format!("upgrade the schema to version {to}"), &e)
        };
        tx.batch_execute(&TYPES.fill(sql)).map_err(fail)?;
        tx.execute(
            "INSERT INTO sysmeter_schema (version, applied_by) VALUES ($1, $2)",
            &[&to, &applied_by],
        )
        .map_err(fail)?;
    }
    tx.commit().map_err(fail)
}

/// The schema version of a database that is sysmeter's (0 if still empty); refuses a newer
/// schema and sysmeter's table names held by something else.
fn read_version(client: &mut impl GenericClient, location: &Path) -> Result<usize, StoreError> {
    let fail = |e: postgres::Error| server_error(location, "read the schema version", &e);
    // to_regclass follows the search_path, as the unqualified names in the statements do.
    let row = client
        .query_one(
            "SELECT to_regclass('sysmeter_schema') IS NOT NULL,
                    to_regclass('runs') IS NOT NULL OR to_regclass('results') IS NOT NULL
                        OR to_regclass('metrics') IS NOT NULL",
            &[],
        )
        .map_err(fail)?;
    let (tracked, taken): (bool, bool) =
        (row.try_get(0).map_err(fail)?, row.try_get(1).map_err(fail)?);
    if !tracked {
        if taken {
            return Err(StoreError::NotSysmeter {
                path: location.to_path_buf(),
                reason: "it has a table named runs, results or metrics but no sysmeter_schema; \
                         give sysmeter a database of its own, or a schema of its own with \
                         ?options=-csearch_path%3DNAME"
                    .to_string(),
            });
        }
        return Ok(0);
    }
    let found: i64 = client
        .query_one("SELECT coalesce(max(version), 0) FROM sysmeter_schema", &[])
        .and_then(|row| row.try_get(0))
        .map_err(fail)?;
    let known = MIGRATIONS.len();
    match usize::try_from(found) {
        Ok(v) if v <= known => Ok(v),
        _ => Err(StoreError::NewerSchema {
            path: location.to_path_buf(),
            found,
            known,
        }),
    }
}
