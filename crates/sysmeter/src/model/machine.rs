//! What the machine did while a result was measured: the machine-state probe's record around
//! an experiment ([`MachineState`]) and a metric's spread over interleaved rounds
//! ([`RoundStats`]). Filled by `harness`, judged and normalised by `harness::machine` and
//! `stats::normalise`.
//!
//! Pure data: depends on nothing but serde and the NaN rule of `summary`.

use serde::{Deserialize, Serialize};

use super::summary::{f64_or_nan, vec_or_nan};

/// The machine's state around one experiment: the machine-state probe at its start and end
/// (`harness::machine`), what else ran on the measuring CPU, and whether it held still.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineState {
    /// Effective core clock at the start, GHz (dependent multiply chain).
    pub core_ghz_start: f64,
    /// Effective core clock at the end, GHz.
    pub core_ghz_end: f64,
    /// Independent adds per ns at the start.
    pub throughput_start: f64,
    /// Independent adds per ns at the end.
    pub throughput_end: f64,
    /// Null system call at the start, ns.
    pub syscall_ns_start: f64,
    /// Null system call at the end, ns.
    pub syscall_ns_end: f64,
    /// Steal time on the measuring CPU during the experiment, ns (10 ms resolution).
    pub steal_ns: u64,
    /// Involuntary context switches of the measuring thread during the experiment.
    pub involuntary_switches: u64,
    /// Time the measuring thread waited on a run queue during the experiment, ns.
    pub runqueue_wait_ns: u64,
    /// Whether the machine held still (thresholds in `harness::machine::judge`).
    pub stable: bool,
    /// Why not, on one line; present only when `stable` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The probes taken between the points of a long series (mem.latency, mem.bandwidth,
    /// fs.read, fs.contention), when there were any: the clock may dip and come back
    /// between the start and end probes, and these see it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between: Option<BetweenProbes>,
    /// The shared-cache probe, for experiments that depend on the last-level cache shared
    /// with other CPUs and other guests (`mem.latency`): absent for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<CacheShare>,
}

/// The shared-cache probe over one experiment (`harness::machine::cache`): a random pointer
/// chase over a fixed working set larger than the private caches, timed at the start, at
/// most every half second between the points of the series, and at the end. Its time per
/// load is near the last-level cache's latency when this CPU holds that much of the shared
/// cache, and near DRAM's when other CPUs or other guests of the host hold it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CacheShare {
    /// Working set of the chase, bytes.
    pub bytes: u64,
    /// How many times it was timed.
    pub count: u32,
    /// ns per load at the start.
    pub start_ns: f64,
    /// ns per load at the end.
    pub end_ns: f64,
    /// Lowest ns per load of all the readings.
    pub min_ns: f64,
    /// Highest ns per load of all the readings.
    pub max_ns: f64,
    /// Median ns per load of all the readings: the figure `compare` uses.
    pub median_ns: f64,
}

/// The range of the probes taken between the points of a series (all of them, start and
/// end excluded).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BetweenProbes {
    /// How many probes were taken.
    pub count: u32,
    /// Lowest effective core clock among them, GHz.
    pub core_ghz_min: f64,
    /// Highest effective core clock among them, GHz.
    pub core_ghz_max: f64,
    /// Lowest throughput among them, independent adds per ns.
    pub throughput_min: f64,
    /// Highest throughput among them, independent adds per ns.
    pub throughput_max: f64,
}

impl MachineState {
    /// The experiment's core clock: the mean of the start and end probes, GHz (what
    /// `core_cycles` and normalisation use for this experiment).
    pub fn core_ghz(&self) -> f64 {
        (self.core_ghz_start + self.core_ghz_end) / 2.0
    }

    /// The experiment's ALU throughput: the mean of the start and end probes, independent
    /// adds per ns (halves when the core's other hardware thread is busy).
    pub fn throughput(&self) -> f64 {
        (self.throughput_start + self.throughput_end) / 2.0
    }
}

/// A metric measured in several interleaved rounds (`bench --rounds N`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundStats {
    /// The metric's median in each round, in round order.
    #[serde(deserialize_with = "vec_or_nan")]
    pub medians: Vec<f64>,
    /// The median of the round medians: the figure to quote.
    #[serde(deserialize_with = "f64_or_nan")]
    pub median: f64,
    /// Coefficient of variation of the round medians: how well the figure reproduces from
    /// one pass to the next (the samples inside one round understate that).
    #[serde(deserialize_with = "f64_or_nan")]
    pub cv: f64,
}
