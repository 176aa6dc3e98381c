//! `sysmeter fleet` as GitHub-flavoured Markdown, the answer first: what the outliers share
//! (`shared.rs`'s sentences) and the outliers by host, every metric's spread (a column per host up to 50 hosts), and the
//! hosts last (a table up to 50, counts per CPU model and kernel beyond).
//!
//! Pure: a [`FleetDocument`] in, a string out.

use super::shape::{SPREAD_HEADER, counts, per_host, spread_row};
use super::text::rule;
use super::{
    BAND_OVER, FleetDocument, by_host, how_far, metric_row, metrics_header, shared_sentences,
};
use crate::model::units;

/// Makes text safe inside a table cell or a line: pipes escaped, line breaks flattened.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A GFM table of `rows` under `headers`.
fn table(headers: &[String], rows: &[Vec<String>]) -> String {
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| escape(c)).collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut lines = vec![line(headers), format!("|{}", "---|".repeat(headers.len()))];
    lines.extend(rows.iter().map(|r| line(r)));
    lines.join("\n")
}

/// The Markdown of `doc`.
pub(super) fn render(doc: &FleetDocument) -> String {
    let mut blocks = vec![format!("# sysmeter fleet of {} hosts", doc.hosts.len())];
    blocks.push("## Outliers".to_string());
    let shared = shared_sentences(doc);
    if !shared.is_empty() {
        blocks.push(format!("**{}**", escape(&shared.join(" "))));
    }
    blocks.push(format!("An outlier is {}.", rule(doc)));
    if doc.outliers.is_empty() {
        blocks.push("No host is an outlier in any metric.".to_string());
    }
    let items: Vec<String> = by_host(doc)
        .into_iter()
        .map(|group| {
            let metrics: Vec<String> = group
                .iter()
                .map(|o| {
                    format!(
                        "`{}` {}: {}, {}",
                        o.experiment,
                        escape(&o.metric),
                        units::value(o.value, o.unit),
                        how_far(o)
                    )
                })
                .collect();
            format!("- **{}**: {}", escape(&group[0].host), metrics.join("; "))
        })
        .collect();
    if !items.is_empty() {
        blocks.push(items.join("\n"));
    }
    blocks.push("## Metrics".to_string());
    if per_host(doc) {
        blocks.push(format!(
            "The fleet median and p10–p90 {BAND_OVER}, each host's value (percentile in the \
             fleet); ! marks an outlier."
        ));
        blocks.push(metrics(doc));
    } else {
        blocks.push(format!(
            "The fleet median and p10–p90 of every metric, {BAND_OVER}."
        ));
        blocks.push(spreads(doc));
    }
    blocks.push(format!("## Hosts ({})", doc.hosts.len()));
    blocks.extend(hosts(doc));
    blocks.join("\n\n") + "\n"
}

/// The roll call: a table up to 50 hosts, counts per CPU model and kernel beyond.
fn hosts(doc: &FleetDocument) -> Vec<String> {
    if !per_host(doc) {
        let count_table = |what: &str, list: Vec<(&str, usize)>| {
            let rows: Vec<Vec<String>> = (list.into_iter())
                .map(|(v, n)| vec![v.to_string(), units::count(n as f64)])
                .collect();
            table(&[what.to_string(), "hosts".to_string()], &rows)
        };
        return vec![
            count_table("CPU model", counts(doc, |h| h.cpu_model.as_str())),
            count_table("kernel", counts(doc, |h| h.kernel.as_str())),
        ];
    }
    let rows: Vec<Vec<String>> = doc
        .hosts
        .iter()
        .map(|h| {
            vec![
                h.host.clone(),
                format!("`{}`", h.run_id),
                h.started.clone(),
                h.cpu_model.clone(),
                h.kernel.clone(),
            ]
        })
        .collect();
    let header = ["host", "latest bench run", "started (UTC)", "CPU", "kernel"].map(String::from);
    vec![table(&header, &rows)]
}

fn metrics(doc: &FleetDocument) -> String {
    let rows: Vec<Vec<String>> = doc.metrics.iter().map(|m| metric_row(m, doc)).collect();
    table(&metrics_header(doc), &rows)
}

fn spreads(doc: &FleetDocument) -> String {
    let header = SPREAD_HEADER.map(String::from);
    let rows: Vec<Vec<String>> = doc.metrics.iter().map(|m| spread_row(m).to_vec()).collect();
    table(&header, &rows)
}
