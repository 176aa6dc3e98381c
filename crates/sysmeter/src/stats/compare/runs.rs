//! Comparing two whole runs: match metrics by experiment id and metric name, compare every
//! shared one with [`compare_samples`], and list what only one side has.
//!
//! Pure: works on two [`RunRecord`]s already loaded (from the store or from JSON files);
//! never opens anything. Machine and configuration differences are a presentation matter
//! and live in `report::compare_text`.

use serde::{Deserialize, Serialize};

use super::{CompareOptions, Direction, SampleComparison, Verdict, compare_samples};
use crate::model::{ExperimentResult, Metric, RunKind, RunRecord, Status, Unit};

/// Identity of one side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSide {
    /// Run id.
    pub id: String,
    /// What produced it.
    pub kind: RunKind,
    /// Start, ns since the epoch.
    pub started_ns: i64,
    /// Host name of the machine.
    pub hostname: String,
    /// sysmeter version that measured it.
    pub tool_version: String,
    /// Profile (`quick`, `default`, `thorough`).
    pub profile: String,
}

impl RunSide {
    fn of(run: &RunRecord) -> RunSide {
        RunSide {
            id: run.id.clone(),
            kind: run.kind,
            started_ns: run.started_ns,
            hostname: run.host.hostname.clone(),
            tool_version: run.tool_version.clone(),
            profile: run.config.profile.clone(),
        }
    }
}

/// One metric both runs have.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetricComparison {
    /// Experiment id.
    pub experiment: String,
    /// Metric name.
    pub metric: String,
    /// Unit (B's; the units agree unless noted in `note`).
    pub unit: Unit,
    /// Which way is better.
    pub direction: Direction,
    /// The statistics; `None` when a side has no raw samples (see `note`).
    pub comparison: Option<SampleComparison>,
    /// Why the metric could not be compared, if it could not.
    pub note: Option<String>,
    /// Whether this metric fails `--fail-above` (always false without it).
    pub regression: bool,
}

impl MetricComparison {
    /// The verdict, `no change` when the metric could not be compared.
    pub fn verdict(&self) -> Verdict {
        self.comparison
            .as_ref()
            .map_or(Verdict::NoChange, |c| c.verdict)
    }
}

/// Something only one run has: a whole experiment (`metric == None`) or one metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unmatched {
    /// Experiment id.
    pub experiment: String,
    /// Metric name, `None` for the whole experiment.
    pub metric: Option<String>,
    /// Why the other side lacks it (e.g. `skipped in B: ...`), when known.
    pub note: Option<String>,
}

/// Two runs compared metric by metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    /// The baseline.
    pub a: RunSide,
    /// The candidate.
    pub b: RunSide,
    /// The settings used.
    pub options: CompareOptions,
    /// `--fail-above` as a fraction, if given.
    pub fail_above: Option<f64>,
    /// Every shared metric, in A's order.
    pub metrics: Vec<MetricComparison>,
    /// Experiments and metrics measured only in A.
    pub only_in_a: Vec<Unmatched>,
    /// Experiments and metrics measured only in B.
    pub only_in_b: Vec<Unmatched>,
}

impl RunComparison {
    /// Number of metrics with the given verdict.
    pub fn count(&self, verdict: Verdict) -> usize {
        self.metrics
            .iter()
            .filter(|m| m.verdict() == verdict)
            .count()
    }

    /// The metrics that fail `--fail-above`.
    pub fn regressions(&self) -> impl Iterator<Item = &MetricComparison> {
        self.metrics.iter().filter(|m| m.regression)
    }
}

/// Compares run `b` against baseline `a`. `fail_above` (a fraction) marks the metrics that
/// regressed beyond it (see [`SampleComparison::regressed_beyond`]).
pub fn compare_runs(
    a: &RunRecord,
    b: &RunRecord,
    opts: &CompareOptions,
    fail_above: Option<f64>,
) -> RunComparison {
    let mut metrics = Vec::new();
    let mut only_in_a = Vec::new();
    for ra in &a.results {
        let rb = b.results.iter().find(|r| r.id == ra.id);
        match rb {
            Some(rb) if ra.status == Status::Ok && rb.status == Status::Ok => {
                for ma in &ra.metrics {
                    match rb.metrics.iter().find(|m| m.name == ma.name) {
                        Some(mb) => metrics.push(compare_metric(&ra.id, ma, mb, opts, fail_above)),
                        None => only_in_a.push(unmatched_metric(&ra.id, ma)),
                    }
                }
            }
            _ if ra.status == Status::Ok && !ra.metrics.is_empty() => {
                only_in_a.push(unmatched_experiment(ra, rb, "B"));
            }
            _ => {}
        }
    }
    let only_in_b = only_in_b(a, b);
    RunComparison {
        a: RunSide::of(a),
        b: RunSide::of(b),
        options: *opts,
        fail_above,
        metrics,
        only_in_a,
        only_in_b,
    }
}

/// B's measured experiments and metrics that A has not measured.
fn only_in_b(a: &RunRecord, b: &RunRecord) -> Vec<Unmatched> {
    let mut out = Vec::new();
    for rb in b.results.iter().filter(|r| r.status == Status::Ok) {
        match a.results.iter().find(|r| r.id == rb.id) {
            Some(ra) if ra.status == Status::Ok => out.extend(
                rb.metrics
                    .iter()
                    .filter(|mb| !ra.metrics.iter().any(|ma| ma.name == mb.name))
                    .map(|mb| unmatched_metric(&rb.id, mb)),
            ),
            other if !rb.metrics.is_empty() => out.push(unmatched_experiment(rb, other, "A")),
            _ => {}
        }
    }
    out
}

fn unmatched_metric(experiment: &str, m: &Metric) -> Unmatched {
    Unmatched {
        experiment: experiment.to_string(),
        metric: Some(m.name.clone()),
        note: None,
    }
}

/// An experiment measured on one side; `other` is the other side's result, if any.
fn unmatched_experiment(
    measured: &ExperimentResult,
    other: Option<&ExperimentResult>,
    other_side: &str,
) -> Unmatched {
    let note = other.map(|o| match (&o.skip, &o.error) {
        (Some(skip), _) => format!("skipped in {other_side}: {}", skip.reason),
        (None, Some(error)) => format!("failed in {other_side}: {error}"),
        (None, None) => format!("{} in {other_side}", o.status.as_str()),
    });
    Unmatched {
        experiment: measured.id.clone(),
        metric: None,
        note,
    }
}

fn compare_metric(
    experiment: &str,
    ma: &Metric,
    mb: &Metric,
    opts: &CompareOptions,
    fail_above: Option<f64>,
) -> MetricComparison {
    let direction = Direction::of(mb.unit);
    let mut out = MetricComparison {
        experiment: experiment.to_string(),
        metric: mb.name.clone(),
        unit: mb.unit,
        direction,
        comparison: None,
        note: None,
        regression: false,
    };
    if ma.unit != mb.unit {
        out.note = Some(format!(
            "units differ ({} in A, {} in B)",
            ma.unit.as_str(),
            mb.unit.as_str()
        ));
        return out;
    }
    let missing = match (ma.samples.is_empty(), mb.samples.is_empty()) {
        (true, true) => Some("A and B"),
        (true, false) => Some("A"),
        (false, true) => Some("B"),
        (false, false) => None,
    };
    if let Some(side) = missing {
        out.note = Some(format!("no raw samples stored in {side}"));
        return out;
    }
    match compare_samples(&ma.samples, &mb.samples, direction, opts) {
        Ok(c) => {
            out.regression = fail_above.is_some_and(|f| c.regressed_beyond(direction, f));
            out.comparison = Some(c);
        }
        Err(e) => out.note = Some(format!("not compared: {e}")),
    }
    out
}
