//! `sysmeter fleet --format html`: one self-contained page (inline CSS and SVG, no script,
//! nothing fetched) that opens with the answer — the outliers and their machine differences
//! — then a chart per headline metric (`shape::headline`) with the hosts as dots over the
//! fleet's band (`charts::dots`; beyond 50 hosts only the outliers and the typical host are
//! dots), the table of every metric (a column per host up to 50 hosts), and last the hosts:
//! counts per CPU model and kernel, the full list collapsed in a `<details>`.
//! Every text goes through `charts::svg::escape`.
//!
//! Pure: a [`FleetDocument`] in, a string out.

use super::super::charts::dots::{Dot, DotChart, render as dot_chart};
use super::super::charts::svg::escape;
use super::shape::{counts, counts_line, headline, outliers_in, per_host};
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
    body.push_str(&outliers(doc));
    body.push_str(
        "<h2>Headline metrics</h2>\n<p class=\"muted\">One dot per host; the band is \
                   the fleet's p10–p90, the dashed line its median.</p>\n",
    );
    for m in headline(doc) {
        body.push_str(&figure(m, doc));
    }
    body.push_str(&metrics(doc));
    body.push_str(&hosts(doc));
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
    let cpus = counts(doc, |h| h.cpu_model.as_str());
    let kernels = counts(doc, |h| h.kernel.as_str());
    format!(
        "<h2>Hosts</h2>\n<p class=\"muted\">CPU models: {}<br>kernels: {}</p>\n\
         <details><summary>All {} hosts and their latest bench runs</summary>\n{}</details>\n",
        escape(&counts_line(&cpus, 6)),
        escape(&counts_line(&kernels, 6)),
        doc.hosts.len(),
        table(&header, rows)
    )
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
    let wide = per_host(doc);
    let mut header = metrics_header(doc);
    if !wide {
        header.truncate(4);
        header.insert(2, "hosts".to_string());
        header.push("outliers".to_string());
    }
    let rows = doc
        .metrics
        .iter()
        .map(|m| {
            let mut cells = vec![m.experiment.clone(), m.metric.clone()];
            if !wide {
                cells.push(units::count(m.hosts_measured as f64));
            }
            cells.push(units::value(m.fleet_median, m.unit));
            cells.push(units::range(m.p10, m.p90, m.unit));
            if !wide {
                cells.push(units::count(outliers_in(m) as f64));
            }
            let mut tds = cells
                .iter()
                .map(|c| format!("<td>{}</td>", escape(c)))
                .collect::<String>();
            if wide {
                tds.push_str(&host_cells(m, doc));
            }
            format!("<tr>{tds}</tr>\n")
        })
        .collect();
    let note = match wide {
        true => "Each host's value (percentile in the fleet).",
        false => "The fleet median and p10–p90 over the hosts that measured each metric.",
    };
    format!(
        "<h2>All metrics</h2>\n<p class=\"muted\">{note}</p>\n{}",
        table(&header, rows)
    )
}

/// One metric's cell per host, the outliers marked.
fn host_cells(m: &MetricDoc, doc: &FleetDocument) -> String {
    let mut tds = String::new();
    for h in &doc.hosts {
        tds.push_str(&match m.hosts.iter().find(|v| v.host == h.host) {
            Some(v) if v.outlier => format!(
                "<td class=\"outlier\">{}</td>",
                escape(&host_cell(v, m.unit))
            ),
            Some(v) => format!("<td>{}</td>", escape(&host_cell(v, m.unit))),
            None => "<td>-</td>".to_string(),
        });
    }
    tds
}
