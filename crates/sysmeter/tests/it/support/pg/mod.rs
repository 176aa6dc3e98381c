//! Helpers of the PostgreSQL tests: a database per test (`server`; where none can be had,
//! the `postgres` capability is missing), the binary playing a given machine (alone or
//! several at once), opening the store on a URL, an awkward run, and the column lists of
//! both backends.

mod server;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::process::Stdio;

use assert_cmd::Command;
use sysmeter::model::RunRecord;
use sysmeter::store::{DbTarget, Store};

use super::skip::{Cap, Missing};

pub use server::TestDb;

/// The test's database, or the `postgres` capability missing, with the reason.
pub fn test_db() -> Result<TestDb, Missing> {
    TestDb::new().map_err(|reason| Missing::new(Cap::Postgres, reason))
}

/// The binary, with no database from the environment, storing runs as machine `host`.
pub fn sysmeter_as(host: &str) -> Command {
    let mut c = super::sysmeter();
    c.env("SYSMETER_HOSTNAME", host);
    c
}

/// Opens the store at a PostgreSQL URL.
pub fn open(url: &str) -> Store {
    Store::open_target(&DbTarget::parse(OsStr::new(url))).expect("open the PostgreSQL store")
}

/// Runs `sysmeter bench --quick --only IDS --format json --with-samples` (stored whole, as
/// printed) as each of `hosts` at the same time against `url`; returns each host's printed
/// JSON.
pub fn bench_concurrently(
    url: &str,
    ids: &str,
    hosts: &[&'static str],
) -> BTreeMap<&'static str, String> {
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    let children: Vec<_> = hosts
        .iter()
        .map(|host| {
            let child = std::process::Command::new(&bin)
                .args([
                    "bench",
                    "--quick",
                    "--only",
                    ids,
                    "--format",
                    "json",
                    "--with-samples",
                    "--db",
                    url,
                ])
                .env_remove("SYSMETER_DB")
                .env("SYSMETER_HOSTNAME", host)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn bench");
            (*host, child)
        })
        .collect();
    let mut printed = BTreeMap::new();
    for (host, child) in children {
        let out = child.wait_with_output().expect("bench ends");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "bench on {host} failed: {stderr}");
        printed.insert(host, String::from_utf8(out.stdout).expect("UTF-8"));
    }
    printed
}

/// The fixture run with awkward values: a NaN statistic (stored as NULL), the smallest and
/// largest doubles, non-decimal floats and -0.0 in the samples and in the JSON, a big integer.
pub fn awkward_run() -> RunRecord {
    let mut run = sysmeter::model::fixture::sample_run();
    let m = &mut run.results[0].metrics[0];
    m.summary.cv = f64::NAN;
    m.summary.min = 5e-324;
    m.summary.max = f64::MAX;
    m.samples.extend([0.1 + 0.2, -0.0, 1e-300, f64::INFINITY]);
    m.ops_per_sample = u64::MAX >> 1;
    run.config.target_ci_width = 0.1 + 0.2;
    if let Some(c) = run.config.calibration.as_mut() {
        c.timer_overhead_ns = 1e-300;
    }
    run
}

/// (name, declared type) of the columns of `table` in a fresh SQLite store.
pub fn sqlite_columns(table: &str) -> Vec<(String, String)> {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("s.db");
    drop(Store::open(&file).expect("sqlite store"));
    let sqlite = rusqlite::Connection::open(&file).expect("open sqlite");
    let mut stmt = sqlite
        .prepare(&format!(
            "SELECT name, type FROM pragma_table_info('{table}') ORDER BY cid"
        ))
        .expect("table_info");
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(Iterator::collect)
        .expect("sqlite columns")
}

/// (name, data type) of the columns of `table` in the current schema of `client`.
pub fn pg_columns(client: &mut postgres::Client, table: &str) -> Vec<(String, String)> {
    client
        .query(
            "SELECT column_name::text, data_type::text FROM information_schema.columns
             WHERE table_schema = current_schema() AND table_name = $1
             ORDER BY ordinal_position",
            &[&table],
        )
        .expect("pg columns")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}
