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
}

/// The fleet's spread of one metric over the hosts' values: quantiles by linear
/// interpolation between order statistics (PostgreSQL's `percentile_cont`, R type 7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FleetSpread {
    /// Experiment id.
    pub experiment: String,
    /// Metric name.
    pub metric: String,
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
}
