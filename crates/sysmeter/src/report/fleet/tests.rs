//! The fleet renderers on a fleet built from the fixture run: five hosts a few percent
//! apart, one twice as slow in `os.syscall` on another kernel, and one with markup in its
//! name.

use super::*;
use crate::model::fixture::{assert_in_order, sample_run};
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
                judged: None,
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
    assert_eq!(doc.outlier_groups.len(), 1, "{:?}", doc.outlier_groups);
    let group = &doc.outlier_groups[0];
    assert_eq!(
        (group.hosts.as_slice(), group.other_hosts),
        (&["slow-5".to_string()][..], 4)
    );
    assert_eq!(
        super::shared_sentences(&doc),
        [
            "The outlier slow-5 runs kernel 6.11.0-9-generic; none of the other 4 hosts does \
          (the usual kernel: 6.8.0-45-generic)."
        ]
    );
    let m = &doc.metrics[0];
    assert_eq!(m.hosts.len(), 5);
    assert!(m.p10 <= m.fleet_median && m.fleet_median <= m.p90);
}

#[test]
fn text_and_markdown_show_outliers_before_the_metrics() {
    let (view, hosts) = sample_fleet();
    let text = render(&view, &hosts, FleetFormat::Text).expect("renders");
    let (outliers, metrics, hosts_at) = (
        text.find("Outliers: 1 host(s) in 3 metric(s) (")
            .expect("o"),
        text.find("Metrics:").expect("m"),
        text.find("Hosts:").expect("h"),
    );
    assert!(outliers < metrics && metrics < hosts_at, "{text}");
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

/// A fleet of `n` hosts as the database reduces it: 30 metrics in 6 experiments, 40 hosts
/// outliers in 5 metrics each (plus the host nearest each median), 3 CPU models, 2 kernels.
pub(crate) fn large_fleet(n: usize) -> (FleetView, Vec<FleetHost>) {
    use crate::model::{FleetJudged, FleetSpread, Unit};
    let metric = |i: usize| (format!("exp.{}", i % 6), format!("metric {i}"));
    let mut data = FleetData {
        reduced: true,
        ..FleetData::default()
    };
    let spreads = (0..30).map(|i| {
        let (experiment, metric) = metric(i);
        FleetSpread {
            experiment,
            metric,
            unit: Unit::Ns,
            hosts: n,
            median: 100.0,
            p10: 95.0,
            p90: 105.0,
        }
    });
    data.spreads = Some(spreads.collect());
    let value = |host: String, i: usize, value: f64, outlier: bool| {
        let (experiment, metric) = metric(i);
        let percentile = if outlier { 100.0 } else { 50.0 };
        FleetValue {
            hostname: host,
            experiment,
            metric,
            unit: Unit::Ns,
            value,
            run_to_run: None,
            judged: Some(FleetJudged {
                percentile,
                outlier,
            }),
        }
    };
    for h in 0..40 {
        data.values
            .extend((0..5).map(|k| value(format!("host-{h:05}"), (h + k) % 30, 300.0, true)));
    }
    data.values
        .extend((0..30).map(|i| value("host-09999".into(), i, 100.0, false)));
    let base = crate::model::fixture::sample_run().host;
    for i in 0..n {
        let mut host = base.clone();
        host.hostname = format!("host-{i:05}");
        host.cpu.model = format!("CPU model {}", i % 3);
        host.kernel = format!("6.{}.0", i % 2);
        data.hosts.push(FleetHost {
            hostname: host.hostname.clone(),
            run_id: format!("run-{i}"),
            started_ns: 0,
            host,
        });
    }
    (fleet_view(&data), data.hosts)
}

#[test]
fn a_large_fleet_leads_with_the_outliers_and_summarises_the_roll_call() {
    let (view, hosts) = large_fleet(300);
    let text = render(&view, &hosts, FleetFormat::Text).expect("renders");
    let lines = text.lines().count();
    assert!(lines <= super::text::MAX_LINES, "{lines} lines:\n{text}");
    let order = [
        "Outliers: 40 host(s) in 200 metric(s)",
        "Spread of the headline",
        "Hosts: 300 (3 CPU model(s), 2 kernel(s))",
    ];
    assert_in_order(&text, &order);
    assert!(
        text.contains("100 × CPU model 0") && text.contains("150 × 6.0.0"),
        "{text}"
    );
    assert!(text.contains("and 34 more host(s) with outliers"), "{text}");
    assert!(
        !text.contains("run-17"),
        "no roll call of runs beyond 50 hosts:\n{text}"
    );
    let md = render(&view, &hosts, FleetFormat::Markdown).expect("renders");
    assert_in_order(&md, &["## Outliers", "## Metrics", "## Hosts (300)"]);
    assert_eq!(
        md.lines().filter(|l| l.starts_with("- **host-")).count(),
        40
    );
    assert!(md.contains("| CPU model 0 | 100 |"), "{md}");
    let html = render(&view, &hosts, FleetFormat::Html).expect("renders");
    assert_in_order(&html, &["<h2>Outliers</h2>", "<h2>Headline metrics</h2>"]);
    // Beyond 50 hosts the roll call is counts (it was every host, collapsed): no row per
    // host; --format json holds each host's run.
    assert_in_order(&html, &["<h2>All metrics</h2>", "<h2>Hosts (300)</h2>"]);
    assert_eq!(html.matches("<tr><td>host-").count(), 0, "no row per host");
    assert!(html.contains("100 × CPU model 0"), "{html}");
    // Half the outliers run each kernel, as half the fleet does: nothing sets them apart.
    let nothing = "The 40 outlier hosts share no machine setting that sets them apart";
    assert!(html.contains(nothing) && text.contains(nothing) && md.contains(nothing));
}

#[test]
fn the_band_is_over_every_host_and_every_page_says_so() {
    // Issue 43: is the p10–p90 band taken without the outliers? It is not: over every host
    // that measured the metric, and each page says so where it explains the band.
    let (view, hosts) = sample_fleet();
    let doc = document(&view, &hosts);
    let o = &doc.outliers[0];
    let m = (doc.metrics.iter())
        .find(|m| m.experiment == o.experiment && m.metric == o.metric)
        .expect("the outlier's metric");
    let mut all: Vec<f64> = m.hosts.iter().map(|h| h.value).collect();
    all.sort_by(f64::total_cmp);
    assert_eq!(
        m.p90,
        crate::stats::quantile_sorted(&all, 0.9),
        "outlier included"
    );
    let usual = &all[..all.len() - 1];
    assert!(
        m.p90 > usual[usual.len() - 1],
        "the outlier pulls the band up"
    );
    for format in [FleetFormat::Text, FleetFormat::Markdown, FleetFormat::Html] {
        let page = render(&view, &hosts, format).expect("renders");
        assert!(page.contains(BAND_OVER), "{format:?} does not say it");
    }
}
