//! The fleet queries on SQLite: each host's latest bench run only, other kinds and older
//! runs ignored, `since` honoured; imports skip stored ids; docs/fleet.md shows the SQL
//! that runs.

use crate::model::fixture::sample_run;
use crate::model::{RunKind, RunRecord};
use crate::store::Store;

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
