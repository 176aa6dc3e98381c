//! Schema 5's fleet tables (`fleet_host`, `fleet_metric`, kept by triggers) always hold what
//! the `latest` table over runs, results and metrics says — each host's latest bench run
//! (schema 6: by retention's rule) and its medians — after every kind of write: imports as
//! summaries and whole, an older run imported late (received last, so latest), metrics
//! moved to another host's run in SQL, a replaced result, a deleted latest run, a `DELETE`
//! in SQL, `prune`, a bench killed or dated ahead (never a host's run) and one ending; and
//! a schema 4 database upgrades itself and fills them from what it holds (a run that died
//! left out).

use postgres::types::ToSql;
use sysmeter::model::RunRecord;
use sysmeter::store::fleet::LATEST_RUNS_SQL;
use sysmeter::store::{Put, Store};

use crate::support::fleet::{host_run, many_files};
use crate::support::pg::{TestDb, open, sysmeter_as, test_db};
use crate::support::skip::Missing;
use crate::support::{json_out, need, stdout_of};

/// (host, run, experiment, metric, unit, value bits), sorted.
type Rows = Vec<(String, String, String, String, String, u64)>;

/// Each host's latest bench run and its medians, straight from runs, results and metrics
/// (after `LATEST_RUNS_SQL`, with `$1` the earliest start).
const DIRECT: &str = "
SELECT l.hostname, l.id, x.exp_id, u.name, u.unit, u.v
FROM latest l
JOIN results x ON x.run_id = l.id AND x.status = 'ok' AND x.medians IS NOT NULL
CROSS JOIN LATERAL unnest(x.metric_names, x.metric_units, x.medians) AS u (name, unit, v)
WHERE u.v IS NOT NULL
UNION ALL
SELECT l.hostname, l.id, x.exp_id, m.name, m.unit, m.median
FROM latest l
JOIN results x ON x.run_id = l.id AND x.status = 'ok'
JOIN metrics m ON m.run_id = x.run_id AND m.seq = x.seq
WHERE m.median IS NOT NULL";

/// The same from the fleet tables.
const DERIVED: &str = "
SELECT h.hostname, h.run_id, f.exp_id, f.name, f.unit, h.vs[f.metric]
FROM fleet_host h
JOIN fleet_metric f ON f.metric <= cardinality(h.vs)
WHERE h.vs[f.metric] <> 'NaN'";

/// `$1` of the statements after `LATEST_RUNS_SQL`: every run.
const EVERY_START: i64 = i64::MIN;

fn rows(client: &mut postgres::Client, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Rows {
    let mut rows: Rows = (client.query(sql, params).expect(sql).iter())
        .map(|r| {
            let v: f64 = r.get(5);
            (
                r.get(0),
                r.get(1),
                r.get(2),
                r.get(3),
                r.get(4),
                v.to_bits(),
            )
        })
        .collect();
    rows.sort();
    rows
}

/// Asserts the fleet tables agree with the runs (`LATEST_RUNS_SQL`, the `latest` table
/// `fleet` reads below 50 hosts); returns each host's latest run, by host.
fn agree(client: &mut postgres::Client) -> Vec<(String, String)> {
    let direct = rows(
        client,
        &format!("{LATEST_RUNS_SQL}{DIRECT}"),
        &[&EVERY_START],
    );
    assert!(!direct.is_empty(), "no values to compare");
    assert_eq!(rows(client, DERIVED, &[]), direct);
    let mut hosts = |sql: &str, params: &[&(dyn ToSql + Sync)]| -> Vec<(String, String)> {
        let mut v: Vec<_> = (client.query(sql, params).expect(sql).iter())
            .map(|r| (r.get(0), r.get(1)))
            .collect();
        v.sort();
        v
    };
    let latest = hosts(
        &format!("{LATEST_RUNS_SQL} SELECT hostname, id FROM latest"),
        &[&EVERY_START],
    );
    assert_eq!(
        hosts("SELECT hostname, run_id FROM fleet_host", &[]),
        latest
    );
    latest
}

fn latest_of<'a>(latest: &'a [(String, String)], host: &str) -> Option<&'a str> {
    latest
        .iter()
        .find(|(h, _)| h == host)
        .map(|(_, id)| id.as_str())
}

/// Host `i`'s run under another id, `seconds` later (earlier when negative).
fn moved(i: usize, suffix: &str, seconds: i64) -> RunRecord {
    let mut run = host_run(i);
    run.id = format!("{}-{suffix}", run.id);
    run.started_ns += seconds * 1_000_000_000;
    run
}

/// A test database, a client of it, and its store with the runs of hosts `0..hosts`
/// imported (each new).
fn with_hosts(hosts: usize) -> Result<(TestDb, postgres::Client, Store), Missing> {
    let db = test_db()?;
    let client = db.client();
    let mut store = open(&db.url);
    for i in 0..hosts {
        assert!(store.import_run(&host_run(i)).expect("import"));
    }
    Ok((db, client, store))
}

#[test]
fn the_fleet_tables_follow_every_write() {
    let (_db, mut client, mut store) = need!(with_hosts(5));
    agree(&mut client);
    moved_between_hosts(&mut client);
    // An older run imported late is the one received last: it takes the host's place.
    let old = moved(1, "old", -10);
    store.import_run(&old).expect("import an older run");
    let latest = agree(&mut client);
    assert_eq!(latest_of(&latest, "node-1"), Some(old.id.as_str()));
    // A newer run stored whole (metrics rows, not arrays) takes the host's place.
    store.keep_samples(true);
    let new = moved(2, "new", 10);
    store.import_run(&new).expect("import a newer run whole");
    let latest = agree(&mut client);
    assert_eq!(latest_of(&latest, "node-2"), Some(new.id.as_str()));
    replaced_and_deleted(&mut store, &mut client, &new);
    // A DELETE in SQL takes a host out; prune keeps each host's latest run.
    client
        .execute("DELETE FROM runs WHERE hostname = 'node-3'", &[])
        .expect("delete in SQL");
    assert_eq!(latest_of(&agree(&mut client), "node-3"), None);
    for run in store.runs_beyond(1).expect("runs beyond") {
        store.delete_run(&run.id).expect("prune");
    }
    let latest = agree(&mut client);
    assert_eq!(latest.len(), 4, "{latest:?}");
}

/// An UPDATE in SQL that moves a result's metrics from node-4's latest run to a result of
/// node-0's refreshes both hosts, the one they joined as well as the one they left.
fn moved_between_hosts(client: &mut postgres::Client) {
    let (from, to) = (host_run(4).id, host_run(0).id);
    let copied = client
        .execute(
            "INSERT INTO results SELECT * FROM jsonb_populate_record(NULL::results, (
                 SELECT to_jsonb(x) || jsonb_build_object(
                     'run_id', $1::text, 'seq', 1000, 'exp_id', 'moved.result')
                 FROM results x WHERE x.run_id = $2 AND x.seq = 0))",
            &[&to, &from],
        )
        .expect("copy a result into another run");
    assert_eq!(copied, 1);
    let moved = client
        .execute(
            "UPDATE metrics SET run_id = $1, seq = 1000 WHERE run_id = $2 AND seq = 0",
            &[&to, &from],
        )
        .expect("move its metrics");
    assert!(moved > 0, "no metrics rows to move");
    agree(client);
    let values: i64 = client
        .query_one(
            "SELECT count(*) FROM fleet_host h JOIN fleet_metric f ON h.vs[f.metric] <> 'NaN'
             WHERE h.hostname = 'node-0' AND f.exp_id = 'moved.result'",
            &[],
        )
        .expect("the moved values")
        .get(0);
    assert!(
        values > 0,
        "node-0's row lacks the values moved into its run"
    );
}

/// A replaced result of the latest run changes its value; deleting that run brings back
/// the host's previous one.
fn replaced_and_deleted(store: &mut Store, client: &mut postgres::Client, new: &RunRecord) {
    let mut result = new.results[0].clone();
    for m in &mut result.metrics {
        m.summary = m.summary.scaled(3.0);
    }
    store
        .put_result((&new.id, 0), &result, Put::Replace)
        .expect("replace a result");
    agree(client);
    let median = result.metrics[0].summary.median;
    let stored: f64 = client
        .query_one(
            "SELECT h.vs[f.metric] FROM fleet_host h, fleet_metric f
             WHERE h.hostname = 'node-2' AND f.exp_id = $1 AND f.name = $2",
            &[&result.id, &result.metrics[0].name],
        )
        .expect("the replaced value")
        .get(0);
    assert_eq!(stored.to_bits(), median.to_bits());
    store.delete_run(&new.id).expect("delete the latest run");
    let latest = agree(client);
    assert_eq!(latest_of(&latest, "node-2"), Some(host_run(2).id.as_str()));
}

/// The host's run in `sysmeter fleet` of `url`, as (host, run id), sorted.
fn fleet_runs(url: &str) -> Vec<(String, String)> {
    let fleet = json_out(sysmeter_as("x").args(["fleet", "--format", "json", "--db", url]));
    let hosts = fleet["hosts"].as_array().expect("hosts").iter();
    let mut runs: Vec<(String, String)> = hosts
        .map(|h| {
            let text = |key: &str| h[key].as_str().expect(key).to_string();
            (text("host"), text("run_id"))
        })
        .collect();
    runs.sort();
    runs
}

/// Issue 47 in the fleet tables and in `fleet`: a bench killed after its first result and
/// a run dated three years ahead, both received after their host's complete run, never
/// take its place; the killed run does once it ends (its end is an UPDATE of `runs`).
#[test]
fn a_killed_run_or_one_dated_ahead_never_takes_a_hosts_place_in_postgres() {
    let (db, mut client, mut store) = need!(with_hosts(3));
    let before = agree(&mut client);
    assert_eq!(fleet_runs(&db.url), before);
    let mut killed = moved(1, "killed", 10);
    let end = killed.finished_ns.take();
    store.begin_run(&killed).expect("begin the killed bench");
    (store.put_result((&killed.id, 0), &killed.results[0], Put::New)).expect("its first result");
    let mut ahead = moved(2, "ahead", 3 * 365 * 86_400);
    ahead.finished_ns = ahead.finished_ns.map(|f| f + 3 * 365 * 86_400_000_000_000);
    assert!(
        store
            .import_run(&ahead)
            .expect("import the run dated ahead")
    );
    assert_eq!(agree(&mut client), before);
    assert_eq!(fleet_runs(&db.url), before);
    (store.finish_run(&killed.id, end, false)).expect("the bench ends");
    let after = agree(&mut client);
    assert_eq!(latest_of(&after, "node-1"), Some(killed.id.as_str()));
    assert_eq!(fleet_runs(&db.url), after);
}

/// Takes a database back to schema 4: the fleet tables, their functions and triggers gone.
const DOWNGRADE: &str = "
ALTER TABLE runs DROP COLUMN received_ns;
DELETE FROM sysmeter_schema WHERE version = 6;
DROP FUNCTION fleet_runs_changed, fleet_rows_changed CASCADE;
DROP FUNCTION fleet_refresh, fleet_run_values, fleet_run_rows;
DROP TABLE fleet_host, fleet_metric;
DELETE FROM sysmeter_schema WHERE version = 5;";

#[test]
fn a_schema_4_database_upgrades_and_fills_the_fleet_tables() {
    let db = need!(test_db());
    let dir = tempfile::tempdir().expect("tempdir");
    // More than 50 hosts: `fleet` reduces them on the server, from the fleet tables.
    let files = many_files(dir.path(), 60);
    let out = stdout_of(
        sysmeter_as("x")
            .args(["import", "--db", &db.url])
            .args(&files),
    );
    assert!(out.contains("60 run(s) imported"), "{out}");
    let fleet = || json_out(sysmeter_as("x").args(["fleet", "--format", "json", "--db", &db.url]));
    let before = fleet();
    assert_eq!(
        before["outliers"].as_array().map(Vec::len),
        Some(3),
        "{before}"
    );
    let mut client = db.client();
    client.batch_execute(DOWNGRADE).expect("back to schema 4");
    let gone: bool = client
        .query_one("SELECT to_regclass('fleet_host') IS NULL", &[])
        .expect("the table")
        .get(0);
    assert!(gone);
    // A bench that died after the others, stored before the upgrade: schema 5's fill takes
    // it for its host's latest run (the newest start), schema 6's refill does not.
    let died = client
        .execute(
            "INSERT INTO runs SELECT * FROM jsonb_populate_record(NULL::runs, (
                 SELECT to_jsonb(r) || jsonb_build_object('id', r.id || '-died',
                     'started_ns', r.started_ns + 1000000000, 'finished_ns', NULL)
                 FROM runs r WHERE kind = 'bench' ORDER BY id LIMIT 1))",
            &[],
        )
        .expect("a run that died");
    assert_eq!(died, 1);
    // Opening it upgrades it: the tables are back and filled from the stored runs.
    drop(open(&db.url));
    let version: i64 = client
        .query_one("SELECT max(version) FROM sysmeter_schema", &[])
        .expect("version")
        .get(0);
    assert_eq!(version, sysmeter::store::DB_SCHEMA_VERSION as i64);
    let latest = agree(&mut client);
    assert_eq!(latest.len(), 60);
    assert!(
        latest.iter().all(|(_, id)| !id.ends_with("-died")),
        "{latest:?}"
    );
    assert_eq!(fleet(), before);
}
