//! The run record: one invocation of sysmeter (a bench, run, trace, profile or scale), its
//! configuration, and per experiment the metrics, series, estimates and findings.
//!
//! Pure data and constructors: depends only on [`HostInfo`] beside it (serde, jiff, fastrand).

use serde::{Deserialize, Serialize};

use super::about::{About, Estimate};
use super::finding::{Finding, Skip};
use super::host::HostInfo;
use super::interval::RunToRun;
pub use super::kind::RunKind;
use super::machine::{MachineState, RoundStats};
use super::summary::Summary;

/// JSON/DB result schema version: bump it on incompatible changes (docs/json-schema.md, CHANGELOG).
pub const SCHEMA_VERSION: u32 = 1;

/// One invocation of sysmeter that produced results (a `bench`, later `run`, `trace`, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Schema version of this record ([`SCHEMA_VERSION`] when written by this build).
    pub schema: u32,
    /// Unique run id (time-ordered text, e.g. `20261122T183242Z-3f9a`).
    pub id: String,
    /// What produced the run.
    pub kind: RunKind,
    /// Start, nanoseconds since the Unix epoch (UTC).
    pub started_ns: i64,
    /// End, nanoseconds since the Unix epoch; `None` while running or when interrupted early.
    pub finished_ns: Option<i64>,
    /// `true` when the run was stopped by Ctrl-C before all experiments finished.
    pub interrupted: bool,
    /// Version of sysmeter that measured it.
    pub tool_version: String,
    /// The machine it was measured on.
    pub host: HostInfo,
    /// The configuration used (profile, CPU, selection, calibration).
    pub config: RunConfig,
    /// One entry per experiment, in run order.
    pub results: Vec<ExperimentResult>,
}

impl RunRecord {
    /// A new run of `kind` started at `started_ns` on `host`, with a fresh id
    /// ([`new_run_id`]), not finished, with no results yet, written by this build
    /// ([`SCHEMA_VERSION`], this crate's version).
    pub fn new(kind: RunKind, started_ns: i64, host: HostInfo, config: RunConfig) -> RunRecord {
        RunRecord {
            schema: SCHEMA_VERSION,
            id: new_run_id(),
            kind,
            started_ns,
            finished_ns: None,
            interrupted: false,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            host,
            config,
            results: Vec::new(),
        }
    }
}

/// How a run that has no end time and was not interrupted is shown: the process died
/// (SIGKILL, OOM, power loss) — or, while it runs, has not finished yet.
pub const INCOMPLETE: &str = "incomplete (sysmeter did not finish)";

impl RunRecord {
    /// Whether the run never ended: no end time, and not stopped by Ctrl-C.
    pub fn is_incomplete(&self) -> bool {
        self.finished_ns.is_none() && !self.interrupted
    }

    /// The selected experiments that have no result (of an incomplete or interrupted run).
    pub fn missing_experiments(&self) -> Vec<&str> {
        self.config
            .selected
            .iter()
            .filter(|id| !self.results.iter().any(|r| &r.id == *id))
            .map(String::as_str)
            .collect()
    }
}

/// A new run id: UTC start second, then 8 hex digits mixing our pid with the clock's ns, so
/// two processes starting in the same second do not collide (16 random bits did, in CI).
pub fn new_run_id() -> String {
    let now = jiff::Timestamp::now();
    let salt = (u64::from(std::process::id()) << 32 | u64::from(now.subsec_nanosecond() as u32))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
        ^ fastrand::u64(..);
    format!("{}-{:08x}", now.strftime("%Y%m%dT%H%M%SZ"), salt >> 32)
}

/// Configuration a bench run used, including the per-run calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct RunConfig {
    /// `quick`, `default` or `thorough`.
    pub profile: String,
    /// CPU the measuring thread was pinned to (`None` when pinning failed or was disabled).
    pub cpu: Option<u32>,
    /// Experiment ids selected for this run.
    pub selected: Vec<String>,
    /// Target relative width of the 95% CI of the median (0.02 = 2%).
    pub target_ci_width: f64,
    /// Per-run calibration, `None` if the run did not calibrate (e.g. `trace`).
    pub calibration: Option<Calibration>,
    /// Seed for the bootstrap resampling, so statistics are reproducible.
    pub seed: u64,
}

/// What the harness measured about its own timing before any experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Calibration {
    /// Name of the clock used to time intervals (e.g. `CLOCK_MONOTONIC (vDSO)`).
    pub clock: String,
    /// Median cost of one back-to-back pair of timer reads, ns: what a timed interval always
    /// contains besides the work.
    pub timer_overhead_ns: f64,
    /// Smallest non-zero difference observed between successive timer reads, ns.
    pub timer_granularity_ns: f64,
    /// One empty harness loop turn at the run's start, ns (reported; see `harness::loop_ref`).
    pub loop_overhead_ns: f64,
    /// Shortest sample interval the harness allows, ns (timer granularity < 0.1% of it).
    pub min_sample_ns: f64,
    /// Time-stamp counter rate measured against CLOCK_MONOTONIC, ticks per ns (= GHz).
    pub tsc_ghz: Option<f64>,
    /// Name of the counter whose rate is `tsc_ghz` (`rdtsc`, `cntvct_el0`).
    pub tsc_source: Option<String>,
}

/// Outcome of one experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured.
    Ok,
    /// Could not run here; `skip` says why and how to fix it.
    Skipped,
    /// Tried and failed; `error` says why.
    Failed,
}

impl Status {
    /// Lower-case name as used in JSON and the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Skipped => "skipped",
            Status::Failed => "failed",
        }
    }
}

/// Result of one experiment (e.g. `os.syscall`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExperimentResult {
    /// Experiment id, `group.name`.
    pub id: String,
    /// Outcome.
    pub status: Status,
    /// Self-description of the experiment.
    pub about: About,
    /// Model-based predictions, shown beside the results.
    pub estimates: Vec<Estimate>,
    /// Scalar metrics.
    pub metrics: Vec<Metric>,
    /// Curves over an x axis.
    pub series: Vec<Series>,
    /// Derived conclusions (ratios, detected sizes, explanations).
    pub findings: Vec<Finding>,
    /// Why it was skipped, and the fix.
    pub skip: Option<Skip>,
    /// Why it failed.
    pub error: Option<String>,
    /// Wall time the experiment took, ns.
    pub elapsed_ns: u64,
    /// Larger outputs that are not numbers (folded stacks, a flame graph SVG, a call graph).
    /// Added in schema 1 without a bump: absent in older records.
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
    /// The machine's state around the experiment (the probe at its start and end, what else
    /// ran on its CPU, whether it held still). Added in schema 1 without a bump: absent in
    /// older records and in diagnoses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineState>,
    /// With `bench --rounds N`: the machine's state around this experiment in each round, in
    /// round order (`machine` is then the last round's). Empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub round_machines: Vec<MachineState>,
    /// How the diagnosis session that made this result ended (`model::session`); absent in
    /// bench results and in records older than issue 41.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<super::SessionEnd>,
}

impl ExperimentResult {
    /// A measured (`ok`) result of experiment `id` with nothing in it yet.
    pub fn new(id: &str, about: About) -> ExperimentResult {
        ExperimentResult {
            id: id.to_string(),
            status: Status::Ok,
            about,
            estimates: Vec::new(),
            metrics: Vec::new(),
            series: Vec::new(),
            findings: Vec::new(),
            skip: None,
            error: None,
            elapsed_ns: 0,
            artifacts: Vec::new(),
            machine: None,
            round_machines: Vec::new(),
            session: None,
        }
    }

    /// The content of artifact `name`, if the result has it.
    pub fn artifact(&self, name: &str) -> Option<&str> {
        let a = self.artifacts.iter().find(|a| a.name == name)?;
        Some(a.content.as_str())
    }

    /// Artifact `name` read as JSON; `None` when the result lacks it or it is not a `T`.
    pub fn artifact_json<T: serde::de::DeserializeOwned>(&self, name: &str) -> Option<T> {
        serde_json::from_str(self.artifact(name)?).ok()
    }
}

/// A named text output of an experiment or diagnosis (e.g. `folded` stacks, `flamegraph.svg`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    /// Name, unique within the result (e.g. `folded`, `flamegraph`).
    pub name: String,
    /// Media type (`text/plain`, `image/svg+xml`, `application/json`).
    pub media_type: String,
    /// The content.
    pub content: String,
}

/// Unit of a metric's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Nanoseconds per operation.
    Ns,
    /// Bytes per second.
    BytesPerSec,
    /// Bytes.
    Bytes,
    /// A plain count or ratio.
    Count,
}

impl Unit {
    /// Name as used in CSV and the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Ns => "ns",
            Unit::BytesPerSec => "bytes_per_sec",
            Unit::Bytes => "bytes",
            Unit::Count => "count",
        }
    }
}

/// One measured quantity with its statistics and raw samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// Name, unique within the experiment (e.g. `null (getppid)`).
    pub name: String,
    /// Unit of `summary` and `samples`.
    pub unit: Unit,
    /// Statistics of the samples.
    pub summary: Summary,
    /// The same statistics in TSC cycles (time metrics only, when the TSC rate is known).
    pub cycles: Option<Summary>,
    /// Overhead subtracted from every sample, per operation, ns (timer + loop).
    pub subtracted_overhead_ns: f64,
    /// Operations timed per sample (samples are already divided by it).
    pub ops_per_sample: u64,
    /// Free-form note shown in the table (e.g. `system call`, `derived`).
    pub note: Option<String>,
    /// Raw per-operation samples after subtraction, in time order.
    pub samples: Vec<f64>,
    /// The same statistics in core cycles: time × the effective core clock the machine-state
    /// probe measured around this experiment (time metrics only; `cycles` counts TSC ticks,
    /// which run at a fixed rate whatever the core's speed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_cycles: Option<Summary>,
    /// With `bench --rounds N`: the metric's median in each round and how much they differ.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rounds: Option<RoundStats>,
    /// Why the samples cannot be read as a result (mostly zero, or a CI of the median wider
    /// than a decade): the harness's check, `stats::degenerate`. Renderers show this instead
    /// of the value; the samples and summary are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degenerate: Option<String>,
    /// Where the next run's median should land (`model::interval`); computed, never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_to_run: Option<RunToRun>,
    /// The value is a lower bound, not a measurement of the quantity itself (`fs.cache_size`
    /// when the size cap came first): every page shows it as `≥ 64 MiB`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_least: bool,
}

impl Metric {
    /// A metric of `summary` alone: no cycles, samples, note or overhead, one operation per
    /// sample (derived values, and the base of test metrics).
    pub fn new(name: &str, unit: Unit, summary: Summary) -> Metric {
        Metric {
            name: name.to_string(),
            unit,
            summary,
            cycles: None,
            subtracted_overhead_ns: 0.0,
            ops_per_sample: 1,
            note: None,
            samples: Vec::new(),
            core_cycles: None,
            rounds: None,
            degenerate: None,
            run_to_run: None,
            at_least: false,
        }
    }

    /// The figure every page quotes of this metric: with `bench --rounds N` the median of
    /// the round medians (`RoundStats::median`, what the tables show), else the median. A
    /// finding that quotes the metric quotes this, so it says what the table says.
    pub fn figure(&self) -> f64 {
        self.rounds
            .as_ref()
            .map_or(self.summary.median, |r| r.median)
    }

    /// `x` in this metric's unit, as every page shows its value: `≥ 64 MiB` for a lower
    /// bound ([`Metric::at_least`]), else the number (`model::units::value`).
    pub fn shown(&self, x: f64) -> String {
        let value = super::units::value(x, self.unit);
        if self.at_least {
            format!("≥ {value}")
        } else {
            value
        }
    }
}

/// A curve: metric values over an x axis (e.g. latency by working-set size).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Name of the curve.
    pub name: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Unit of x.
    pub x_unit: Unit,
    /// Unit of y.
    pub y_unit: Unit,
    /// Points in x order.
    pub points: Vec<SeriesPoint>,
}

/// One point of a [`Series`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// x value.
    pub x: f64,
    /// Statistics of y at x.
    pub summary: Summary,
    /// The same in cycles, when y is a time.
    pub cycles: Option<Summary>,
}
