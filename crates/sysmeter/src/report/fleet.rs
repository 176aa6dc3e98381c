//! Rendering of `sysmeter fleet`: a [`FleetView`] (each host's latest bench run, reduced per
//! metric by `stats::fleet`) as terminal text, Markdown, JSON or one HTML page. Every format
//! starts from one [`FleetDocument`] — the JSON of docs/json-schema.md — so they say the
//! same, at any size, answer first: what the outliers share in one sentence per group
//! (`shared.rs`: "All 4 outliers run kernel 6.11.0-9-generic; …"), the outliers by host
//! (the JSON keeps each outlier's machine differences from the host nearest the fleet
//! median, what `compare` lists), then the spread per metric (fleet median, p10–p90, and up to 50 hosts each
//! host's value and percentile), and the roll call of the hosts last (`shape.rs` decides
//! what a large fleet shows).
//!
//! Pure: the view and the hosts' descriptions in, a string out; never queries the database.

mod html;
mod markdown;
mod shape;
mod shared;
#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod tests_scale;
mod text;

use serde::{Deserialize, Serialize};

use super::ReportError;
use super::compare_text::machine_differences;
use super::text::timestamp;
use crate::model::{FleetHost, Unit};
use crate::stats::fleet::{FleetMetric, FleetView, HostValue, MADS, MIN_FACTOR, MIN_HOSTS};
pub use shared::{OutlierGroup, SharedField};

/// Version of the `fleet --format json` document (docs/json-schema.md).
pub const FLEET_SCHEMA: u32 = 1;

/// Over which hosts every fleet page's p10–p90 is taken, said where the band is explained:
/// every host that measured the metric, the outliers too (the PostgreSQL reduction takes
/// them over all hosts as well). A few outliers barely move a percentile band, but in a
/// small fleet they do (5 hosts, one twice as slow: p90 161 ns beside 97–103 ns).
pub const BAND_OVER: &str = "over every host that measured it, outliers included";

/// Output format of `sysmeter fleet`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FleetFormat {
    /// Terminal tables (the default).
    #[default]
    Text,
    /// One JSON document (documented in docs/json-schema.md).
    Json,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One self-contained HTML page with a chart per headline metric.
    Html,
}

/// The fleet as one document (the JSON output; the other formats render it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetDocument {
    /// [`FLEET_SCHEMA`].
    pub schema: u32,
    /// The machines, by host name.
    pub hosts: Vec<HostDoc>,
    /// The outlier rule's parameters.
    pub outlier_rule: OutlierRule,
    /// Every (host, metric) outlier, farthest from the fleet median first.
    pub outliers: Vec<Outlier>,
    /// The outlier hosts grouped by the machine fields they share and the other hosts mostly
    /// lack (`shared.rs`), largest group first.
    #[serde(default)]
    pub outlier_groups: Vec<OutlierGroup>,
    /// Every metric, by experiment and name.
    pub metrics: Vec<MetricDoc>,
}

/// One machine and the run it is represented by.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostDoc {
    /// Host name.
    pub host: String,
    /// Its latest bench run.
    pub run_id: String,
    /// When that run started (RFC 3339, UTC).
    pub started: String,
    /// CPU model.
    pub cpu_model: String,
    /// Kernel release.
    pub kernel: String,
}

/// The parameters of `stats::fleet`'s outlier rule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutlierRule {
    /// Fewest hosts a metric needs before one is called an outlier.
    pub min_hosts: usize,
    /// Least factor from the fleet median.
    pub min_factor: f64,
    /// Least distance from the fleet median in robust standard deviations of the logs.
    pub robust_sds: f64,
}

/// One host standing out in one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outlier {
    /// Host name.
    pub host: String,
    /// Experiment id.
    pub experiment: String,
    /// Metric name.
    pub metric: String,
    /// Unit of `value` and `fleet_median`.
    pub unit: Unit,
    /// The host's value (the metric's median in its latest run).
    pub value: f64,
    /// The fleet's median.
    pub fleet_median: f64,
    /// value / fleet_median.
    pub ratio: Option<f64>,
    /// The host nearest the fleet median, which the differences are taken against.
    pub compared_with: Option<String>,
    /// What differs between that host's machine and this one (as `compare` lists it).
    pub differences: Vec<MachineDifference>,
}

/// A machine field that differs between the typical host and the outlier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineDifference {
    /// What differs (`kernel`, `CPU model`, `mitigation spectre_v2`, …).
    pub field: String,
    /// The value on the host nearest the fleet median.
    pub typical: String,
    /// The value on the outlier.
    pub host: String,
}

/// One metric across the fleet.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricDoc {
    /// Experiment id.
    pub experiment: String,
    /// Metric name.
    pub metric: String,
    /// Unit of every value.
    pub unit: Unit,
    /// The fleet's median.
    pub fleet_median: f64,
    /// The fleet's 10th percentile.
    pub p10: f64,
    /// The fleet's 90th percentile.
    pub p90: f64,
    /// How many hosts measured it.
    #[serde(default)]
    pub hosts_measured: usize,
    /// Each host's value, by host name; beyond 50 hosts (`ROLL_CALL_HOSTS`) on PostgreSQL,
    /// only the outliers and the host nearest the median.
    pub hosts: Vec<HostValueDoc>,
}

/// One host's value of a metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostValueDoc {
    /// Host name.
    pub host: String,
    /// The metric's median in the host's latest run.
    pub value: f64,
    /// Share of the other hosts with a lower value, in percent (ties count half).
    pub percentile: f64,
    /// Whether the host is an outlier of this metric.
    pub outlier: bool,
}

/// Builds the document of `view` over `hosts`.
pub fn document(view: &FleetView, hosts: &[FleetHost]) -> FleetDocument {
    let outliers = view.outliers();
    let mut outlier_hosts: Vec<&str> = Vec::new();
    for (_, h) in &outliers {
        if !outlier_hosts.contains(&h.hostname.as_str()) {
            outlier_hosts.push(&h.hostname);
        }
    }
    FleetDocument {
        schema: FLEET_SCHEMA,
        hosts: hosts
            .iter()
            .map(|h| HostDoc {
                host: h.hostname.clone(),
                run_id: h.run_id.clone(),
                started: timestamp(h.started_ns),
                cpu_model: h.host.cpu.model.clone(),
                kernel: h.host.kernel.clone(),
            })
            .collect(),
        outlier_rule: OutlierRule {
            min_hosts: MIN_HOSTS,
            min_factor: MIN_FACTOR,
            robust_sds: MADS,
        },
        outlier_groups: shared::outlier_groups(&outlier_hosts, hosts),
        outliers: (outliers.iter())
            .map(|(m, h)| outlier(m, h, hosts))
            .collect(),
        metrics: view.metrics.iter().map(metric_doc).collect(),
    }
}

fn outlier(m: &FleetMetric, h: &HostValue, hosts: &[FleetHost]) -> Outlier {
    let typical = m.typical_host(&h.hostname);
    let machine = |name: &str| hosts.iter().find(|x| x.hostname == name).map(|x| &x.host);
    let differences = match (
        typical.and_then(|t| machine(&t.hostname)),
        machine(&h.hostname),
    ) {
        (Some(a), Some(b)) => machine_differences(a, b)
            .into_iter()
            .filter(|d| d.field != "host name")
            .map(|d| MachineDifference {
                field: d.field,
                typical: d.a,
                host: d.b,
            })
            .collect(),
        _ => Vec::new(),
    };
    Outlier {
        host: h.hostname.clone(),
        experiment: m.experiment.clone(),
        metric: m.metric.clone(),
        unit: m.unit,
        value: h.value,
        fleet_median: m.spread.median,
        ratio: h.ratio,
        compared_with: typical.map(|t| t.hostname.clone()),
        differences,
    }
}

fn metric_doc(m: &FleetMetric) -> MetricDoc {
    MetricDoc {
        experiment: m.experiment.clone(),
        metric: m.metric.clone(),
        unit: m.unit,
        fleet_median: m.spread.median,
        p10: m.spread.p10,
        p90: m.spread.p90,
        hosts_measured: m.spread.hosts,
        hosts: m
            .hosts
            .iter()
            .map(|h| HostValueDoc {
                host: h.hostname.clone(),
                value: h.value,
                percentile: h.percentile,
                outlier: h.outlier,
            })
            .collect(),
    }
}

/// Renders the fleet in `format`.
pub fn render(
    view: &FleetView,
    hosts: &[FleetHost],
    format: FleetFormat,
) -> Result<String, ReportError> {
    let doc = document(view, hosts);
    match format {
        FleetFormat::Json => serde_json::to_string_pretty(&doc)
            .map(|s| s + "\n")
            .map_err(|source| ReportError::Json {
                run: "fleet".to_string(),
                source,
            }),
        FleetFormat::Text => Ok(text::render(&doc)),
        FleetFormat::Markdown => Ok(markdown::render(&doc)),
        FleetFormat::Html => Ok(html::render(&doc)),
    }
}

/// `2.00× the fleet median 190 ns`: how far `o` is, for people.
fn how_far(o: &Outlier) -> String {
    let median = crate::model::units::value(o.fleet_median, o.unit);
    match o.ratio {
        Some(r) => format!(
            "{}× the fleet median {median}",
            crate::model::units::sig3(r)
        ),
        None => format!("fleet median {median}"),
    }
}

/// The outliers grouped by host, hosts in the order of their farthest outlier.
fn by_host(doc: &FleetDocument) -> Vec<Vec<&Outlier>> {
    let mut groups: Vec<Vec<&Outlier>> = Vec::new();
    for o in &doc.outliers {
        match groups.iter_mut().find(|g| g[0].host == o.host) {
            Some(g) => g.push(o),
            None => groups.push(vec![o]),
        }
    }
    groups
}

/// What the outliers share, in sentences: the one wording every format prints.
fn shared_sentences(doc: &FleetDocument) -> Vec<String> {
    shared::sentences(&doc.outlier_groups, by_host(doc).len())
}

/// The metrics table's header: four fixed columns, then one per host.
fn metrics_header(doc: &FleetDocument) -> Vec<String> {
    let mut header: Vec<String> = ["experiment", "metric", "fleet median", "p10–p90"]
        .map(String::from)
        .to_vec();
    header.extend(doc.hosts.iter().map(|h| h.host.clone()));
    header
}

/// One metric's row of the metrics table as text: the four fixed cells, then each host's
/// [`host_cell`] (`-` for a host without the metric).
fn metric_row(m: &MetricDoc, doc: &FleetDocument) -> Vec<String> {
    let mut row = vec![
        m.experiment.clone(),
        m.metric.clone(),
        crate::model::units::value(m.fleet_median, m.unit),
        crate::model::units::range(m.p10, m.p90, m.unit),
    ];
    for h in &doc.hosts {
        let cell = m.hosts.iter().find(|v| v.host == h.host);
        row.push(cell.map_or("-".to_string(), |v| host_cell(v, m.unit)));
    }
    row
}

/// `host 190 ns (p50)`, with `!` on an outlier.
fn host_cell(h: &HostValueDoc, unit: Unit) -> String {
    let mark = if h.outlier { " !" } else { "" };
    format!(
        "{} (p{}){mark}",
        crate::model::units::value(h.value, unit),
        crate::model::units::count(h.percentile.round())
    )
}
