//! A fleet of 300 hosts (more than the 50 whose values are all read): on PostgreSQL the
//! server reduces it — the spreads, the outlier rule, the percentiles and the typical hosts
//! in SQL — and finds what the client finds on SQLite from every value; and every format
//! leads with the outliers, summarises the roll call, and the text stays within 80 lines.

use sysmeter::model::fixture::assert_in_order;

use crate::support::fleet::many_files;
use crate::support::pg::{sysmeter_as, test_db};
use crate::support::{json_out, need, stdout_of};

const HOSTS: usize = 300;

/// (host, experiment, metric, compared_with) of every outlier, sorted.
fn outliers(doc: &serde_json::Value) -> Vec<(String, String, String, String)> {
    let s = |o: &serde_json::Value, k: &str| o[k].as_str().unwrap_or("-").to_string();
    let mut list: Vec<_> = (doc["outliers"].as_array().expect("outliers").iter())
        .map(|o| {
            (
                s(o, "host"),
                s(o, "experiment"),
                s(o, "metric"),
                s(o, "compared_with"),
            )
        })
        .collect();
    list.sort();
    list
}

#[test]
fn the_server_reduces_a_large_fleet_as_the_client_judges_it() {
    let db = need!(test_db());
    let dir = tempfile::tempdir().expect("tempdir");
    let files = many_files(dir.path(), HOSTS);
    let lite = dir.path().join("fleet.db");
    for target in [db.url.as_str(), lite.to_str().expect("UTF-8")] {
        let out = stdout_of(
            sysmeter_as("x")
                .args(["import", "--db", target])
                .args(&files),
        );
        assert!(out.contains(&format!("{HOSTS} run(s) imported")), "{out}");
    }
    let fleet = |target: &str, format: &str| {
        stdout_of(sysmeter_as("x").args(["fleet", "--format", format, "--db", target]))
    };
    let pg: serde_json::Value = serde_json::from_str(&fleet(&db.url, "json")).expect("JSON");
    let sqlite = json_out(
        sysmeter_as("x")
            .args(["fleet", "--format", "json", "--db"])
            .arg(&lite),
    );
    let found = outliers(&pg);
    assert_eq!(found, outliers(&sqlite));
    assert_eq!(
        found.len(),
        9,
        "3 slow hosts × 3 os.syscall metrics: {found:?}"
    );
    assert!(
        found
            .iter()
            .all(|o| o.0.ends_with("42") && o.1 == "os.syscall"),
        "{found:?}"
    );
    let fields = pg["outliers"][0]["differences"]
        .as_array()
        .expect("differences");
    assert!(fields.iter().any(|d| d["field"] == "kernel"), "{fields:?}");
    same_metrics(&pg, &sqlite);
    views_lead_with_the_answer(&db.url);
}

/// Every metric's spread as the client computes it, and the hosts the server sends (the
/// outliers and the typical host) placed as the client places them among all the hosts.
fn same_metrics(pg: &serde_json::Value, sqlite: &serde_json::Value) {
    for (p, s) in pg["metrics"]
        .as_array()
        .expect("m")
        .iter()
        .zip(sqlite["metrics"].as_array().expect("m"))
    {
        assert_eq!(
            (&p["experiment"], &p["metric"]),
            (&s["experiment"], &s["metric"])
        );
        assert_eq!(p["hosts_measured"], HOSTS);
        for k in ["fleet_median", "p10", "p90"] {
            let (a, b) = (p[k].as_f64().expect(k), s[k].as_f64().expect(k));
            assert!((a - b).abs() <= 1e-9 * b.abs(), "{k}: {a} vs {b}");
        }
        for h in p["hosts"].as_array().expect("hosts") {
            let same = (s["hosts"].as_array().expect("hosts").iter())
                .find(|x| x["host"] == h["host"])
                .expect("the host in the client's view");
            assert_eq!(
                (&h["percentile"], &h["outlier"]),
                (&same["percentile"], &same["outlier"]),
                "{h} vs {same}"
            );
        }
    }
}

/// Text within 80 lines, outliers, spread, roll call in that order; the HTML likewise.
fn views_lead_with_the_answer(url: &str) {
    let fleet =
        |format: &str| stdout_of(sysmeter_as("x").args(["fleet", "--format", format, "--db", url]));
    let text = fleet("text");
    assert!(
        text.lines().count() <= 80,
        "{} lines:\n{text}",
        text.lines().count()
    );
    let order = [
        "Outliers: 3 host(s) in 9 metric(s)",
        "Spread of the headline metrics",
        "Hosts: 300 (3 CPU model(s), 2 kernel(s))",
    ];
    assert_in_order(&text, &order);
    assert!(
        text.contains("100 × Xeon A") && text.contains("297 × 6.8.0-45-generic"),
        "{text}"
    );
    let html = fleet("html");
    // Beyond 50 hosts the roll call is counts per CPU model and kernel, no row per host.
    let order = [
        "<h2>Outliers</h2>",
        "<h2>Headline metrics</h2>",
        "<h2>Hosts (300)</h2>",
    ];
    assert_in_order(&html, &order);
    assert_eq!(html.matches("<tr><td>host-").count(), 0, "no row per host");
    assert!(html.contains("100 × Xeon A"), "{html}");
}
