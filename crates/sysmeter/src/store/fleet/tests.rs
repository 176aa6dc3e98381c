//! The fleet queries on SQLite: each host's latest bench run only, other kinds and older
//! runs ignored, `since` honoured; a killed run or one dated ahead never takes its host's
//! place (issue 47); imports skip stored ids; docs/fleet.md shows the SQL that runs.

use crate::model::fixture::sample_run;
use crate::model::{RunKind, RunRecord};
use crate::store::{FUTURE_SLACK_NS, Put, Store};

fn run(host: &str, id: &str, started_ns: i64, kind: RunKind) -> RunRecord {
    let mut r = sample_run();
    r.host.hostname = host.into();
    r.id = id.into();
    r.started_ns = started_ns;
    r.kind = kind;
    r
}

#[test]
fn each_host_is_its_latest_bench_run() {
    let mut store = Store::open_in_memory().expect("store");
    for r in [
        run("a", "a-old", 100, RunKind::Bench),
        run("a", "a-new", 200, RunKind::Bench),
        run("a", "a-trace", 300, RunKind::Trace),
        run("b", "b-1", 150, RunKind::Bench),
    ] {
        assert!(store.import_run(&r).expect("import"));
    }
    let data = store.fleet(None).expect("fleet");
    let hosts: Vec<(&str, &str)> = data
        .hosts
        .iter()
        .map(|h| (h.hostname.as_str(), h.run_id.as_str()))
        .collect();
    assert_eq!(hosts, [("a", "a-new"), ("b", "b-1")]);
    let mut described = sample_run().host;
    described.hostname = "a".into();
    assert_eq!(
        data.hosts[0].host, described,
        "the machine description round-trips"
    );
    // Only the ok results' metrics: os.syscall's three, per host.
    assert_eq!(data.values.len(), 6);
    assert!(data.values.iter().all(|v| v.experiment == "os.syscall"));
    assert_eq!(
        data.values[0].value,
        sample_run().results[0].metrics[0].summary.median
    );
    assert!(data.spreads.is_none(), "SQLite leaves the spread to stats");
    let recent = store.fleet(Some(160)).expect("fleet since");
    assert_eq!(recent.hosts.len(), 1);
    assert_eq!(recent.hosts[0].run_id, "a-new");
}

/// The host of `data`'s runs, as (host, run id).
fn hosts(data: &crate::model::FleetData) -> Vec<(&str, &str)> {
    (data.hosts.iter())
        .map(|h| (h.hostname.as_str(), h.run_id.as_str()))
        .collect()
}

#[test]
fn a_killed_run_or_one_dated_ahead_never_takes_its_hosts_place() {
    let mut store = Store::open_in_memory().expect("store");
    let done = run("a", "a-done", 1_000, RunKind::Bench);
    assert!(store.import_run(&done).expect("import"));
    // Received after it and started after it: a bench killed after its first experiment,
    // and a record dated beyond the slack ahead of any clock.
    let mut killed = run("a", "a-killed", 2_000, RunKind::Bench);
    killed.finished_ns = None;
    store.begin_run(&killed).expect("begin");
    (store.put_result(("a-killed", 0), &killed.results[0], Put::New)).expect("a result");
    let mut ahead = run("a", "a-ahead", i64::MAX / 2, RunKind::Bench);
    ahead.finished_ns = Some(ahead.started_ns + FUTURE_SLACK_NS);
    assert!(
        store
            .import_run(&ahead)
            .expect("import the run dated ahead")
    );
    assert_eq!(hosts(&store.fleet(None).expect("fleet")), [("a", "a-done")]);
    // `since` asks of the latest run's start: a-done is older, so the host is left out.
    assert!(store.fleet(Some(1_500)).expect("since").hosts.is_empty());
    // A later run that ended is the host's run.
    let later = run("a", "a-later", 3_000, RunKind::Bench);
    assert!(store.import_run(&later).expect("import"));
    assert_eq!(
        hosts(&store.fleet(None).expect("fleet")),
        [("a", "a-later")]
    );
}

#[test]
fn importing_a_stored_run_again_stores_nothing() {
    let mut store = Store::open_in_memory().expect("store");
    let r = run("a", "a-1", 100, RunKind::Bench);
    assert!(store.import_run(&r).expect("first"));
    assert!(!store.import_run(&r).expect("second"));
    assert!(store.has_run("a-1").expect("has"));
    assert!(!store.has_run("a-").expect("a prefix is not a run"));
    assert_eq!(store.list_runs(10).expect("list").len(), 1);
}

#[test]
fn docs_show_the_sql_that_runs() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/fleet.md");
    let doc = std::fs::read_to_string(path).expect("docs/fleet.md");
    for sql in [
        super::LATEST_RUNS_SQL,
        super::HOSTS_SQL,
        super::VALUES_SQL,
        super::sql::VALS_SQL,
        super::sql::PG_VALUES_SQL,
        super::sql::PG_SPREAD_SQL,
        crate::store::retention::BEYOND_SQL,
    ] {
        assert!(doc.contains(sql), "docs/fleet.md lacks:\n{sql}");
    }
}
