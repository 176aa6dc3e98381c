//! What every fleet format shows at any size, decided once: the headline metrics (every
//! metric with an outlier, most outliers first, then the first metric of each other
//! experiment), whether the fleet is small enough for a column per host
//! ([`ROLL_CALL_HOSTS`]), and the roll call of a larger fleet summarised as counts per CPU
//! model and per kernel; the columns and rows of the spread table text and Markdown share.
//!
//! Pure: a [`FleetDocument`] in, references into it out.

use std::collections::{BTreeMap, BTreeSet};

use super::{FleetDocument, MetricDoc};
use crate::model::{ROLL_CALL_HOSTS, units};

/// Whether every host gets its own column and row (at most [`ROLL_CALL_HOSTS`] hosts).
pub(super) fn per_host(doc: &FleetDocument) -> bool {
    doc.hosts.len() <= ROLL_CALL_HOSTS
}

/// How many of `m`'s hosts are outliers.
pub(super) fn outliers_in(m: &MetricDoc) -> usize {
    m.hosts.iter().filter(|h| h.outlier).count()
}

/// The headline metrics: those with an outlier (most first), then the first metric of each
/// experiment not yet covered.
pub(super) fn headline(doc: &FleetDocument) -> Vec<&MetricDoc> {
    let mut chosen: Vec<&MetricDoc> = doc.metrics.iter().filter(|m| outliers_in(m) > 0).collect();
    chosen.sort_by_key(|m| std::cmp::Reverse(outliers_in(m)));
    let mut covered: BTreeSet<&str> = chosen.iter().map(|m| m.experiment.as_str()).collect();
    for m in &doc.metrics {
        if covered.insert(&m.experiment) {
            chosen.push(m);
        }
    }
    chosen
}

/// The hosts counted per value of `field` (CPU model, kernel), most common first.
pub(super) fn counts<'a>(
    doc: &'a FleetDocument,
    field: impl Fn(&'a super::HostDoc) -> &'a str,
) -> Vec<(&'a str, usize)> {
    let mut by: BTreeMap<&str, usize> = BTreeMap::new();
    for h in &doc.hosts {
        *by.entry(field(h)).or_default() += 1;
    }
    let mut list: Vec<(&str, usize)> = by.into_iter().collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    list
}

/// `12 × Intel Xeon 8480, 3 × AMD EPYC 9654, and 4 others (5 hosts)`: the first `shown`
/// counts in words.
pub(super) fn counts_line(list: &[(&str, usize)], shown: usize) -> String {
    let mut parts: Vec<String> = list
        .iter()
        .take(shown)
        .map(|(what, n)| format!("{n} × {}", if what.is_empty() { "unknown" } else { what }))
        .collect();
    if list.len() > shown {
        let rest: usize = list[shown..].iter().map(|(_, n)| n).sum();
        parts.push(format!("{} others ({rest} hosts)", list.len() - shown));
    }
    parts.join(", ")
}

/// The columns of the spread table, in text and Markdown alike.
pub(super) const SPREAD_HEADER: [&str; 6] = [
    "experiment",
    "metric",
    "hosts",
    "fleet median",
    "p10–p90",
    "outliers",
];

/// One metric's row of the spread table.
pub(super) fn spread_row(m: &MetricDoc) -> [String; 6] {
    [
        m.experiment.clone(),
        m.metric.clone(),
        units::count(m.hosts_measured as f64),
        units::value(m.fleet_median, m.unit),
        units::range(m.p10, m.p90, m.unit),
        units::count(outliers_in(m) as f64),
    ]
}
