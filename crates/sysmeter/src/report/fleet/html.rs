//! `sysmeter fleet --format html`: one self-contained page (inline CSS and SVG, no script,
//! nothing fetched) that opens with the answer — what the outliers share, in one sentence
//! per group (`shared.rs`), and the outliers by host (the first [`OUTLIER_HOSTS`], the rest
//! counted) — then a chart per headline metric (`shape::headline`): a strip of the fleet's
//! distribution with the outliers marked (`charts::dots`: dots up to 50 hosts, a histogram
//! beyond, never a row per host), the table of every metric (a column per host up to 50
//! hosts), and last the hosts: counts per CPU model and kernel, and up to 50 hosts the list
//! of each host's latest run, collapsed in a `<details>`. Its size does not grow with the
//! number of hosts beyond 50 (only with the metrics and the outliers).
//! Every text goes through `charts::svg::escape`.
//!
//! Pure: a [`FleetDocument`] in, a string out.

use super::super::charts::dots::{Dot, DotChart, render as dot_chart};
use super::super::charts::svg::escape;
use super::shape::{counts, counts_line, headline, outliers_in, per_host};
use super::text::rule;
use super::{
    BAND_OVER, FleetDocument, MetricDoc, Outlier, by_host, host_cell, how_far, metrics_header,
    shared_sentences,
};
use crate::model::{ROLL_CALL_HOSTS, Unit, units};

/// Outlier hosts listed, then counted (`--format json` and `markdown` list them all).
const OUTLIER_HOSTS: usize = 50;

const STYLE: &str = "body{margin:0;font:15px/1.5 system-ui,sans-serif;color:#1d1d1f}\
main{max-width:1120px;margin:0 auto;padding:24px 28px 48px}\
h1{font-size:26px;margin:0 0 4px}h2{font-size:21px;margin:28px 0 8px}\
table{border-collapse:collapse;width:100%;font-size:13px;margin:4px 0 8px}\
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #d9d9de;vertical-align:top}\
th{background:#f5f6f8}td.outlier{background:#fdecea;font-weight:600}\
figure{margin:10px 0 16px;border:1px solid #d9d9de;border-radius:8px;padding:10px}\
figcaption{font-size:13px;color:#5f6368;margin-bottom:6px}svg.chart{max-width:100%;height:auto}\
ul.outliers li{margin:4px 0}.muted{color:#5f6368}p.shared{font-size:17px;margin:6px 0}\
div.scroll{overflow-x:auto;max-width:100%}";

/// The page of `doc`.
pub(super) fn render(doc: &FleetDocument) -> String {
    let title = format!("sysmeter fleet of {} hosts", doc.hosts.len());
    let mut body = format!("<h1>{}</h1>\n", escape(&title));
    body.push_str(&outliers(doc));
    body.push_str(
        "<h2>Headline metrics</h2>\n<p class=\"muted\">The hosts' values: a dot per host up to \
         50 hosts, a histogram beyond; outliers in red. The band is the fleet's p10–p90 ",
    );
    body.push_str(&format!("{BAND_OVER}, the dashed line its median.</p>\n"));
    for m in headline(doc) {
        body.push_str(&figure(m));
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
    // In a scrolling box: a column per host can be wider than the page.
    format!(
        "<div class=\"scroll\"><table>\n<tr>{head}</tr>\n{}</table></div>\n",
        rows.concat()
    )
}

fn hosts(doc: &FleetDocument) -> String {
    let rows = (doc.hosts.iter().take(ROLL_CALL_HOSTS))
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
    let list = match per_host(doc) {
        true => format!(
            "<details><summary>All {} hosts and their latest bench runs</summary>\n{}</details>\n",
            doc.hosts.len(),
            table(&header, rows)
        ),
        false => {
            "<p class=\"muted\">Each host's latest bench run: <code>--format json</code>.</p>\n"
                .to_string()
        }
    };
    format!(
        "<h2>Hosts ({})</h2>\n<p class=\"muted\">CPU models: {}<br>kernels: {}</p>\n{list}",
        doc.hosts.len(),
        escape(&counts_line(&cpus, 6)),
        escape(&counts_line(&kernels, 6)),
    )
}

fn outliers(doc: &FleetDocument) -> String {
    let mut out = "<h2>Outliers</h2>\n".to_string();
    for line in shared_sentences(doc) {
        out.push_str(&format!(
            "<p class=\"shared\"><strong>{}</strong></p>\n",
            escape(&line)
        ));
    }
    out.push_str(&format!(
        "<p class=\"muted\">An outlier is {}.</p>\n",
        escape(&rule(doc))
    ));
    if doc.outliers.is_empty() {
        out.push_str("<p>No host is an outlier in any metric.</p>\n");
        return out;
    }
    out.push_str("<ul class=\"outliers\">\n");
    let hosts = by_host(doc);
    let mut listed = 0;
    for alike in alike_hosts(&hosts) {
        if listed >= OUTLIER_HOSTS {
            break;
        }
        let shown = &alike[..alike.len().min(OUTLIER_HOSTS - listed)];
        out.push_str(&match alike.len() {
            1 => host_item(alike[0]),
            _ => alike_item(&alike, shown),
        });
        listed += shown.len();
    }
    if hosts.len() > listed {
        out.push_str(&format!(
            "<li>and {} more hosts with outliers: <code>--format json</code> or \
             <code>markdown</code> lists them all</li>\n",
            hosts.len() - listed
        ));
    }
    out.push_str("</ul>\n");
    out
}

/// The (experiment, metric) pairs a host stands out in, sorted.
type MetricKeys = Vec<(String, String)>;

/// The outlier hosts (each its outliers) grouped by the metrics they stand out in: hosts
/// with the same metrics are one item of the list, not a repeated line each.
fn alike_hosts<'a, 'b>(hosts: &'b [Vec<&'a Outlier>]) -> Vec<Vec<&'b Vec<&'a Outlier>>> {
    let key = |h: &Vec<&Outlier>| -> MetricKeys {
        let mut k: MetricKeys = (h.iter())
            .map(|o| (o.experiment.clone(), o.metric.clone()))
            .collect();
        k.sort();
        k
    };
    let mut groups: Vec<(MetricKeys, Vec<&Vec<&Outlier>>)> = Vec::new();
    for h in hosts {
        let k = key(h);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, members)) => members.push(h),
            None => groups.push((k, vec![h])),
        }
    }
    groups.into_iter().map(|(_, members)| members).collect()
}

/// One host's outliers: each metric with its value and how far it is.
fn host_item(group: &[&Outlier]) -> String {
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
    format!(
        "<li><strong>{}</strong>: {}</li>\n",
        escape(&group[0].host),
        items.join("; ")
    )
}

/// Hosts that stand out in the same metrics, in one item: the metrics, how far (the range
/// of value / fleet median over them all), and the `shown` hosts' names.
fn alike_item(alike: &[&Vec<&Outlier>], shown: &[&Vec<&Outlier>]) -> String {
    let metrics: Vec<String> = (alike[0].iter())
        .map(|o| {
            format!(
                "<code>{}</code> {}",
                escape(&o.experiment),
                escape(&o.metric)
            )
        })
        .collect();
    let ratios: Vec<f64> = (alike.iter().flat_map(|h| h.iter()))
        .filter_map(|o| o.ratio)
        .collect();
    let lo = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let far = match ratios.is_empty() {
        true => String::new(),
        false => format!(
            ", {}–{}× the fleet median",
            units::sig3(lo),
            units::sig3(hi)
        ),
    };
    let names: Vec<String> = shown.iter().map(|h| escape(&h[0].host)).collect();
    let more = match alike.len() - shown.len() {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "<li><strong>{} hosts</strong> in {}{far}: {}{more}</li>\n",
        alike.len(),
        metrics.join(", "),
        names.join(", ")
    )
}

fn figure(m: &MetricDoc) -> String {
    let caption = format!("{}: {}", m.experiment, m.metric);
    let chart = DotChart {
        title: caption.clone(),
        axis_label: axis_label(m.unit).to_string(),
        unit: m.unit,
        median: m.fleet_median,
        band: (m.p10, m.p90),
        hosts: m.hosts_measured.max(m.hosts.len()),
        dots: (m.hosts.iter())
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
        true => "Each host's value (percentile in the fleet).".to_string(),
        false => format!("The fleet median and p10–p90 of each metric, {BAND_OVER}."),
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
