//! `sysmeter fleet` as terminal text, the answer first and short at any size: what the
//! outliers share (`shared.rs`'s sentences), the outliers grouped by host, the spread of the headline metrics (up
//! to 50 hosts: every metric with a column per host), and the roll call last — a table up
//! to 50 hosts, counts per CPU model and kernel beyond. At most `MAX_LINES` lines for a
//! fleet of any size; `--format json` holds everything.
//!
//! Pure: a [`FleetDocument`] in, a string out.

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};

use super::shape::{SPREAD_HEADER, counts, counts_line, headline, per_host, spread_row};
use super::{
    BAND_OVER, FleetDocument, by_host, how_far, metric_row, metrics_header, shared_sentences,
};
use crate::model::units;

/// The most lines of a large fleet's text (checked by the tests: the caps below keep it).
#[cfg(test)]
pub(super) const MAX_LINES: usize = 80;
/// Outlier hosts listed in full, then counted.
const OUTLIER_HOSTS: usize = 6;
/// Metrics listed per outlier host, then counted.
const METRICS_PER_HOST: usize = 3;
/// Rows of the headline table of a large fleet.
const HEADLINE_ROWS: usize = 20;

/// The text of `doc`.
pub(super) fn render(doc: &FleetDocument) -> String {
    let mut out = format!(
        "Fleet of {} hosts: the latest bench run of each.\n\n",
        doc.hosts.len()
    );
    out.push_str(&outliers(doc));
    if per_host(doc) {
        out.push_str(&format!(
            "\nMetrics: the fleet median and p10–p90 {BAND_OVER}, each host's value \
             (percentile); ! marks an outlier.\n"
        ));
        out.push_str(&metrics_table(doc).to_string());
        out.push_str(&format!("\n\nHosts:\n{}\n", hosts_table(doc)));
    } else {
        out.push_str(&format!("\nThe p10–p90 of each metric is {BAND_OVER}.\n"));
        out.push_str(&format!("{}\n", spread_table(doc)));
        out.push_str(&roll_call(doc));
    }
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

/// What the outliers share, then the outliers grouped by host; a large fleet's list cut
/// after [`OUTLIER_HOSTS`] hosts.
fn outliers(doc: &FleetDocument) -> String {
    if doc.outliers.is_empty() {
        return format!("No outliers (an outlier is {}).\n", rule(doc));
    }
    let groups = by_host(doc);
    let mut out = format!(
        "Outliers: {} host(s) in {} metric(s) ({}).\n",
        groups.len(),
        doc.outliers.len(),
        rule(doc)
    );
    for line in shared_sentences(doc) {
        out.push_str(&format!("  {line}\n"));
    }
    let cut = !per_host(doc);
    let shown = if cut { OUTLIER_HOSTS } else { groups.len() };
    for group in groups.iter().take(shown) {
        let per = if cut { METRICS_PER_HOST } else { group.len() };
        for o in group.iter().take(per) {
            out.push_str(&format!(
                "  {} · {} · {}: {}, {}\n",
                o.host,
                o.experiment,
                o.metric,
                units::value(o.value, o.unit),
                how_far(o)
            ));
        }
        if group.len() > per {
            out.push_str(&format!("    and {} more metric(s)\n", group.len() - per));
        }
    }
    if groups.len() > shown {
        out.push_str(&format!(
            "  and {} more host(s) with outliers: --format json or markdown lists them all\n",
            groups.len() - shown
        ));
    }
    out
}

/// A large fleet's headline metrics: hosts, median, p10–p90, outliers.
fn spread_table(doc: &FleetDocument) -> String {
    let chosen = headline(doc);
    let mut t = Table::new();
    t.load_style(UTF8_FULL_CONDENSED);
    t.set_header(SPREAD_HEADER);
    for m in chosen.iter().take(HEADLINE_ROWS) {
        t.add_row(spread_row(m));
    }
    let more = chosen.len().saturating_sub(HEADLINE_ROWS);
    let tail = match more {
        0 => String::new(),
        n => format!("\n{n} more headline metric(s); "),
    };
    format!(
        "Spread of the headline metrics (every metric with an outlier, then one per \
         experiment):\n{t}{tail}{} metrics in all: --format markdown lists every one.",
        doc.metrics.len()
    )
}

/// A large fleet's hosts, counted per CPU model and per kernel.
fn roll_call(doc: &FleetDocument) -> String {
    let cpus = counts(doc, |h| h.cpu_model.as_str());
    let kernels = counts(doc, |h| h.kernel.as_str());
    format!(
        "\nHosts: {} ({} CPU model(s), {} kernel(s)).\n  CPU models: {}\n  kernels: {}\n",
        doc.hosts.len(),
        cpus.len(),
        kernels.len(),
        counts_line(&cpus, 4),
        counts_line(&kernels, 4)
    )
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
