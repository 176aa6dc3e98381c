//! `sysmeter fleet` as GitHub-flavoured Markdown: the hosts, the outliers with their machine
//! differences, and one table of every metric with a column per host.
//!
//! Pure: a [`FleetDocument`] in, a string out.

use super::text::rule;
use super::{FleetDocument, by_host, how_far, metric_row, metrics_header};
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
    let hosts: Vec<Vec<String>> = doc
        .hosts
        .iter()
        .map(|h| {
            let run = format!("`{}`", h.run_id);
            vec![
                h.host.clone(),
                run,
                h.started.clone(),
                h.cpu_model.clone(),
                h.kernel.clone(),
            ]
        })
        .collect();
    let header = ["host", "latest bench run", "started (UTC)", "CPU", "kernel"].map(String::from);
    blocks.push(table(&header, &hosts));
    blocks.push("## Outliers".to_string());
    blocks.push(format!("An outlier is {}.", rule(doc)));
    if doc.outliers.is_empty() {
        blocks.push("No host is an outlier in any metric.".to_string());
    }
    let items: Vec<String> = by_host(doc)
        .into_iter()
        .map(|(group, lines)| {
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
            format!(
                "- **{}**: {} — {}",
                escape(&group[0].host),
                metrics.join("; "),
                escape(&lines.join("; "))
            )
        })
        .collect();
    if !items.is_empty() {
        blocks.push(items.join("\n"));
    }
    blocks.push("## Metrics".to_string());
    blocks.push("Each host's value (percentile in the fleet); ! marks an outlier.".to_string());
    blocks.push(metrics(doc));
    blocks.join("\n\n") + "\n"
}

fn metrics(doc: &FleetDocument) -> String {
    let rows: Vec<Vec<String>> = doc.metrics.iter().map(|m| metric_row(m, doc)).collect();
    table(&metrics_header(doc), &rows)
}
