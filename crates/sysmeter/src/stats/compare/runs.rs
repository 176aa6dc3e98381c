//! Comparing two whole runs, or two sets of runs: match metrics by experiment id and metric
//! name, compare every shared one (`metric::compare_metric`), and list what only one side
//! has. For sets, the first run of each side decides what is matched and listed; the other
//! runs contribute their medians of the same metrics.
//!
//! Pure: works on [`RunRecord`]s already loaded (from the store or from JSON files); never
//! opens anything. Machine and configuration differences are a presentation matter and live
//! in `report::compare_text`; the machine's *speed* is measured here ([`super::machine`]).

use serde::{Deserialize, Serialize};

use super::family;
use super::machine::{MachineComparison, machine_comparison};
use super::metric::{Runs, compare_metric};
use super::sets::RunNoise;
use super::{CompareOptions, Direction, SampleComparison, Verdict};
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
    /// Whether the run never ended (its process died): it may lack experiments. Absent
    /// (false) in the JSON of a complete run.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
}

impl RunSide {
    /// The identity of `run`.
    pub fn of(run: &RunRecord) -> RunSide {
        RunSide {
            id: run.id.clone(),
            kind: run.kind,
            started_ns: run.started_ns,
            hostname: run.host.hostname.clone(),
            tool_version: run.tool_version.clone(),
            profile: run.config.profile.clone(),
            incomplete: run.is_incomplete(),
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
    /// The statistics of the raw values; `None` when a side has no raw samples (see
    /// `note`). Its `verdict` is the raw one; [`MetricComparison::verdict`] is the one to
    /// act on.
    pub comparison: Option<SampleComparison>,
    /// Why the metric could not be compared, if it could not.
    pub note: Option<String>,
    /// Whether this metric fails `--fail-above` (always false without it).
    pub regression: bool,
    /// Speed B/A of the machine for this experiment (the probes' core clocks); `None` when a
    /// side has no machine-state probe.
    pub machine_ratio: Option<f64>,
    /// Throughput B/A of the machine for this experiment, per core cycle (the probes'
    /// independent adds per ns ÷ their core clock, so a clock change cancels out; below 1
    /// when B's core was shared more, e.g. with a busy SMT sibling); `None` when a side has
    /// no probe.
    #[serde(default)]
    pub throughput_ratio: Option<f64>,
    /// Shared-cache probe B/A for this experiment (median ns per load of a 4 MiB chase;
    /// above 1 when other CPUs or guests held more of the last-level cache in B); `None`
    /// when a side has no such probe (only `mem.latency` takes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_ratio: Option<f64>,
    /// Whether the metric's cost scales with the core clock (see `stats::compare::machine`).
    pub scales_with_clock: bool,
    /// Why: the static rule or the evidence of the runs.
    pub scaling_basis: String,
    /// The change after dividing out the machine ratio; `None` when the metric does not
    /// scale or a side has no probe.
    pub normalised_change: Option<f64>,
    /// The statistics with B's values brought to A's core clock (same cases as
    /// `normalised_change`).
    pub normalised: Option<SampleComparison>,
    /// Whether `verdict` and `regression` were judged on `normalised` (the machine moved
    /// beyond the machine threshold and the metric scales).
    pub judged_normalised: bool,
    /// The verdict to act on: `comparison`'s, or judged on `normalised` when
    /// `judged_normalised`; `no_change` when the metric could not be compared.
    pub verdict: Verdict,
    /// A's between-run noise from the stored runs of its host (when A is one run and the
    /// store holds enough of them, `stats::compare::history`); it then bounds A's variance
    /// in the between-run test from below.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_noise_a: Option<RunNoise>,
    /// B's, likewise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_noise_b: Option<RunNoise>,
}

impl MetricComparison {
    /// A metric not compared (yet), as measured in B.
    pub(super) fn new(experiment: &str, mb: &Metric) -> MetricComparison {
        MetricComparison {
            experiment: experiment.to_string(),
            metric: mb.name.clone(),
            unit: mb.unit,
            direction: Direction::of(mb.unit),
            comparison: None,
            note: None,
            regression: false,
            machine_ratio: None,
            throughput_ratio: None,
            cache_ratio: None,
            scales_with_clock: false,
            scaling_basis: String::new(),
            normalised_change: None,
            normalised: None,
            judged_normalised: false,
            verdict: Verdict::NoChange,
            run_noise_a: None,
            run_noise_b: None,
        }
    }

    /// The verdict to act on (see the field).
    pub fn verdict(&self) -> Verdict {
        self.verdict
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

/// What was compared: the two sides, the sets they stand for, and the speed of their
/// machines. [`RunComparison`] and the JSON document of `compare` (`report::compare_text`)
/// both carry it, flattened, so their JSON keeps these fields at the top level.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sides {
    /// The baseline run.
    pub a: RunSide,
    /// The candidate run.
    pub b: RunSide,
    /// Every run of side A when it is a set of more than one (`a` is the first; absent for
    /// one run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a_set: Vec<RunSide>,
    /// Every run of side B when it is a set of more than one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub b_set: Vec<RunSide>,
    /// Speed B/A of the machine from the machine-state probes (`machine.ratio`); `None`
    /// (null) without probes on both sides.
    pub machine_ratio: Option<f64>,
    /// The probes of both sides; `None` (null) when neither run has any.
    pub machine: Option<MachineComparison>,
}

/// Two runs compared metric by metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunComparison {
    /// The runs compared and their machines.
    #[serde(flatten)]
    pub sides: Sides,
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
    compare_sets(&[a], &[b], &[], opts, fail_above)
}

/// Compares the set of runs `b` against the set `a` (each non-empty; a single run is a set
/// of one; an empty side compares nothing — callers refuse it first). `history` holds stored
/// runs of the sides' hosts, newest first, for the between-run noise of a side that is one
/// run (`super::history`; may be empty, and may contain the compared runs: they are left out).
pub fn compare_sets(
    a: &[&RunRecord],
    b: &[&RunRecord],
    history: &[&RunRecord],
    opts: &CompareOptions,
    fail_above: Option<f64>,
) -> RunComparison {
    let (Some(&first_a), Some(&first_b)) = (a.first(), b.first()) else {
        return empty(opts, fail_above);
    };
    let runs = Runs::new(a, b, history);
    let mut metrics = Vec::new();
    let mut only_in_a = Vec::new();
    for ra in &first_a.results {
        let rb = first_b.results.iter().find(|r| r.id == ra.id);
        match rb {
            Some(rb) if ra.status == Status::Ok && rb.status == Status::Ok => {
                for ma in &ra.metrics {
                    match rb.metrics.iter().find(|m| m.name == ma.name) {
                        Some(mb) => {
                            metrics.push(compare_metric(&ra.id, (ma, mb), &runs, opts, fail_above))
                        }
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
    let set = |side: &[&RunRecord]| -> Vec<RunSide> {
        if side.len() > 1 {
            side.iter().map(|r| RunSide::of(r)).collect()
        } else {
            Vec::new()
        }
    };
    family::adjust(&mut metrics, opts, fail_above);
    let machine = machine_comparison(a, b, opts.machine_threshold);
    RunComparison {
        sides: Sides {
            a: RunSide::of(first_a),
            b: RunSide::of(first_b),
            a_set: set(a),
            b_set: set(b),
            machine_ratio: machine.as_ref().and_then(|m| m.ratio),
            machine,
        },
        options: *opts,
        fail_above,
        metrics,
        only_in_a,
        only_in_b: only_in_b(first_a, first_b),
    }
}

/// The comparison of nothing (an empty side).
fn empty(opts: &CompareOptions, fail_above: Option<f64>) -> RunComparison {
    let side = RunSide {
        id: String::new(),
        kind: RunKind::Bench,
        started_ns: 0,
        hostname: String::new(),
        tool_version: String::new(),
        profile: String::new(),
        incomplete: false,
    };
    RunComparison {
        sides: Sides {
            a: side.clone(),
            b: side,
            a_set: Vec::new(),
            b_set: Vec::new(),
            machine_ratio: None,
            machine: None,
        },
        options: *opts,
        fail_above,
        metrics: Vec::new(),
        only_in_a: Vec::new(),
        only_in_b: Vec::new(),
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
