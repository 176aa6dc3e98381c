//! `sysmeter import` and `sysmeter fleet` on PostgreSQL: the five machines of
//! `support::fleet` imported into the server, the slow one found as the only outlier, in
//! `os.syscall` only, and the same document as on SQLite — with the fleet's median and
//! p10–p90 computed by the server (`percentile_cont`) equal to the ones computed in Rust.

use std::path::Path;

use sysmeter::model::FleetData;
use sysmeter::stats::fleet::fleet_view;

use crate::support::fleet::{SLOW, fleet_files, outliers};
use crate::support::pg::{open, sysmeter_as, test_db};
use crate::support::{json_out, need, stdout_of, sysmeter};

fn arg(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// The fleet of `db` (a URL or a file) as JSON, after importing `files` into it.
fn import_and_fleet(db: &str, files: &[std::path::PathBuf]) -> serde_json::Value {
    let out = stdout_of(
        sysmeter_as("importer")
            .args(["import", "--db", db])
            .args(files),
    );
    assert!(out.contains("5 run(s) imported"), "{out}");
    json_out(sysmeter().args(["fleet", "--format", "json", "--db", db]))
}

#[test]
fn fleet_in_postgres_finds_the_slow_host_as_sqlite_does() {
    let db = need!(test_db());
    let dir = tempfile::tempdir().expect("tempdir");
    let files = fleet_files(dir.path());
    let pg = import_and_fleet(&db.url, &files);
    let found = outliers(&pg);
    assert!(!found.is_empty(), "{pg}");
    assert!(
        found.iter().all(|(h, e)| h == SLOW && e == "os.syscall"),
        "{found:?}"
    );
    let sqlite = import_and_fleet(arg(&dir.path().join("same.db")), &files);
    assert_eq!(pg["outliers"], sqlite["outliers"]);
    assert_eq!(pg["hosts"], sqlite["hosts"]);
    // The spreads come from the server; they are the ones `stats::fleet` computes.
    let data = open(&db.url).fleet(None).expect("read the fleet");
    let spreads = data
        .spreads
        .clone()
        .expect("the server computes the spreads");
    let local = fleet_view(&FleetData {
        spreads: None,
        ..data
    });
    assert_eq!(spreads.len(), local.metrics.len());
    for s in &spreads {
        let m = local
            .metrics
            .iter()
            .find(|m| m.metric == s.metric && m.experiment == s.experiment);
        let m = m.expect("the same metrics");
        for (db_value, rust) in [
            (s.median, m.spread.median),
            (s.p10, m.spread.p10),
            (s.p90, m.spread.p90),
        ] {
            assert!(
                (db_value - rust).abs() <= 1e-9 * rust.abs(),
                "{s:?} vs {:?}",
                m.spread
            );
        }
    }
    // Importing again stores nothing new.
    let again = stdout_of(sysmeter().args(["import", "--db", &db.url]).args(&files));
    assert!(
        again.contains("0 run(s) imported, 5 already stored"),
        "{again}"
    );
}
