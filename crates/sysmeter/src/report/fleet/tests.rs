//! The fleet renderers on a fleet built from the fixture run: five hosts a few percent
//! apart, one twice as slow in `os.syscall` on another kernel, and one with markup in its
//! name.

use super::*;
use crate::model::fixture::sample_run;
use crate::model::{FleetData, FleetHost, FleetValue, Status};
use crate::stats::fleet::fleet_view;

/// Host names; the last is twice as slow in `os.syscall`.
const HOSTS: [&str; 5] = ["a-1", "a-2", "<b>&3", "a-4", "slow-5"];

/// The fleet of [`HOSTS`] (also the real output the JSON schema's example is checked
/// against).
pub(crate) fn sample_fleet() -> (FleetView, Vec<FleetHost>) {
    let mut data = FleetData::default();
    for (i, name) in HOSTS.iter().enumerate() {
        let mut run = sample_run();
        run.host.hostname = name.to_string();
        if i == 4 {
            run.host.kernel = "6.11.0-9-generic".into();
        }
        let k = [1.0, 1.02, 0.98, 1.01, 1.0][i];
        for r in run.results.iter().filter(|r| r.status == Status::Ok) {
            let slow = if i == 4 && r.id == "os.syscall" {
                2.0
            } else {
                1.0
            };
            data.values.extend(r.metrics.iter().map(|m| FleetValue {
                hostname: name.to_string(),
                experiment: r.id.clone(),
                metric: m.name.clone(),
                unit: m.unit,
                value: m.summary.median * k * slow,
                run_to_run: None,
            }));
        }
        data.hosts.push(FleetHost {
            hostname: name.to_string(),
            run_id: format!("{}-{i}", run.id),
            started_ns: run.started_ns,
            host: run.host,
        });
    }
    (fleet_view(&data), data.hosts)
}

#[test]
fn the_document_lists_the_slow_host_first_with_its_kernel() {
    let (view, hosts) = sample_fleet();
    let doc = document(&view, &hosts);
    assert_eq!(
        doc.outliers.len(),
        3,
        "every os.syscall metric: {:?}",
        doc.outliers
    );
    for o in &doc.outliers {
        assert_eq!(
            (o.host.as_str(), o.experiment.as_str()),
            ("slow-5", "os.syscall")
        );
        assert_eq!(
            o.compared_with.as_deref().map(|h| h.starts_with("a-")),
            Some(true)
        );
        assert_eq!(o.differences.len(), 1, "{:?}", o.differences);
        assert_eq!(o.differences[0].field, "kernel");
        assert_eq!(o.differences[0].host, "6.11.0-9-generic");
    }
    let m = &doc.metrics[0];
    assert_eq!(m.hosts.len(), 5);
    assert!(m.p10 <= m.fleet_median && m.fleet_median <= m.p90);
}

#[test]
fn text_and_markdown_show_outliers_before_the_metrics() {
    let (view, hosts) = sample_fleet();
    let text = render(&view, &hosts, FleetFormat::Text).expect("renders");
    let (outliers, metrics) = (
        text.find("Outliers (").expect("o"),
        text.find("Metrics:").expect("m"),
    );
    assert!(outliers < metrics, "{text}");
    assert!(
        text.contains("slow-5 · os.syscall · null (getppid):"),
        "{text}"
    );
    assert!(
        text.contains("103 ns, 1.98× the fleet median 51.8 ns"),
        "{text}"
    );
    let md = render(&view, &hosts, FleetFormat::Markdown).expect("renders");
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| os.syscall |"))
        .collect();
    assert_eq!(rows.len(), 3, "{md}");
    // Every metric row has a cell per column.
    let header = md
        .lines()
        .find(|l| l.starts_with("| experiment |"))
        .expect("header");
    assert!(
        rows.iter()
            .all(|r| r.matches(" | ").count() == header.matches(" | ").count())
    );
    assert!(rows.iter().all(|r| r.contains(" !")));
}

#[test]
fn html_escapes_host_names_and_draws_a_chart_per_headline_metric() {
    let (view, hosts) = sample_fleet();
    let html = render(&view, &hosts, FleetFormat::Html).expect("renders");
    assert!(!html.contains("<b>&3") && html.contains("&lt;b&gt;&amp;3"));
    // The three os.syscall metrics all have the outlier: three charts, five dots each.
    assert_eq!(html.matches("<figure>").count(), 3);
    assert_eq!(html.matches("<circle").count(), 15);
    assert_eq!(html.matches("class=\"outlier\"").count(), 3);
    let json = render(&view, &hosts, FleetFormat::Json).expect("renders");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["outliers"][0]["host"], "slow-5");
    assert_eq!(v["schema"], FLEET_SCHEMA);
}
