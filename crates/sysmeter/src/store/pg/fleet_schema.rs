//! Schema 5 (PostgreSQL only): each host's latest bench values as numbers, kept by the
//! database itself, so `sysmeter fleet` at thousands of hosts reads one short row per host
//! instead of unnesting every result's arrays of metric names (docs/fleet.md, "Measured at
//! 10 000 hosts").
//!
//! - `fleet_metric` numbers each (experiment, metric, unit) once; the numbers are small and
//!   dense, because a name gets one only when a host's latest run first holds it.
//! - `fleet_host` is one row per host: its latest bench run (the `latest` table of
//!   `store::fleet`: from schema 6 by the rule of `store/retention.rs`, a run that ended,
//!   with a possible date, the last received; schema 5 took the newest start whatever the
//!   run's state), its CPU model and kernel (for the roll call, without reading the
//!   description), and `vs`, the median of metric number k at index k (NaN where the run
//!   has none: NaN is never a stored median, and an array without NULLs is sliced in
//!   constant time per element).
//!
//! Triggers keep them: any change to `runs`, `results` or `metrics` — a bench storing a result,
//! a replaced round, `import`, `prune`, a failed import taken back, a `DELETE` in psql, the
//! synthetic fleet script — recomputes the hosts it touches (`fleet_refresh`) in the same
//! transaction, so the tables always say what the `latest` table over `runs` says. Triggers
//! rather than Rust, so that writes from SQL (the documented retention job, the scale
//! script) cannot leave them stale. A refresh takes an advisory lock per host (two writers
//! under one host name wait for each other instead of overwriting each other's rows), or
//! one lock for the whole fleet beyond 64 hosts, to stay within the server's lock table.
//!
//! The functions keep the search path they were created with (`SET search_path FROM
//! CURRENT`), so a write from a session with another search path (psql without the URL's
//! `options`) still finds the schema's own tables.
//!
//! A host row costs ~2.1 KB (204 metrics); one row per host and metric measured 10.4 KB
//! with its index, which a 64 KB-per-run budget does not hold. The migration fills the
//! tables from what the database holds (13 s at 10 000 hosts on an idle machine, 29 s loaded).
//!
//! It also lowers `results`' `toast_tuple_target` to 512 bytes: a result row of a summary
//! run (its arrays of metric names, units and medians beside the compressed summary) is
//! then compressed in line instead of being kept raw below the 2 KB default. Measured with
//! `scripts/fleet-synthetic.sh` at 300 hosts: 60 975 bytes per run instead of 65 290 (768:
//! 61 685; 256: 63 023; 128 on `runs` too: 65 727, the TOAST pointers cost more than
//! they save). It applies to rows written from then on.

/// The three statement-level triggers of `table`, one per event, each calling `function`
/// with its transition tables. One trigger cannot take all three events: PostgreSQL 15
/// refuses transition tables on a trigger with more than one event.
macro_rules! fleet_triggers {
    ($table:literal, $function:literal) => {
        fleet_triggers!(@each $table, $function,
            ("inserted", "INSERT", "NEW TABLE AS new_rows"),
            ("deleted", "DELETE", "OLD TABLE AS old_rows"),
            ("updated", "UPDATE", "OLD TABLE AS old_rows NEW TABLE AS new_rows"))
    };
    // Trigger `fleet_<table>_<name>` after `event` on `table`, with the transition tables
    // `tables`.
    (@each $table:literal, $function:literal,
        $(($name:literal, $event:literal, $tables:literal)),+) => {
        concat!($(
            "CREATE TRIGGER fleet_", $table, "_", $name, " AFTER ", $event, " ON ", $table, "\n",
            "    REFERENCING ", $tables, "\n",
            "    FOR EACH STATEMENT EXECUTE FUNCTION ", $function, "();\n",
        )+)
    };
}

/// `fleet_refresh(touched)`, made by `$create` (`CREATE`, or `CREATE OR REPLACE` in a later
/// schema): recomputes the rows of the hosts `touched` from runs, results and metrics, each
/// host's latest run being the first of its bench runs by `$choice` (further conditions
/// and the order, SQL that follows `WHERE kind = 'bench' AND hostname = ANY (touched)`).
macro_rules! fleet_refresh {
    ($create:literal, $($choice:expr),+) => {
        concat!(
            "-- Recomputes the rows of the hosts `touched` from runs, results and metrics.\n",
            $create,
            " FUNCTION fleet_refresh(touched TEXT[]) RETURNS void LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    latest TEXT[];
BEGIN
    IF cardinality(touched) = 0 THEN
        RETURN;
    ELSIF cardinality(touched) > 64 THEN
        PERFORM pg_advisory_xact_lock(1400458612, 0);
    ELSE
        PERFORM pg_advisory_xact_lock_shared(1400458612, 0);
        PERFORM pg_advisory_xact_lock(1400458613, k)
        FROM (SELECT DISTINCT hashtext(h) AS k FROM unnest(touched) AS h ORDER BY 1) l;
    END IF;
    -- The `latest` table of store::fleet, for these hosts.
    SELECT array_agg(id) INTO latest FROM (
        SELECT DISTINCT ON (hostname) id FROM runs
        WHERE kind = 'bench' AND hostname = ANY (touched)",
            $($choice),+,
            ") l;
    DELETE FROM fleet_host WHERE hostname = ANY (touched);
    -- Only the names not numbered yet: ON CONFLICT alone would use up an identity value
    -- per existing name at every refresh.
    INSERT INTO fleet_metric (exp_id, name, unit)
    SELECT DISTINCT r.exp_id, r.name, r.unit FROM fleet_run_rows(latest) r
    WHERE NOT EXISTS (SELECT 1 FROM fleet_metric f
                      WHERE f.exp_id = r.exp_id AND f.name = r.name AND f.unit = r.unit)
    ON CONFLICT DO NOTHING;
    INSERT INTO fleet_host (hostname, run_id, started_ns, cpu_model, kernel, vs)
    SELECT hostname, id, started_ns, coalesce(host_json->'cpu'->>'model', ''),
           coalesce(host_json->>'kernel', ''), fleet_run_values(id)
    FROM runs WHERE id = ANY (latest);
END $$;
"
        )
    };
}
pub(super) use fleet_refresh;

/// `fleet_runs_changed()`, the trigger function of `runs`, made by `$create` as in
/// [`fleet_refresh`]: refreshes the hosts of the bench runs stored or deleted, and of the
/// runs whose columns `$column…` changed.
macro_rules! fleet_runs_changed {
    ($create:literal, $first:literal $(, $column:literal)*) => {
        concat!(
            "-- A bench run stored, deleted or changed: its host's latest run may be another one now.
-- Statement-level with transition tables, so a bulk write refreshes each host once.
",
            $create,
            " FUNCTION fleet_runs_changed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM fleet_refresh(array(SELECT DISTINCT hostname FROM new_rows WHERE kind = 'bench'));
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM fleet_refresh(array(SELECT DISTINCT hostname FROM old_rows WHERE kind = 'bench'));
    ELSE
        -- A changed run's old and new host names (a run moved to another host touches both).
        PERFORM fleet_refresh(array(
            SELECT DISTINCT h.hostname FROM old_rows o JOIN new_rows n ON n.id = o.id
            CROSS JOIN LATERAL (VALUES (o.hostname), (n.hostname)) AS h (hostname)
            WHERE (o.", $first, $(", o.", $column,)* ")
                  IS DISTINCT FROM (n.", $first, $(", n.", $column,)* ")));
    END IF;
    RETURN NULL;
END $$;
"
        )
    };
}
pub(super) use fleet_runs_changed;

/// Schema 5, run in the migration's transaction (docs above).
pub(super) const MIGRATION_5: &str = concat!(
    "
ALTER TABLE results SET (toast_tuple_target = 512);
CREATE TABLE fleet_metric (
    metric INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    exp_id TEXT NOT NULL,
    name   TEXT NOT NULL,
    unit   TEXT NOT NULL,
    UNIQUE (exp_id, name, unit)
);
CREATE TABLE fleet_host (
    hostname   TEXT PRIMARY KEY,
    run_id     TEXT NOT NULL UNIQUE,
    started_ns BIGINT NOT NULL,
    cpu_model  TEXT NOT NULL,
    kernel     TEXT NOT NULL,
    vs         DOUBLE PRECISION[] NOT NULL
);

-- Every median of the runs `ids`, as the fleet's SQL reads them (store::fleet::sql::VALS_SQL):
-- from the arrays of a result stored as its summary and from the metrics rows of one stored
-- whole; ok results only, NULL (NaN) medians left out. SQL, not PL/pgSQL: a PL/pgSQL
-- function may settle on a generic plan made while `results` looked small (the synthetic
-- script's bulk insert in one transaction), and then scan all of it per host.
CREATE FUNCTION fleet_run_rows(ids TEXT[])
RETURNS TABLE (seq BIGINT, idx BIGINT, exp_id TEXT, name TEXT, unit TEXT, v DOUBLE PRECISION)
LANGUAGE sql STABLE AS $$
    SELECT x.seq, u.k, x.exp_id, u.name, u.unit, u.v
    FROM results x
    CROSS JOIN LATERAL unnest(x.metric_names, x.metric_units, x.medians)
        WITH ORDINALITY AS u (name, unit, v, k)
    WHERE x.run_id = ANY (ids) AND x.status = 'ok' AND x.medians IS NOT NULL
      AND u.v IS NOT NULL
    UNION ALL
    SELECT x.seq, m.idx, x.exp_id, m.name, m.unit, m.median
    FROM results x
    JOIN metrics m ON m.run_id = x.run_id AND m.seq = x.seq
    WHERE x.run_id = ANY (ids) AND x.status = 'ok' AND m.median IS NOT NULL
$$;

-- The values of run `run` by metric number (the last stored where a number repeats).
CREATE FUNCTION fleet_run_values(run TEXT) RETURNS DOUBLE PRECISION[]
LANGUAGE sql STABLE AS $$
    WITH v AS (
        SELECT DISTINCT ON (f.metric) f.metric, r.v
        FROM fleet_run_rows(ARRAY[run]) r
        JOIN fleet_metric f ON f.exp_id = r.exp_id AND f.name = r.name AND f.unit = r.unit
        ORDER BY f.metric, r.seq DESC, r.idx DESC
    )
    SELECT coalesce(array_agg(coalesce(v.v, 'NaN') ORDER BY k.k), '{}')
    FROM generate_series(1, (SELECT max(metric) FROM v)) AS k (k)
    LEFT JOIN v ON v.metric = k.k
$$;

",
    fleet_refresh!(
        "CREATE",
        "\n        ORDER BY hostname, started_ns DESC, id DESC"
    ),
    "\n",
    fleet_runs_changed!("CREATE", "kind", "hostname", "started_ns", "host_json"),
    "
-- A result or metric of a host's latest run stored, deleted or changed (other runs' rows do
-- not count). A changed row counts for the run it left and the run it joined: an UPDATE in
-- psql may move a result from one host's latest run to another's.
CREATE FUNCTION fleet_rows_changed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM fleet_refresh(array(SELECT hostname FROM fleet_host
                                    WHERE run_id IN (SELECT run_id FROM new_rows)));
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM fleet_refresh(array(SELECT hostname FROM fleet_host
                                    WHERE run_id IN (SELECT run_id FROM old_rows)));
    ELSE
        PERFORM fleet_refresh(array(SELECT hostname FROM fleet_host
                                    WHERE run_id IN (SELECT run_id FROM old_rows
                                                     UNION SELECT run_id FROM new_rows)));
    END IF;
    RETURN NULL;
END $$;

",
    fleet_triggers!("runs", "fleet_runs_changed"),
    fleet_triggers!("results", "fleet_rows_changed"),
    fleet_triggers!("metrics", "fleet_rows_changed"),
    "
-- Fill the tables from what the database already holds.
SELECT fleet_refresh(array(SELECT DISTINCT hostname FROM runs WHERE kind = 'bench'));
"
);

/// Schema 6's part of the fleet tables, appended to its migration (`pg/schema.rs`) once
/// `runs.received_ns` is filled: a host's latest run is chosen by the one rule of
/// `store/retention.rs` (as `LATEST_RUNS_SQL` chooses it), no longer by the newest start
/// whatever the run's state, so neither a run dated ahead nor one that never ended takes a
/// host's row. `fleet_runs_changed` also refreshes a host when a run's end or received
/// time changes (a bench becomes its host's latest when it ends, not when it begins); the
/// tables are then filled again.
macro_rules! fleet_by_retention {
    () => {
        concat!(
            $crate::store::pg::fleet_schema::fleet_refresh!(
                "CREATE OR REPLACE",
                "\n          AND ",
                $crate::store::retention::ended_sql!(),
                " AND ",
                $crate::store::retention::dated_sql!(),
                "\n        ORDER BY hostname, ",
                $crate::store::retention::newest_sql!()
            ),
            $crate::store::pg::fleet_schema::fleet_runs_changed!(
                "CREATE OR REPLACE",
                "kind",
                "hostname",
                "started_ns",
                "host_json",
                "finished_ns",
                "interrupted",
                "received_ns"
            ),
            "SELECT fleet_refresh(array(SELECT DISTINCT hostname FROM runs WHERE kind = 'bench'));\n"
        )
    };
}
pub(super) use fleet_by_retention;
