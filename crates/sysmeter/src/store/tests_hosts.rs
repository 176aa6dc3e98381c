//! Store tests for several machines in one database (on SQLite; the same API on PostgreSQL is
//! tested in `tests/it/pg.rs`): listings per host, `latest` of a home host, ids across hosts,
//! and what opening a `postgres://` URL does in a build without the `pg` feature; and
//! references: `latest~N`, id prefixes, and `latest:KIND`, the latest run of one kind.

use super::tests::fixture_run;
use super::*;
use crate::model::RunKind;

/// A store with runs `a1`, `a2` of host alpha and `b1` of beta, interleaved in time.
fn two_hosts() -> Store {
    let mut store = Store::open_in_memory().expect("open");
    for (id, host, t) in [("a1", "alpha", 1), ("b1", "beta", 2), ("a2", "alpha", 3)] {
        let mut run = fixture_run(id, t);
        run.host.hostname = host.to_string();
        store.begin_run(&run).expect("begin");
    }
    store
}

fn ids(list: &[RunListing]) -> Vec<&str> {
    list.iter().map(|r| r.id.as_str()).collect()
}

#[test]
fn listings_cover_every_host_or_one() {
    let store = two_hosts();
    assert_eq!(ids(&store.list_runs(10).expect("all")), ["a2", "b1", "a1"]);
    let beta = store.list_host_runs(10, Some("beta")).expect("beta");
    assert_eq!(ids(&beta), ["b1"]);
    assert_eq!(beta[0].hostname, "beta");
    let alpha = store.list_host_runs(1, Some("alpha")).expect("alpha");
    assert_eq!(ids(&alpha), ["a2"]);
    assert!(
        store
            .list_host_runs(10, Some("gamma"))
            .expect("none")
            .is_empty()
    );
}

#[test]
fn latest_counts_the_home_hosts_runs_and_ids_find_any() {
    let mut store = two_hosts();
    assert!(!store.is_fleet());
    let id = |s: &Store, r: &str| s.load_run(r).map(|run| run.id);
    assert_eq!(id(&store, "latest").expect("latest"), "a2");
    store.set_home_host(Some("beta".into()));
    assert_eq!(store.home_host(), Some("beta"));
    assert_eq!(id(&store, "latest").expect("latest of beta"), "b1");
    assert_eq!(id(&store, "a1").expect("another host's id"), "a1");
    let err = store.load_run("latest~1").expect_err("beta has one run");
    assert!(
        matches!(&err, StoreError::NoRunOfHost { hostname, .. } if hostname == "beta"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "no run 'latest~1' of host beta in :memory:; `sysmeter history --all-hosts` lists \
         every machine's runs, and `sysmeter show ID` shows any of them"
    );
    // A missing id is not a host matter.
    let err = store.load_run("zz").expect_err("no such id");
    assert!(matches!(err, StoreError::RunNotFound { .. }), "{err:?}");
    store.set_home_host(None);
    assert_eq!(id(&store, "latest~1").expect("latest~1 of all"), "b1");
}

#[cfg(not(feature = "pg"))]
#[test]
fn a_postgres_url_needs_the_pg_feature() {
    let err = Store::open(Path::new("postgres://u:secret@db.example:5432/fleet"))
        .expect_err("no PostgreSQL support in this build");
    assert!(err.is_usage());
    assert_eq!(
        err.to_string(),
        "cannot use database postgres://u@db.example:5432/fleet: this sysmeter was built \
         without PostgreSQL support; rebuild with `cargo build --features pg`"
    );
}

#[test]
fn file_errors_are_not_usage_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = Store::open(dir.path()).expect_err("a directory is not a database");
    assert!(!err.is_usage(), "{err:?}");
}

/// Asserts that each reference of `cases` resolves in `store` to its run id, or, for
/// `None`, to no run at all.
fn assert_resolves(store: &Store, cases: &[(&str, Option<&str>)]) {
    for &(reference, want) in cases {
        match (store.load_run(reference), want) {
            (Ok(run), Some(id)) => assert_eq!(run.id, id, "{reference}"),
            (Err(StoreError::RunNotFound { .. }), None) => {}
            (got, _) => panic!("{reference}: {:?}, expected {want:?}", got.map(|r| r.id)),
        }
    }
}

#[test]
fn references_resolve() {
    let mut store = Store::open_in_memory().expect("open");
    for (id, t) in [
        ("20260101-aaaa", 1),
        ("20260102-bbbb", 2),
        ("20260102-bbcc", 3),
    ] {
        store.begin_run(&fixture_run(id, t)).expect("begin");
    }
    assert_resolves(
        &store,
        &[
            ("latest", Some("20260102-bbcc")),
            ("latest~0", Some("20260102-bbcc")),
            ("latest~1", Some("20260102-bbbb")),
            ("latest~2", Some("20260101-aaaa")),
            ("20260101", Some("20260101-aaaa")),
            ("20260102-bbb", Some("20260102-bbbb")),
            ("20260102-bbcc", Some("20260102-bbcc")),
            ("latest~3", None),
            ("nope", None),
            // `_` would be a LIKE wildcard; it must not match anything here.
            ("2026010_", None),
        ],
    );
    let id = |r: &str| store.load_run(r).map(|run| run.id);
    assert!(matches!(
        id("latest~x"),
        Err(StoreError::BadReference { .. })
    ));
    match id("20260102-bb") {
        Err(e @ StoreError::AmbiguousRun { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("20260102-bbbb, 20260102-bbcc"), "{msg}");
        }
        other => panic!("expected ambiguity, got {other:?}"),
    }
}

#[test]
fn latest_of_a_kind_counts_only_the_runs_of_that_kind() {
    let mut store = Store::open_in_memory().expect("open");
    let runs = [
        ("p1", RunKind::Profile, 1),
        ("s1", RunKind::Scale, 2),
        ("p2", RunKind::Profile, 3),
        ("s2", RunKind::Scale, 4),
    ];
    for (id, kind, t) in runs {
        let mut run = fixture_run(id, t);
        run.kind = kind;
        store.begin_run(&run).expect("begin");
    }
    assert_resolves(
        &store,
        &[
            ("latest", Some("s2")),
            ("latest:profile", Some("p2")),
            ("latest:profile~1", Some("p1")),
            ("latest:scale~1", Some("s1")),
            ("latest:profile~2", None),
            ("latest:bench", None),
        ],
    );
    let id = |r: &str| store.load_run(r).map(|run| run.id);
    for bad in [
        "latest:",
        "latest:bogus",
        "latest:scale~x",
        "latest:Scale",
        "latestx",
    ] {
        let err = id(bad).expect_err(bad);
        assert!(
            matches!(err, StoreError::BadReference { .. }),
            "{bad}: {err:?}"
        );
        let msg = err.to_string();
        assert!(
            msg.contains("`latest:KIND`") && msg.contains("bench, run, trace"),
            "{msg}"
        );
    }
}
