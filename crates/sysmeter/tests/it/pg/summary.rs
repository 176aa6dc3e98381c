//! A PostgreSQL fleet store keeps summaries: an imported run comes back with its metrics'
//! statistics (to 4 significant digits), findings and machine description, without raw
//! samples and without `metrics` rows; `--with-samples` stores it whole; `prune --keep N`
//! keeps each host's latest N runs.

use crate::support::fleet::{fleet_files, host_run};
use crate::support::pg::{sysmeter_as, test_db};
use crate::support::{json_out, need, stdout_of};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-3 * b.abs()
}

#[test]
fn a_run_is_stored_as_its_summary_unless_asked_for_the_samples() {
    let db = need!(test_db());
    let dir = tempfile::tempdir().expect("tempdir");
    let files = fleet_files(dir.path());
    stdout_of(
        sysmeter_as("x")
            .args(["import", "--db", &db.url])
            .arg(&files[0]),
    );
    let original = host_run(0);
    let shown = json_out(
        sysmeter_as("x")
            .args(["show", &original.id, "--format", "json"])
            .args(["--db", &db.url]),
    );
    let (a, b) = (&shown["results"][0], &original.results[0]);
    assert_eq!(a["id"], b.id.as_str());
    let metrics = a["metrics"].as_array().expect("metrics");
    assert_eq!(metrics.len(), b.metrics.len());
    for (m, o) in metrics.iter().zip(&b.metrics) {
        assert_eq!(m["name"], o.name.as_str());
        assert_eq!(m["samples"].as_array().map(Vec::len), Some(0), "{m}");
        let median = m["summary"]["median"].as_f64().expect("median");
        assert!(
            close(median, o.summary.median),
            "{median} vs {}",
            o.summary.median
        );
    }
    assert_eq!(a["findings"][0]["key"], b.findings[0].key.as_str());
    assert_eq!(shown["host"]["kernel"], original.host.kernel.as_str());
    let mut client = db.client();
    let mut count = |sql: &str| -> i64 { client.query_one(sql, &[]).expect(sql).get(0) };
    assert_eq!(count("SELECT count(*) FROM metrics"), 0, "no metrics rows");
    assert_eq!(
        count("SELECT count(*) FROM results WHERE summary IS NULL"),
        0
    );
    // Whole on request: the raw samples are there.
    stdout_of(
        sysmeter_as("x")
            .args(["import", "--with-samples", "--db", &db.url])
            .arg(&files[1]),
    );
    let samples: usize = (host_run(1).results.iter())
        .flat_map(|r| &r.metrics)
        .map(|m| m.samples.len())
        .sum();
    let stored = count("SELECT coalesce(sum(length(samples) / 8), 0)::bigint FROM metrics");
    assert_eq!(stored as usize, samples);
    // `fleet` reads both kinds alike: the two hosts' medians of every metric.
    let fleet = stdout_of(sysmeter_as("x").args(["fleet", "--format", "json", "--db", &db.url]));
    let doc: serde_json::Value = serde_json::from_str(&fleet).expect("JSON");
    let first = &doc["metrics"][0];
    assert_eq!(first["hosts"].as_array().map(Vec::len), Some(2), "{first}");
}

#[test]
fn prune_keeps_each_hosts_latest_runs() {
    let db = need!(test_db());
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for (i, host) in ["a", "a", "a", "b"].iter().enumerate() {
        let mut run = host_run(0);
        run.id = format!("run-{i}");
        run.host.hostname = host.to_string();
        run.started_ns += i as i64 * 1_000_000_000;
        let path = dir.path().join(format!("{i}.json"));
        std::fs::write(&path, serde_json::to_string(&run).expect("JSON")).expect("write");
        files.push(path);
    }
    stdout_of(
        sysmeter_as("x")
            .args(["import", "--db", &db.url])
            .args(&files),
    );
    let dry =
        stdout_of(sysmeter_as("x").args(["prune", "--keep", "1", "--dry-run", "--db", &db.url]));
    assert!(
        dry.contains("would delete run run-0 of host a") && dry.contains("would delete run run-1"),
        "{dry}"
    );
    assert!(dry.contains("would delete 2 run(s)"), "{dry}");
    let ids = || -> Vec<String> {
        let listed = json_out(sysmeter_as("x").args([
            "history",
            "--all-hosts",
            "--format",
            "json",
            "--db",
            &db.url,
        ]));
        let mut ids: Vec<String> = listed
            .as_array()
            .expect("list")
            .iter()
            .map(|r| r["id"].as_str().expect("id").to_string())
            .collect();
        ids.sort();
        ids
    };
    assert_eq!(ids().len(), 4, "a dry run deletes nothing");
    let done = stdout_of(sysmeter_as("x").args(["prune", "--keep", "1", "--db", &db.url]));
    assert!(done.contains("deleted 2 run(s)"), "{done}");
    assert_eq!(ids(), ["run-2", "run-3"]);
    let count: i64 = db
        .client()
        .query_one("SELECT count(*) FROM results", &[])
        .expect("count")
        .get(0);
    let per_run = host_run(0).results.len() as i64;
    assert_eq!(
        count,
        2 * per_run,
        "the deleted runs' results went with them"
    );
}
