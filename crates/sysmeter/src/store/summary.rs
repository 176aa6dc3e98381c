//! A result stored as its summary — the default of a fleet store (PostgreSQL), where every
//! machine's runs gather and a run must stay small (docs/fleet.md: at most 64 KB). What a
//! report, `history`, the run-to-run intervals and `fleet` need is kept; what only a
//! re-analysis needs is not:
//!
//! - kept: every metric's statistics, its rounds, its degenerate mark, its cycles (as the
//!   factor from ns to cycles, which is the same for every statistic), the findings, the
//!   estimates, the artifacts, the machine state, the experiment's title; each series
//!   point's x, n, median and 95% interval;
//! - dropped: the raw samples, the description of the experiment — what it measures, its
//!   methodology and references, the same for every run of one version (`sysmeter list`,
//!   docs/experiments.md) — and the other statistics of series points (NaN when read back);
//! - every number rounded to [`DIGITS`] significant digits (the intervals of a bench are
//!   ~1% wide), then the whole zlib-compressed into `results.summary`.
//!
//! Such a result has no `metrics` rows; its metrics' names, units and medians go to the
//! `results.metric_names`, `metric_units` and `medians` arrays, which the fleet's SQL reads.
//! `bench --with-samples` and `import --with-samples` store the whole record instead.

use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::ZlibDecoder;
use flate2::write::ZlibEncoder;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{
    About, ExperimentResult, Metric, RoundStats, Series, SeriesPoint, SessionEnd, Status, Summary,
    Unit,
};

/// Significant digits every stored number keeps.
pub const DIGITS: usize = 4;

/// The stored summary of one result (its id, status, skip, error and elapsed time stay in
/// their own columns).
#[derive(Serialize, Deserialize)]
struct Slim {
    title: String,
    estimates: Value,
    findings: Value,
    artifacts: Value,
    machine: Value,
    round_machines: Value,
    /// The session's end of a diagnosis (absent in older summaries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<SessionEnd>,
    metrics: Vec<SlimMetric>,
    series: Vec<SlimSeries>,
}

#[derive(Serialize, Deserialize)]
struct SlimMetric {
    name: String,
    unit: Unit,
    /// The summary as [`stats_row`] writes it (no field names: they would repeat per metric).
    summary: [Option<f64>; 13],
    /// cycles / value of the `cycles` summary (the TSC rate for a time).
    cycles: Option<f64>,
    /// core cycles / value of the `core_cycles` summary.
    core_cycles: Option<f64>,
    subtracted_overhead_ns: Option<f64>,
    ops_per_sample: u64,
    note: Option<String>,
    rounds: Option<RoundStats>,
    degenerate: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    at_least: bool,
}

#[derive(Serialize, Deserialize)]
struct SlimSeries {
    name: String,
    x_label: String,
    x_unit: Unit,
    y_unit: Unit,
    /// cycles / value of the points that had cycles.
    cycles: Option<f64>,
    /// x, n, median, ci95 low, ci95 high.
    points: Vec<[f64; 5]>,
}

/// The `summary` column of `r`: compressed, rounded JSON.
pub(super) fn encode(r: &ExperimentResult) -> Result<Vec<u8>, String> {
    let slim = Slim {
        title: r.about.title.clone(),
        estimates: json(&r.estimates)?,
        findings: json(&r.findings)?,
        artifacts: json(&r.artifacts)?,
        machine: json(&r.machine)?,
        round_machines: json(&r.round_machines)?,
        session: r.session.clone(),
        metrics: r.metrics.iter().map(slim_metric).collect(),
        series: r.series.iter().map(slim_series).collect(),
    };
    let mut value = serde_json::to_value(&slim).map_err(|e| e.to_string())?;
    round(&mut value);
    let text = serde_json::to_vec(&value).map_err(|e| e.to_string())?;
    let mut z = ZlibEncoder::new(Vec::new(), Compression::best());
    z.write_all(&text).map_err(|e| e.to_string())?;
    z.finish().map_err(|e| e.to_string())
}

/// The result stored in a `summary` column; its id, status, skip, error and elapsed time,
/// which live in their own columns, are left for the caller to fill.
pub(super) fn decode(blob: &[u8]) -> Result<ExperimentResult, String> {
    let mut text = Vec::new();
    ZlibDecoder::new(blob)
        .read_to_end(&mut text)
        .map_err(|e| format!("not zlib data: {e}"))?;
    let slim: Slim = serde_json::from_slice(&text).map_err(|e| e.to_string())?;
    Ok(ExperimentResult {
        id: String::new(),
        status: Status::Ok,
        about: About {
            title: slim.title,
            measures: String::new(),
            methodology: String::new(),
            references: Vec::new(),
        },
        estimates: from(slim.estimates)?,
        metrics: slim.metrics.into_iter().map(metric).collect(),
        series: slim.series.into_iter().map(series).collect(),
        findings: from(slim.findings)?,
        skip: None,
        error: None,
        elapsed_ns: 0,
        artifacts: from(slim.artifacts)?,
        machine: from(slim.machine)?,
        round_machines: from(slim.round_machines)?,
        session: slim.session,
    })
}

/// The names, units and medians (`None` for NaN) of `r`'s metrics, in order.
pub(super) fn medians(r: &ExperimentResult) -> super::rows::Medians {
    let m = &r.metrics;
    (
        m.iter().map(|m| m.name.clone()).collect(),
        m.iter().map(|m| m.unit.as_str().to_string()).collect(),
        m.iter()
            .map(|m| Some(m.summary.median).filter(|x| !x.is_nan()))
            .collect(),
    )
}

fn from<T: serde::de::DeserializeOwned>(v: Value) -> Result<T, String> {
    serde_json::from_value(v).map_err(|e| e.to_string())
}

fn json<T: Serialize>(v: &T) -> Result<Value, String> {
    serde_json::to_value(v).map_err(|e| e.to_string())
}

/// `other`'s statistics over `of`'s, when `of`'s median is a usable divisor.
fn factor(other: Option<&Summary>, of: &Summary) -> Option<f64> {
    let o = other?;
    (of.median.is_finite() && of.median != 0.0).then(|| o.median / of.median)
}

fn slim_metric(m: &Metric) -> SlimMetric {
    SlimMetric {
        name: m.name.clone(),
        unit: m.unit,
        summary: stats_row(&m.summary),
        cycles: factor(m.cycles.as_ref(), &m.summary),
        core_cycles: factor(m.core_cycles.as_ref(), &m.summary),
        subtracted_overhead_ns: Some(m.subtracted_overhead_ns).filter(|x| !x.is_nan()),
        ops_per_sample: m.ops_per_sample,
        note: m.note.clone(),
        rounds: m.rounds.clone(),
        degenerate: m.degenerate.clone(),
        at_least: m.at_least,
    }
}

fn metric(s: SlimMetric) -> Metric {
    let summary = from_stats_row(&s.summary);
    Metric {
        cycles: s.cycles.map(|k| summary.scaled(k)),
        core_cycles: s.core_cycles.map(|k| summary.scaled(k)),
        name: s.name,
        unit: s.unit,
        summary,
        subtracted_overhead_ns: s.subtracted_overhead_ns.unwrap_or(f64::NAN),
        ops_per_sample: s.ops_per_sample,
        note: s.note,
        samples: Vec::new(),
        rounds: s.rounds,
        degenerate: s.degenerate,
        at_least: s.at_least,
        run_to_run: None,
    }
}

fn slim_series(s: &Series) -> SlimSeries {
    let cycles = s
        .points
        .iter()
        .find_map(|p| factor(p.cycles.as_ref(), &p.summary));
    SlimSeries {
        name: s.name.clone(),
        x_label: s.x_label.clone(),
        x_unit: s.x_unit,
        y_unit: s.y_unit,
        cycles,
        points: (s.points.iter())
            .map(|p| {
                let m = &p.summary;
                [p.x, m.n as f64, m.median, m.ci95.0, m.ci95.1]
            })
            .collect(),
    }
}

fn series(s: SlimSeries) -> Series {
    let points = (s.points.iter())
        .map(|[x, n, median, lo, hi]| {
            let summary = Summary {
                n: *n as usize,
                median: *median,
                ci95: (*lo, *hi),
                p5: f64::NAN,
                p95: f64::NAN,
                min: f64::NAN,
                mean: f64::NAN,
                p99: f64::NAN,
                max: f64::NAN,
                stddev: f64::NAN,
                cv: f64::NAN,
                outliers: 0,
            };
            SeriesPoint {
                x: *x,
                cycles: s.cycles.map(|k| summary.scaled(k)),
                summary,
            }
        })
        .collect();
    Series {
        name: s.name,
        x_label: s.x_label,
        x_unit: s.x_unit,
        y_unit: s.y_unit,
        points,
    }
}

/// n, min, p5, median, mean, p95, p99, max, stddev, cv, ci95 low and high, outliers; NaN
/// as `None`.
fn stats_row(s: &Summary) -> [Option<f64>; 13] {
    [
        s.n as f64,
        s.min,
        s.p5,
        s.median,
        s.mean,
        s.p95,
        s.p99,
        s.max,
        s.stddev,
        s.cv,
        s.ci95.0,
        s.ci95.1,
        s.outliers as f64,
    ]
    .map(|x| Some(x).filter(|x| !x.is_nan()))
}

/// Inverse of [`stats_row`].
fn from_stats_row(row: &[Option<f64>; 13]) -> Summary {
    let v = row.map(|x| x.unwrap_or(f64::NAN));
    Summary {
        n: v[0] as usize,
        min: v[1],
        p5: v[2],
        median: v[3],
        mean: v[4],
        p95: v[5],
        p99: v[6],
        max: v[7],
        stddev: v[8],
        cv: v[9],
        ci95: (v[10], v[11]),
        outliers: v[12] as usize,
    }
}

/// Rounds every non-integer number of `v` to [`DIGITS`] significant digits.
fn round(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            if let Some(x) = n.as_f64().filter(|x| x.is_finite() && *x != 0.0) {
                let r: f64 = format!("{x:.*e}", DIGITS - 1).parse().unwrap_or(x);
                if let Some(r) = serde_json::Number::from_f64(r) {
                    *n = r;
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(round),
        Value::Object(fields) => fields.values_mut().for_each(round),
        _ => {}
    }
}

#[cfg(test)]
mod tests;
