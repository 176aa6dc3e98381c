//! The PostgreSQL (fleet) backend against a real server: a bench run stored and shown through
//! the binary, two "machines" writing at once and queried together, exact round trips and
//! run references through the library, migrations (tracked, idempotent, race-free, the same
//! columns as SQLite), and refusal of newer schemas, foreign tables and unreachable servers.
//!
//! Compiled only with `--features pg`. Each test gets a fresh schema on the server named by
//! `SYSMETER_TEST_PG`, or on a private server it starts (see `support/pg/server.rs`); where
//! neither is possible it says `skipped: <reason>` (capability `postgres`), or fails under
//! `SYSMETER_TEST_REQUIRE=postgres` or `all`, as `.ci/run` sets.

mod ansible;
mod fleet;
mod fleet_tables;
mod incomplete;
mod reduce;
mod summary;

use std::ffi::OsStr;
use std::path::Path;

use sysmeter::model::RunRecord;
use sysmeter::store::{DB_SCHEMA_VERSION, DbTarget, Store, StoreError};

use crate::support::pg::{
    awkward_run, bench_concurrently, open, pg_columns, sqlite_columns, sysmeter_as, test_db,
};
use crate::support::{json_of, json_out, need, stderr_of, stdout_of};

#[test]
fn bench_run_round_trips_through_the_binary() {
    let db = need!(test_db());
    // Whole, raw samples included (a fleet store keeps summaries unless asked: pg::summary).
    let bench = [
        "bench",
        "--quick",
        "--only",
        "cpu.loop",
        "--format",
        "json",
        "--with-samples",
    ];
    let printed = stdout_of(sysmeter_as("alpha").args(bench).args(["--db", &db.url]));
    let shown = stdout_of(
        sysmeter_as("alpha").args(["show", "latest", "--format", "json", "--db", &db.url]),
    );
    assert_eq!(shown, printed);
    let run = json_of(printed.as_bytes());
    assert_eq!(run["results"][0]["id"], "cpu.loop");
    assert!(
        !run["results"][0]["metrics"][0]["samples"]
            .as_array()
            .expect("samples")
            .is_empty()
    );
    let listed =
        json_out(sysmeter_as("alpha").args(["history", "--format", "json", "--db", &db.url]));
    assert_eq!(listed[0]["id"], run["id"]);
    assert_eq!(listed[0]["ok"], 1);
    // The raw samples are stored, one little-endian f64 per 8 bytes.
    let n: i64 = db
        .client()
        .query_one("SELECT sum(length(samples) / 8)::bigint FROM metrics", &[])
        .expect("count samples")
        .get(0);
    let printed_n: usize = run["results"][0]["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .map(|m| m["samples"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(n as usize, printed_n);
}

#[test]
fn two_machines_write_concurrently_and_are_queried_together() {
    let db = need!(test_db());
    // Both start on an empty schema, so they also race to create the tables.
    let printed = bench_concurrently(&db.url, "cpu.timer,cpu.loop,cpu.call", &["alpha", "beta"]);
    let id = |host: &str| {
        json_of(printed[host].as_bytes())["id"]
            .as_str()
            .expect("id")
            .to_string()
    };

    let history_json = ["history", "--format", "json", "--db", &db.url];
    let all = json_out(sysmeter_as("gamma").args(history_json).arg("--all-hosts"));
    let mut hosts: Vec<&str> = all
        .as_array()
        .expect("list")
        .iter()
        .map(|r| r["hostname"].as_str().expect("hostname"))
        .collect();
    hosts.sort_unstable();
    assert_eq!(hosts, ["alpha", "beta"]);
    let table = stdout_of(sysmeter_as("gamma").args(["history", "--all-hosts", "--db", &db.url]));
    assert!(table.contains("alpha") && table.contains("beta") && table.contains("host"));

    // By default a machine sees its own runs, and `latest` is its own latest run.
    for host in ["alpha", "beta"] {
        let own = json_out(sysmeter_as(host).args(history_json));
        assert_eq!(own.as_array().map(Vec::len), Some(1), "{own}");
        assert_eq!(own[0]["id"].as_str(), Some(id(host).as_str()));
        let mut latest = sysmeter_as(host);
        latest.args(["show", "latest", "--format", "json", "--db", &db.url]);
        assert_eq!(stdout_of(&mut latest), printed[host]);
    }
    // Any run loads by id from any machine.
    let beta = id("beta");
    let other = stdout_of(
        sysmeter_as("alpha")
            .args(["show", &beta, "--format", "json"])
            .args(["--db", &db.url]),
    );
    assert_eq!(other, printed["beta"]);
    let err = stderr_of(
        sysmeter_as("gamma").args(["show", "latest", "--db", &db.url]),
        1,
    );
    assert!(
        err.contains("no run 'latest' of host gamma") && err.contains("--all-hosts"),
        "{err}"
    );

    compare_across_hosts(&db.url, &id("alpha"), &id("beta"));
}

/// `compare` of two machines' runs lists their differences (the host first).
fn compare_across_hosts(url: &str, a: &str, b: &str) {
    let out = sysmeter_as("alpha")
        .args(["compare", a, b, "--db", url])
        .output()
        .expect("run compare");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "compare failed: {stderr}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("alpha") && text.contains("beta"), "{text}");
}

#[test]
fn library_round_trip_is_exact_and_references_resolve() {
    let db = need!(test_db());
    let mut store = open(&db.url);
    assert!(store.is_fleet());
    let run = awkward_run();
    store.begin_run(&run).expect("begin");
    for (seq, r) in run.results.iter().enumerate() {
        store
            .put_result((&run.id, seq), r, sysmeter::store::Put::New)
            .expect("add");
    }
    store
        .finish_run(&run.id, run.finished_ns, run.interrupted)
        .expect("finish");
    let back = open(&db.url).load_run(&run.id).expect("load");
    // NaN != NaN: compare the JSON text, which writes NaN as null, then the bits.
    assert_eq!(
        serde_json::to_string(&back).ok(),
        serde_json::to_string(&run).ok()
    );
    let bits = |r: &sysmeter::model::RunRecord| -> Vec<u64> {
        r.results[0].metrics[0]
            .samples
            .iter()
            .map(|x| x.to_bits())
            .collect()
    };
    assert_eq!(bits(&back), bits(&run));
    assert!(back.results[0].metrics[0].summary.cv.is_nan());

    references_resolve_across_hosts(&mut store, &run);
}

/// Listings and references with a second machine's runs, later in time, next to `run`.
fn references_resolve_across_hosts(store: &mut Store, run: &RunRecord) {
    for (i, id) in ["b-1", "b-2"].iter().enumerate() {
        let mut other = sysmeter::model::fixture::sample_run();
        other.id = id.to_string();
        other.host.hostname = "beta".into();
        other.started_ns += 1_000 + i as i64;
        store.begin_run(&other).expect("begin other");
    }
    let all = store.list_runs(10).expect("list");
    assert_eq!(
        all.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
        ["b-2", "b-1", run.id.as_str()]
    );
    assert_eq!(all[2].experiments, run.results.len());
    let own = store
        .list_host_runs(10, Some(&run.host.hostname))
        .expect("list own");
    assert_eq!(own.len(), 1);
    assert_eq!(store.load_run("latest").expect("latest").id, "b-2");
    store.set_home_host(Some(run.host.hostname.clone()));
    assert_eq!(store.load_run("latest").expect("latest").id, run.id);
    store.set_home_host(Some("beta".into()));
    assert_eq!(store.load_run("latest~1").expect("latest~1").id, "b-1");
    assert!(matches!(
        store.load_run("latest~2"),
        Err(StoreError::NoRunOfHost { .. })
    ));
    assert_eq!(store.load_run(&run.id[..10]).expect("prefix").id, run.id);
    assert!(matches!(
        store.load_run("b-"),
        Err(StoreError::AmbiguousRun { .. })
    ));
    assert!(matches!(
        store.load_run("b_"),
        Err(StoreError::RunNotFound { .. })
    ));
    let dup = store.begin_run(run).expect_err("duplicate run").to_string();
    assert!(dup.contains("already stored"), "{dup}");
    let ghost = store.put_result(("ghost", 0), &run.results[0], sysmeter::store::Put::New);
    assert!(
        matches!(ghost, Err(StoreError::RunNotFound { .. })),
        "{ghost:?}"
    );
}

#[test]
fn migrations_are_tracked_idempotent_race_free_and_match_sqlite() {
    let db = need!(test_db());
    // Four processes' worth of first opens at once on an empty schema.
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let url = db.url.clone();
            std::thread::spawn(move || Store::open(Path::new(&url)).map(|_| ()))
        })
        .collect();
    for t in threads {
        t.join().expect("thread").expect("concurrent first open");
    }
    let mut run = sysmeter::model::fixture::sample_run();
    run.results.truncate(1);
    let mut store = open(&db.url);
    store.begin_run(&run).expect("begin");
    store
        .put_result((&run.id, 0), &run.results[0], sysmeter::store::Put::New)
        .expect("add");
    drop(store);
    // Re-opening neither re-runs nor resets anything.
    assert_eq!(
        open(&db.url).load_run(&run.id).expect("reload").results,
        run.results
    );
    let mut client = db.client();
    let versions: Vec<i64> = client
        .query("SELECT version FROM sysmeter_schema ORDER BY version", &[])
        .expect("versions")
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(versions, (1..=DB_SCHEMA_VERSION as i64).collect::<Vec<_>>());

    assert_same_columns_as_sqlite(&mut client);
}

/// The same tables and columns as SQLite, with the PostgreSQL types of `pg/schema.rs`.
fn assert_same_columns_as_sqlite(client: &mut postgres::Client) {
    for table in ["runs", "results", "metrics"] {
        let lite = sqlite_columns(table);
        let pg = pg_columns(client, table);
        let names =
            |cols: &[(String, String)]| cols.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&pg), names(&lite), "columns of {table}");
        for ((name, lite_type), (_, pg_type)) in lite.iter().zip(&pg) {
            let expected: &[&str] = match lite_type.as_str() {
                "INTEGER" if name == "interrupted" => &["boolean"],
                "INTEGER" => &["bigint"],
                "REAL" => &["double precision"],
                // Schema 4's arrays of a summary's metrics (JSON text in SQLite, never filled).
                "TEXT" if name.starts_with("metric_") || name == "medians" => &["ARRAY"],
                "TEXT" => &["text", "jsonb"],
                "BLOB" => &["bytea"],
                other => panic!("unexpected SQLite type {other} of {table}.{name}"),
            };
            assert!(
                expected.contains(&pg_type.as_str()),
                "{table}.{name}: {lite_type} vs {pg_type}"
            );
        }
    }
}

#[test]
fn newer_schemas_and_foreign_tables_are_refused() {
    let db = need!(test_db());
    let mut client = db.client();
    client
        .batch_execute("CREATE TABLE runs (x int)")
        .expect("foreign table");
    let err = Store::open(Path::new(&db.url)).expect_err("foreign runs table");
    assert!(matches!(err, StoreError::NotSysmeter { .. }), "{err:?}");
    assert!(err.to_string().contains("search_path"), "{err}");
    client.batch_execute("DROP TABLE runs").expect("drop");

    drop(open(&db.url));
    let newer = DB_SCHEMA_VERSION as i64 + 1;
    client
        .execute(
            "INSERT INTO sysmeter_schema (version, applied_by) VALUES ($1, 'future')",
            &[&newer],
        )
        .expect("pretend a newer sysmeter migrated");
    let err = Store::open(Path::new(&db.url)).expect_err("newer schema");
    let shown = DbTarget::parse(OsStr::new(&db.url));
    let DbTarget::Postgres(url) = shown else {
        panic!("not a URL")
    };
    let expected = format!(
        "database {} was written by a newer sysmeter (schema {newer}, this build knows {}); \
         upgrade sysmeter or use another --db",
        url.shown(),
        DB_SCHEMA_VERSION
    );
    assert_eq!(err.to_string(), expected);
    let out = sysmeter_as("alpha")
        .args(["history", "--db", &db.url])
        .assert()
        .code(1);
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains(&expected));
}

#[test]
fn unreachable_server_is_a_clear_error_without_the_password() {
    // Needs no server: a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("port")
        .port();
    let url = format!("postgres://fleet:s3cret@127.0.0.1:{port}/sysmeter");
    let out = sysmeter_as("alpha")
        .args(["history", "--db", &url])
        .assert()
        .code(1);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    let shown = format!("postgres://fleet@127.0.0.1:{port}/sysmeter");
    assert!(
        err.contains(&format!("cannot connect to PostgreSQL database {shown}")),
        "{err}"
    );
    assert!(err.contains("check that the server is running"), "{err}");
    assert!(!err.contains("s3cret"), "{err}");
    let bad = sysmeter_as("alpha")
        .args(["history", "--db", "postgres://h:notaport/db"])
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&bad.get_output().stderr).to_string();
    assert!(err.contains("is not a valid PostgreSQL URL"), "{err}");
}
