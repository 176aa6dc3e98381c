//! The fleet page at scale: a synthetic fleet of thousands of hosts made from the fixture run
//! as the SQLite path sees it (every host's value, reduced by `stats::fleet`), with a planted
//! group of slow hosts on one kernel. The HTML must stay under a size bound proportional to
//! the 3 MB allowed for 10 000 hosts (docs/fleet.md), open with the one sentence of what the
//! outliers share, and draw no row per host.

use super::*;
use crate::model::fixture::{assert_in_order, sample_run};
use crate::model::{FleetData, FleetHost, FleetValue, RunRecord, Status};
use crate::stats::fleet::fleet_view;

/// The kernel of the planted slow hosts.
const SLOW_KERNEL: &str = "6.11.0-9-generic";
/// The bytes of HTML allowed for 10 000 hosts.
const BYTES_PER_10_000: usize = 3_000_000;

/// Host `i`'s name.
fn name(i: usize) -> String {
    format!("host-{i:05}")
}

/// Whether host `i` is one of the planted slow hosts: every 500th (7, 507, 1007, …).
fn slow(i: usize) -> bool {
    i % 500 == 7
}

/// `n` hosts made from `template`: every metric of it jittered by up to ±3% (deterministically), three
/// CPU models, two kernels (a quarter on 6.1.0-26-amd64), and the [`slow`] hosts on
/// [`SLOW_KERNEL`] and twice as slow in every `os.syscall` metric.
fn synthetic_fleet(template: &RunRecord, n: usize) -> (FleetView, Vec<FleetHost>) {
    let mut data = FleetData::default();
    for i in 0..n {
        let mut host = template.host.clone();
        host.hostname = name(i);
        host.cpu.model = format!("Xeon {}", ["A", "B", "C"][i % 3]);
        if i % 4 == 3 {
            host.kernel = "6.1.0-26-amd64".to_string();
        }
        if slow(i) {
            host.kernel = SLOW_KERNEL.to_string();
        }
        let jitter = 1.0 + 0.03 * (i as f64 * 12.9898).sin();
        for r in template.results.iter().filter(|r| r.status == Status::Ok) {
            let k = jitter
                * if slow(i) && r.id == "os.syscall" {
                    2.0
                } else {
                    1.0
                };
            data.values.extend(r.metrics.iter().map(|m| FleetValue {
                hostname: name(i),
                experiment: r.id.clone(),
                metric: m.name.clone(),
                unit: m.unit,
                value: m.summary.median * k,
                run_to_run: None,
                judged: None,
            }));
        }
        data.hosts.push(FleetHost {
            hostname: name(i),
            run_id: format!("run-{i:05}"),
            started_ns: template.started_ns,
            host,
        });
    }
    (fleet_view(&data), data.hosts)
}

/// The page of `n` synthetic hosts made from `template`, checked: under its share of 3 MB,
/// the grouping sentence and the outliers first, no row per host in the charts or the roll
/// call.
fn checked_page(template: &RunRecord, n: usize) -> String {
    let (view, hosts) = synthetic_fleet(template, n);
    let planted: Vec<String> = (0..n).filter(|i| slow(*i)).map(name).collect();
    let sentence = format!(
        "All {} outliers run kernel {SLOW_KERNEL}; none of the other {} hosts does (the usual \
         kernel: {}).",
        planted.len(),
        n - planted.len(),
        template.host.kernel
    );
    let html = render(&view, &hosts, FleetFormat::Html).expect("renders");
    let bound = BYTES_PER_10_000 * n / 10_000;
    assert!(
        html.len() <= bound,
        "{} bytes of HTML for {n} hosts, over {bound}",
        html.len()
    );
    assert_in_order(
        &html,
        &["<h2>Outliers</h2>", &sentence, "<h2>Headline metrics</h2>"],
    );
    let charts = html.find("<h2>Headline metrics</h2>").unwrap_or(0);
    for host in &planted {
        assert!(
            html.find(host.as_str()) < Some(charts),
            "{host} named before the charts"
        );
    }
    // No row per host: no dots (a histogram beyond 50 hosts), and no host that is not an
    // outlier is named anywhere on the page.
    assert_eq!(html.matches("<circle").count(), 0);
    assert!(
        html.contains("outlier(s): "),
        "the outliers are marked in the charts"
    );
    assert!(!html.contains(&name(1)) && !html.contains(&name(n - 1)));
    for format in [FleetFormat::Text, FleetFormat::Markdown] {
        let page = render(&view, &hosts, format).expect("renders");
        assert_eq!(page.matches(&sentence).count(), 1, "{page}");
    }
    html
}

#[test]
fn thousands_of_hosts_fit_their_share_of_3_mb_and_lead_with_what_the_outliers_share() {
    checked_page(&sample_run(), 3_000);
}

/// 10 000 hosts, the size the issue names, made from a real default bench run (24
/// experiments, 204 metrics; slow in a debug build: `--ignored`). Writes the page to the
/// temporary directory for a look in a browser.
#[test]
#[ignore]
fn ten_thousand_hosts_fit_in_3_mb() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/runs/default-bench.json"
    );
    let json = std::fs::read_to_string(path).expect("the default bench fixture");
    let template: RunRecord = serde_json::from_str(&json).expect("a run record");
    let html = checked_page(&template, 10_000);
    let path = std::env::temp_dir().join("sysmeter-fleet-10000.html");
    std::fs::write(&path, &html).expect("write page");
    println!(
        "{} bytes of HTML for 10 000 hosts: {}",
        html.len(),
        path.display()
    );
}
