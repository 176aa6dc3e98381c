//! What a store holds about a fleet, as read for `sysmeter fleet`: each machine's latest
//! bench run (with its machine description) and one value per metric of that run (the
//! metric's median). The store fills these in SQL; `stats::fleet` reduces them.
//!
//! Plain data, no behaviour. Depends only on the rest of `model`.

use serde::{Deserialize, Serialize};

use super::{HostInfo, RunToRun, Unit};

/// One machine of the fleet: its latest bench run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetHost {
    /// Host name the run was stored under.
    pub hostname: String,
    /// Id of its latest bench run.
    pub run_id: String,
    /// When that run started, ns since the Unix epoch.
    pub started_ns: i64,
    /// The machine description of that run.
    pub host: HostInfo,
}

/// One metric of one machine's latest bench run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetValue {
    /// Host name.
    pub hostname: String,
    /// Experiment id (`os.syscall`).
    pub experiment: String,
    /// Metric name within the experiment.
    pub metric: String,
    /// Unit of `value`.
    pub unit: Unit,
    /// The metric's median in that run.
    pub value: f64,
    /// The host's own run-to-run interval of the metric (`model::interval`), filled by
    /// `sysmeter fleet` for a host that may stand out; `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_to_run: Option<RunToRun>,
    /// The database's judgment of this value (a large fleet on PostgreSQL, where only the
    /// outliers and the hosts nearest the median are read); `None`: judged in `stats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub judged: Option<FleetJudged>,
}

/// What the database found of one host's value (see `FleetData::reduced`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FleetJudged {
    /// Share of the other hosts with a lower value, ties counting half, in percent.
    pub percentile: f64,
    /// Whether the fleet's outlier rule calls it an outlier (before the host's own
    /// run-to-run interval is looked at).
    pub outlier: bool,
}

/// The fleet's spread of one metric over the hosts' values: quantiles by linear
/// interpolation between order statistics (PostgreSQL's `percentile_cont`, R type 7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetSpread {
    /// Experiment id.
    pub experiment: String,
    /// Metric name.
    pub metric: String,
    /// Unit of the values.
    pub unit: Unit,
    /// How many hosts measured the metric.
    pub hosts: usize,
    /// Median of the hosts' values.
    pub median: f64,
    /// 10th percentile.
    pub p10: f64,
    /// 90th percentile.
    pub p90: f64,
}

/// Everything `sysmeter fleet` reads from a store.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FleetData {
    /// One entry per machine, by host name.
    pub hosts: Vec<FleetHost>,
    /// The metrics of those runs, by experiment, metric and host name.
    pub values: Vec<FleetValue>,
    /// The spread of every metric when the database computed it (PostgreSQL); `None` when
    /// it is left to `stats::fleet` (SQLite).
    pub spreads: Option<Vec<FleetSpread>>,
    /// Whether the database reduced the fleet (PostgreSQL beyond `ROLL_CALL_HOSTS` hosts):
    /// then `spreads` holds every metric, each with its robust deviation applied, and
    /// `values` only the outliers and, per metric with one, the hosts nearest its median,
    /// each `judged`; `hosts` carry only the CPU model and kernel unless one of those
    /// values is theirs. Memory stays flat in the number of hosts.
    pub reduced: bool,
}

/// Up to this many hosts the whole fleet is read (every host's value of every metric) and
/// every format shows a column per host; beyond it the database reduces it.
pub const ROLL_CALL_HOSTS: usize = 50;

/// The outlier rule's constants (docs/fleet.md), shared by `stats::fleet`, which judges in
/// the client, and the store's SQL, which judges a large fleet on PostgreSQL.
pub mod fleet_rule {
    /// Fewest hosts a metric needs before any of them is called an outlier.
    pub const MIN_HOSTS: usize = 3;
    /// An outlier is at least this factor above or below the fleet median.
    pub const MIN_FACTOR: f64 = 1.25;
    /// An outlier is more than this many robust standard deviations from the fleet median.
    pub const MADS: f64 = 3.0;
    /// Scales a median absolute deviation to a standard deviation for normal data.
    pub const MAD_TO_SD: f64 = 1.4826;
}
