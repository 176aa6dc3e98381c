//! `sysmeter fleet` as terminal text: the hosts, the outliers with their machine
//! differences, then one table row per metric with a column per host.
//!
//! Pure: a [`FleetDocument`] in, a string out.

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};

use super::{FleetDocument, by_host, how_far, metric_row, metrics_header};
use crate::model::units;

/// The text of `doc`.
pub(super) fn render(doc: &FleetDocument) -> String {
    let mut out = format!(
        "Fleet of {} hosts: the latest bench run of each.\n{}\n\n",
        doc.hosts.len(),
        hosts_table(doc)
    );
    out.push_str(&outliers(doc));
    out.push_str("\nMetrics: the fleet median, p10–p90 and each host's value (percentile); ! marks an outlier.\n");
    out.push_str(&metrics_table(doc).to_string());
    out.push('\n');
    out
}

/// The rule in words, shared with Markdown and HTML.
pub(super) fn rule(doc: &FleetDocument) -> String {
    let r = &doc.outlier_rule;
    format!(
        "a host at least {}× above or below the fleet median and more than {} robust standard \
         deviations from it, in a metric at least {} hosts measured, unless its own run-to-run \
         interval (from its stored runs) reaches the fleet median",
        units::sig3(r.min_factor),
        units::count(r.robust_sds),
        r.min_hosts
    )
}

/// The outliers grouped by host, each group's machine differences once.
fn outliers(doc: &FleetDocument) -> String {
    if doc.outliers.is_empty() {
        return format!("No outliers (an outlier is {}).\n", rule(doc));
    }
    let mut out = format!("Outliers ({}):\n", rule(doc));
    for (group, lines) in by_host(doc) {
        for o in group {
            out.push_str(&format!(
                "  {} · {} · {}: {}, {}\n",
                o.host,
                o.experiment,
                o.metric,
                units::value(o.value, o.unit),
                how_far(o)
            ));
        }
        for line in lines {
            out.push_str(&format!("      {line}\n"));
        }
    }
    out
}

fn hosts_table(doc: &FleetDocument) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(["host", "run", "started (UTC)", "CPU", "kernel"]);
    for h in &doc.hosts {
        t.add_row([&h.host, &h.run_id, &h.started, &h.cpu_model, &h.kernel]);
    }
    t
}

fn metrics_table(doc: &FleetDocument) -> Table {
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(metrics_header(doc));
    for m in &doc.metrics {
        t.add_row(metric_row(m, doc));
    }
    t
}
