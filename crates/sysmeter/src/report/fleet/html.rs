//! `sysmeter fleet --format html`: one self-contained page (inline CSS and SVG, no script,
//! nothing fetched) with the hosts, the outliers and their machine differences, a chart per
//! headline metric with the hosts as dots (`charts::dots`), and the table of every metric.
//!
//! Headline metrics are every metric in which a host is an outlier, then the first metric
//! (by name) of each other experiment. Every text goes through `charts::svg::escape`.
//!
//! Pure: a [`FleetDocument`] in, a string out.

use std::collections::BTreeSet;

use super::super::charts::dots::{Dot, DotChart, render as dot_chart};
use super::super::charts::svg::escape;
use super::text::rule;
use super::{FleetDocument, MetricDoc, by_host, host_cell, how_far, metrics_header};
use crate::model::{Unit, units};

const STYLE: &str = "body{margin:0;font:15px/1.5 system-ui,sans-serif;color:#1d1d1f}\
main{max-width:1120px;margin:0 auto;padding:24px 28px 48px}\
h1{font-size:26px;margin:0 0 4px}h2{font-size:21px;margin:28px 0 8px}\
table{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0 8px}\
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #d9d9de;vertical-align:top}\
th{background:#f5f6f8}td.outlier{background:#fdecea;font-weight:600}\
figure{margin:10px 0 16px;border:1px solid #d9d9de;border-radius:8px;padding:10px}\
figcaption{font-size:13px;color:#5f6368;margin-bottom:6px}svg.chart{max-width:100%;height:auto}\
ul.outliers li{margin:4px 0}.muted{color:#5f6368}";

/// The page of `doc`.
pub(super) fn render(doc: &FleetDocument) -> String {
    let title = format!("sysmeter fleet of {} hosts", doc.hosts.len());
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    body.push_str(&hosts(doc));
    body.push_str(&outliers(doc));
    body.push_str(
        "<h2>Headline metrics</h2>\n<p class=\"muted\">One dot per host; the band is \
                   the fleet's p10–p90, the dashed line its median.</p>\n",
    );
    for m in headline(doc) {
        body.push_str(&figure(m, doc));
    }
    body.push_str(&metrics(doc));
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"generator\" content=\"sysmeter {}\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<main>\n{body}</main>\n</body>\n</html>\n",
        crate::report::html::CSP,
        env!("CARGO_PKG_VERSION"),
        escape(&title)
    )
}

/// A table from already escaped cells.
fn table(header: &[String], rows: Vec<String>) -> String {
    let head: String = header
        .iter()
        .map(|h| format!("<th>{}</th>", escape(h)))
        .collect();
    format!("<table>\n<tr>{head}</tr>\n{}</table>\n", rows.concat())
}

fn hosts(doc: &FleetDocument) -> String {
    let rows = doc
        .hosts
        .iter()
        .map(|h| {
            let cells = [&h.host, &h.run_id, &h.started, &h.cpu_model, &h.kernel];
            let tds: String = cells
                .iter()
                .map(|c| format!("<td>{}</td>", escape(c)))
                .collect();
            format!("<tr>{tds}</tr>\n")
        })
        .collect();
    let header = ["host", "latest bench run", "started (UTC)", "CPU", "kernel"].map(String::from);
    table(&header, rows)
}

fn outliers(doc: &FleetDocument) -> String {
    let mut out = format!(
        "<h2>Outliers</h2>\n<p class=\"muted\">An outlier is {}.</p>\n",
        escape(&rule(doc))
    );
    if doc.outliers.is_empty() {
        out.push_str("<p>No host is an outlier in any metric.</p>\n");
        return out;
    }
    out.push_str("<ul class=\"outliers\">\n");
    for (group, lines) in by_host(doc) {
        let items: Vec<String> = group
            .iter()
            .map(|o| {
                format!(
                    "<code>{}</code> {}: {}, {}",
                    escape(&o.experiment),
                    escape(&o.metric),
                    escape(&units::value(o.value, o.unit)),
                    escape(&how_far(o))
                )
            })
            .collect();
        let why: Vec<String> = lines.iter().map(|l| escape(l)).collect();
        out.push_str(&format!(
            "<li><strong>{}</strong>: {}<br><span class=\"muted\">{}</span></li>\n",
            escape(&group[0].host),
            items.join("; "),
            why.join("<br>")
        ));
    }
    out.push_str("</ul>\n");
    out
}

/// The metrics that get a chart (module documentation).
fn headline(doc: &FleetDocument) -> Vec<&MetricDoc> {
    let with_outlier = |m: &MetricDoc| m.hosts.iter().any(|h| h.outlier);
    let mut chosen: Vec<&MetricDoc> = doc.metrics.iter().filter(|m| with_outlier(m)).collect();
    let mut covered: BTreeSet<&str> = chosen.iter().map(|m| m.experiment.as_str()).collect();
    for m in &doc.metrics {
        if covered.insert(&m.experiment) {
            chosen.push(m);
        }
    }
    chosen
}

fn figure(m: &MetricDoc, doc: &FleetDocument) -> String {
    let caption = format!("{}: {}", m.experiment, m.metric);
    let chart = DotChart {
        title: caption.clone(),
        axis_label: axis_label(m.unit).to_string(),
        unit: m.unit,
        median: m.fleet_median,
        band: (m.p10, m.p90),
        dots: doc
            .hosts
            .iter()
            .filter_map(|h| m.hosts.iter().find(|v| v.host == h.host))
            .map(|v| Dot {
                name: v.host.clone(),
                value: v.value,
                outlier: v.outlier,
            })
            .collect(),
    };
    let svg = dot_chart(&chart).unwrap_or_default();
    format!(
        "<figure>\n<figcaption>{} — fleet median {}, p10–p90 {}</figcaption>\n{svg}\n</figure>\n",
        escape(&caption),
        escape(&units::value(m.fleet_median, m.unit)),
        escape(&units::range(m.p10, m.p90, m.unit))
    )
}

fn axis_label(unit: Unit) -> &'static str {
    match unit {
        Unit::Ns => "time per operation",
        Unit::BytesPerSec => "throughput",
        Unit::Bytes => "size",
        Unit::Count => "value",
    }
}

fn metrics(doc: &FleetDocument) -> String {
    let header = metrics_header(doc);
    let rows = doc
        .metrics
        .iter()
        .map(|m| {
            let mut tds = [
                m.experiment.clone(),
                m.metric.clone(),
                units::value(m.fleet_median, m.unit),
                units::range(m.p10, m.p90, m.unit),
            ]
            .map(|c| format!("<td>{}</td>", escape(&c)))
            .concat();
            for h in &doc.hosts {
                tds.push_str(&match m.hosts.iter().find(|v| v.host == h.host) {
                    Some(v) if v.outlier => {
                        format!(
                            "<td class=\"outlier\">{}</td>",
                            escape(&host_cell(v, m.unit))
                        )
                    }
                    Some(v) => format!("<td>{}</td>", escape(&host_cell(v, m.unit))),
                    None => "<td>-</td>".to_string(),
                });
            }
            format!("<tr>{tds}</tr>\n")
        })
        .collect();
    format!(
        "<h2>All metrics</h2>\n<p class=\"muted\">Each host's value (percentile in the fleet).</p>\n{}",
        table(&header, rows)
    )
}
