//! OpenMetrics / Prometheus text exposition of one run (`sysmeter export --openmetrics`),
//! written to be dropped into node_exporter's textfile collector directory.
//!
//! Layout (every sample carries `host` and `run` labels):
//! - `sysmeter_run_info{kind,tool_version,profile,cpu_model,kernel} 1` and
//!   `sysmeter_run_start_time_seconds`;
//! - `sysmeter_experiment_status{experiment,status} 1` for every experiment;
//! - one `summary` family per unit for the metrics, with `quantile` 0.05/0.5/0.95/0.99 plus
//!   `_sum` and `_count` over the samples: `sysmeter_latency_seconds` (times, converted from
//!   ns to the Prometheus base unit), `sysmeter_throughput_bytes_per_second`,
//!   `sysmeter_size_bytes`, `sysmeter_value` (counts and ratios); gauges `…_ci95_low_…`/`…_ci95_high_…` with the
//!   bootstrap CI of the median;
//! - the same per unit for curve points (`sysmeter_curve_latency_seconds{series,x,x_unit}`);
//! - `sysmeter_finding_value{experiment,finding}` for findings that carry a number.
//!
//! Only what both formats accept is used (no `# UNIT`, no timestamps, no `_created`), so the
//! text parses as Prometheus 0.0.4 and as OpenMetrics 1.0; it ends with `# EOF`. Label values
//! escape `\`, `"` and newlines; HELP text escapes `\` and newlines.
//!
//! Pure: a string from the record; no I/O.

use crate::model::{ExperimentResult, RunRecord, Summary, Unit};

/// Renders `run` in the OpenMetrics text format (also valid Prometheus text format).
pub fn render(run: &RunRecord) -> String {
    let base = vec![("host", run.host.hostname.clone()), ("run", run.id.clone())];
    let mut families = vec![
        run_info(run, &base),
        start_time(run, &base),
        statuses(run, &base),
    ];
    for unit in [Unit::Ns, Unit::BytesPerSec, Unit::Bytes, Unit::Count] {
        families.extend(metric_families(run, &base, unit));
    }
    for unit in [Unit::Ns, Unit::BytesPerSec, Unit::Bytes, Unit::Count] {
        families.extend(curve_families(run, &base, unit));
    }
    families.push(findings(run, &base));
    let mut out: String = families.iter().map(Family::text).collect();
    out.push_str("# EOF\n");
    out
}

/// Labels of one sample, in output order.
type Labels = Vec<(&'static str, String)>;

/// One metric family: its metadata and sample lines, printed only when it has samples.
struct Family {
    name: String,
    kind: &'static str,
    help: String,
    lines: Vec<String>,
}

impl Family {
    fn new(name: impl Into<String>, kind: &'static str, help: impl Into<String>) -> Family {
        Family {
            name: name.into(),
            kind,
            help: help.into(),
            lines: Vec::new(),
        }
    }

    /// Adds the sample `name{labels} value` (`suffix` appended to the family name).
    fn sample(&mut self, suffix: &str, labels: &Labels, value: f64) {
        self.scaled_sample(suffix, labels, value, 0);
    }

    /// Adds a sample whose value is `value × 10^exp10`.
    fn scaled_sample(&mut self, suffix: &str, labels: &Labels, value: f64, exp10: i32) {
        self.lines.push(format!(
            "{}{suffix}{} {}\n",
            self.name,
            label_set(labels),
            scaled_number(value, exp10)
        ));
    }

    fn text(&self) -> String {
        if self.lines.is_empty() {
            return String::new();
        }
        let mut s = format!(
            "# HELP {} {}\n# TYPE {} {}\n",
            self.name,
            escape_help(&self.help),
            self.name,
            self.kind
        );
        s.extend(self.lines.iter().map(String::as_str));
        s
    }
}

/// Family name stem, the power of ten from the stored unit to the exported one, and what it
/// measures.
fn unit_naming(unit: Unit) -> (&'static str, i32, &'static str) {
    match unit {
        Unit::Ns => ("latency_seconds", -9, "Time per operation, seconds"),
        Unit::BytesPerSec => (
            "throughput_bytes_per_second",
            0,
            "Throughput, bytes per second",
        ),
        Unit::Bytes => ("size_bytes", 0, "Size, bytes"),
        // Not `count`: the summary's own `_count` sample would read `sysmeter_count_count`.
        Unit::Count => ("value", 0, "Count or ratio"),
    }
}

fn run_info(run: &RunRecord, base: &Labels) -> Family {
    let mut f = Family::new(
        "sysmeter_run_info",
        "gauge",
        "The sysmeter run these metrics come from (always 1).",
    );
    let mut labels = base.clone();
    labels.extend([
        ("kind", run.kind.as_str().to_string()),
        ("tool_version", run.tool_version.clone()),
        ("profile", run.config.profile.clone()),
        ("cpu_model", run.host.cpu.model.clone()),
        ("kernel", run.host.kernel.clone()),
    ]);
    f.sample("", &labels, 1.0);
    f
}

fn start_time(run: &RunRecord, base: &Labels) -> Family {
    let mut f = Family::new(
        "sysmeter_run_start_time_seconds",
        "gauge",
        "When the run started, seconds since the Unix epoch.",
    );
    f.sample("", base, run.started_ns as f64 / 1e9);
    f
}

fn statuses(run: &RunRecord, base: &Labels) -> Family {
    per_experiment_gauge(
        run,
        base,
        (
            "sysmeter_experiment_status",
            "Outcome of each experiment: 1 for its status (ok, skipped or failed).",
        ),
        |r| vec![(("status", r.status.as_str().to_string()), 1.0)],
    )
}

/// A gauge family `(name, help)` with the samples `of` each experiment: a label beside the
/// experiment's, and the value.
fn per_experiment_gauge(
    run: &RunRecord,
    base: &Labels,
    (name, help): (&str, &str),
    of: impl Fn(&ExperimentResult) -> Vec<((&'static str, String), f64)>,
) -> Family {
    let mut f = Family::new(name, "gauge", help);
    for r in &run.results {
        for (label, value) in of(r) {
            f.sample("", &of_experiment(base, r, [label]), value);
        }
    }
    f
}

/// Adds a summary's quantiles, sum and count to `f`, and its CI bounds to `lo`/`hi`.
fn summary_samples(families: &mut [Family; 3], labels: &Labels, s: &Summary, exp10: i32) {
    let [f, lo, hi] = families;
    for (q, v) in [
        ("0.05", s.p5),
        ("0.5", s.median),
        ("0.95", s.p95),
        ("0.99", s.p99),
    ] {
        let mut with_q = labels.clone();
        with_q.push(("quantile", q.to_string()));
        f.scaled_sample("", &with_q, v, exp10);
    }
    f.scaled_sample("_sum", labels, s.mean * s.n as f64, exp10);
    f.sample("_count", labels, s.n as f64);
    lo.scaled_sample("", labels, s.ci95.0, exp10);
    hi.scaled_sample("", labels, s.ci95.1, exp10);
}

/// The summary family and CI gauges for metrics (`prefix` "") or curves (`"curve_"`).
fn unit_families(prefix: &str, unit: Unit, what: &str) -> [Family; 3] {
    let (stem, _, help) = unit_naming(unit);
    let (measure, base_unit) = stem.split_once('_').unwrap_or((stem, ""));
    let name = format!("sysmeter_{prefix}{stem}");
    let bound = |side: &str, title: &str| {
        let suffix = if base_unit.is_empty() {
            String::new()
        } else {
            format!("_{base_unit}")
        };
        Family::new(
            format!("sysmeter_{prefix}{measure}_ci95_{side}{suffix}"),
            "gauge",
            format!(
                "{title} end of the within-run bootstrap 95% CI of the median of sysmeter_{prefix}{stem}."
            ),
        )
    };
    [
        Family::new(
            name,
            "summary",
            format!("{help} ({what}), quantiles over the samples."),
        ),
        bound("low", "Low"),
        bound("high", "High"),
    ]
}

fn metric_families(run: &RunRecord, base: &Labels, unit: Unit) -> [Family; 3] {
    let mut families = unit_families("", unit, "one sysmeter metric");
    let (_, exp10, _) = unit_naming(unit);
    for r in &run.results {
        for m in r.metrics.iter().filter(|m| m.unit == unit) {
            let labels = of_experiment(base, r, [("metric", m.name.clone())]);
            summary_samples(&mut families, &labels, &m.summary, exp10);
        }
    }
    families
}

fn curve_families(run: &RunRecord, base: &Labels, unit: Unit) -> [Family; 3] {
    let mut families = unit_families("curve_", unit, "one point of a sysmeter curve");
    let (_, exp10, _) = unit_naming(unit);
    for r in &run.results {
        for series in r.series.iter().filter(|s| s.y_unit == unit) {
            for p in &series.points {
                let labels = of_experiment(
                    base,
                    r,
                    [
                        ("series", series.name.clone()),
                        ("x", number(p.x)),
                        ("x_unit", series.x_unit.as_str().to_string()),
                    ],
                );
                summary_samples(&mut families, &labels, &p.summary, exp10);
            }
        }
    }
    families
}

fn findings(run: &RunRecord, base: &Labels) -> Family {
    per_experiment_gauge(
        run,
        base,
        (
            "sysmeter_finding_value",
            "The number behind a finding (a ratio, a detected size in bytes, ...).",
        ),
        |r| {
            let valued = r.findings.iter().filter_map(|f| Some((f, f.value?)));
            valued
                .map(|(f, v)| (("finding", f.key.clone()), v))
                .collect()
        },
    )
}

/// The run's labels `base`, then the experiment `r`'s id, then `more`.
fn of_experiment<const N: usize>(
    base: &Labels,
    r: &ExperimentResult,
    more: [(&'static str, String); N],
) -> Labels {
    let mut labels = base.clone();
    labels.push(("experiment", r.id.clone()));
    labels.extend(more);
    labels
}

/// `{a="x",b="y"}`, or nothing for no labels.
fn label_set(labels: &Labels) -> String {
    if labels.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// Escapes a label value: backslash, double quote and line feed.
pub fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Escapes HELP text: backslash and line feed.
fn escape_help(text: &str) -> String {
    text.replace('\\', "\\\\").replace('\n', "\\n")
}

/// `x × 10^exp10` written by shifting the exponent of `x`'s shortest decimal form, so a
/// stored 51.3 ns is exactly `5.13e-8` s (multiplying by 1e-9 in binary would print
/// `5.1299999999999996e-8`).
fn scaled_number(x: f64, exp10: i32) -> String {
    if exp10 == 0 || !x.is_finite() || x == 0.0 {
        return number(x);
    }
    let text = format!("{x:e}");
    match text.split_once('e').map(|(m, e)| (m, e.parse::<i32>())) {
        Some((mantissa, Ok(e))) => format!("{mantissa}e{}", e + exp10),
        _ => number(x * 10f64.powi(exp10)),
    }
}

/// A sample or label value: whole numbers as integers (`12`, `16384`: counts must read as
/// integers), else the shortest round-trip form (`5.13e-8`), or `NaN`, `+Inf`, `-Inf`.
pub fn number(x: f64) -> String {
    if x.is_nan() {
        "NaN".to_string()
    } else if x.is_infinite() {
        if x > 0.0 { "+Inf" } else { "-Inf" }.to_string()
    } else if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{x:.0}")
    } else {
        // Debug switches to exponent notation for very small and large values and always
        // keeps a decimal point or exponent, which both formats accept.
        format!("{x:?}")
    }
}

#[cfg(test)]
mod tests;
