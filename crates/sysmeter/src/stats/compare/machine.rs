//! What `compare` knows about the machine's speed: the ratio of the machine-state probes of
//! B and A for the pair of runs (the median over the experiments both probed), how far the
//! probe moved *within* each side, and which metrics scale with the core clock.
//!
//! Which metrics scale (docs/compare.md explains it):
//! - only times (ns per operation) and rates (per second); counts and sizes never;
//! - with evidence — at least [`normalise::MIN_POINTS`] runs or rounds in all whose probes
//!   differ *within* a side by more than [`normalise::MIN_PROBE_CV`] — the metric scales when
//!   its core-cycle count is steadier than its time ([`normalise::within_side_scaling`]).
//!   Only variation inside each side counts: between the sides a real change is confounded
//!   with the probe ratio;
//! - otherwise the static rule [`static_rule`]: times of the CPU-bound experiments (`cpu.*`,
//!   `os.syscall`, `os.ctxsw`, `os.task`, `ipc.*`, `os.lookup` but its dentry-cache miss,
//!   and the `L1`/`L2` levels of `mem.latency`)
//!   scale; everything bound by DRAM, storage or the network (`mem.bandwidth`,
//!   `mem.pagefault`, `mem.latency` beyond L2, `fs.*`, `net.*`) and every rate does not.
//!
//! Pure: reads run records. Depends on `model` and `stats::normalise`.

use serde::{Deserialize, Serialize};

use super::{CACHE_SPREAD, MetricComparison, THROUGHPUT_THRESHOLD, Verdict};
use crate::model::{ExperimentResult, RunRecord, Status, Unit};
use crate::stats::normalise::{self, Point, Scaling};

/// The machine's speed across the two sides of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineComparison {
    /// Speed B/A: the median over shared experiments of (B's core clock / A's); `None` when
    /// no experiment was probed on both sides.
    pub ratio: Option<f64>,
    /// Experiments probed on both sides.
    pub experiments: usize,
    /// Smallest and largest per-experiment ratio.
    pub ratio_range: Option<(f64, f64)>,
    /// Side A's probes.
    pub a: SideMachine,
    /// Side B's probes.
    pub b: SideMachine,
}

/// One side's machine-state probes, over all its runs and experiments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideMachine {
    /// Experiments (per run and round) with a probe.
    pub probed: usize,
    /// Median core clock of those, GHz.
    pub core_ghz: Option<f64>,
    /// Lowest and highest core clock, GHz (start and end probes of every experiment).
    pub core_ghz_range: Option<(f64, f64)>,
    /// Whether the probe moved within the side by more than the machine threshold (between
    /// experiments, runs or rounds, or inside an experiment flagged unstable).
    pub moved: bool,
    /// Experiments the harness flagged `stable: false`: `id: reason`.
    pub unstable: Vec<String>,
}

/// Every probe of an experiment result: the run's state, or one per round.
pub(crate) fn states(r: &ExperimentResult) -> Vec<&crate::model::MachineState> {
    if r.round_machines.is_empty() {
        r.machine.iter().collect()
    } else {
        r.round_machines.iter().collect()
    }
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn ok_results<'a>(side: &'a [&'a RunRecord]) -> impl Iterator<Item = &'a ExperimentResult> {
    side.iter()
        .flat_map(|r| &r.results)
        .filter(|r| r.status == Status::Ok)
}

fn side_machine(side: &[&RunRecord], threshold: f64) -> SideMachine {
    let mut clocks = Vec::new();
    let mut ends = Vec::new();
    let mut unstable = Vec::new();
    for r in ok_results(side) {
        for s in states(r) {
            clocks.push(s.core_ghz());
            ends.extend([s.core_ghz_start, s.core_ghz_end]);
            if !s.stable {
                let reason = s.reason.as_deref().unwrap_or("unstable");
                unstable.push(format!("{}: {reason}", r.id));
            }
        }
    }
    unstable.dedup();
    let ends: Vec<f64> = ends.into_iter().filter(|g| *g > 0.0).collect();
    let range = ends
        .iter()
        .copied()
        .fold(None, |acc: Option<(f64, f64)>, g| {
            Some(acc.map_or((g, g), |(lo, hi)| (lo.min(g), hi.max(g))))
        });
    let moved = range.is_some_and(|(lo, hi)| hi / lo - 1.0 > threshold) || !unstable.is_empty();
    SideMachine {
        probed: clocks.len(),
        core_ghz: median(&mut clocks),
        core_ghz_range: range,
        moved,
        unstable,
    }
}

/// Median core clock of experiment `id` over a side's runs and rounds.
pub(crate) fn experiment_ghz(side: &[&RunRecord], id: &str) -> Option<f64> {
    let mut clocks: Vec<f64> = ok_results(side)
        .filter(|r| r.id == id)
        .flat_map(states)
        .map(|s| s.core_ghz())
        .collect();
    median(&mut clocks)
}

/// The machine comparison of two sides; `None` when neither side has any probe (runs made
/// before sysmeter recorded the machine's state).
pub fn machine_comparison(
    a: &[&RunRecord],
    b: &[&RunRecord],
    threshold: f64,
) -> Option<MachineComparison> {
    let (sa, sb) = (side_machine(a, threshold), side_machine(b, threshold));
    if sa.probed == 0 && sb.probed == 0 {
        return None;
    }
    let mut ids: Vec<&str> = ok_results(a).map(|r| r.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut ratios: Vec<f64> = ids
        .iter()
        .filter_map(|id| normalise::machine_ratio(experiment_ghz(a, id)?, experiment_ghz(b, id)?))
        .collect();
    let range = ratios
        .iter()
        .copied()
        .fold(None, |acc: Option<(f64, f64)>, r| {
            Some(acc.map_or((r, r), |(lo, hi)| (lo.min(r), hi.max(r))))
        });
    Some(MachineComparison {
        experiments: ratios.len(),
        ratio: median(&mut ratios),
        ratio_range: range,
        a: sa,
        b: sb,
    })
}

/// Whether a metric's cost follows the core clock, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct ClockScaling {
    /// Normalise it.
    pub scales: bool,
    /// One line: the rule or the evidence.
    pub basis: String,
}

/// The static rule (see the module documentation) for metric `metric` of `experiment`.
pub fn static_rule(experiment: &str, metric: &str, unit: Unit) -> ClockScaling {
    let rule = |scales: bool, why: &str| ClockScaling {
        scales,
        basis: format!("rule: {why}"),
    };
    if unit != Unit::Ns {
        let what = if unit == Unit::BytesPerSec {
            "a rate (bound by memory, storage or the network)"
        } else {
            "not a time"
        };
        return rule(false, what);
    }
    let group = experiment.split('.').next().unwrap_or("");
    let cpu_bound = group == "cpu"
        || group == "ipc"
        || ["os.syscall", "os.ctxsw", "os.task"].contains(&experiment);
    if cpu_bound {
        return rule(true, "CPU-bound experiment");
    }
    if experiment == "os.lookup" {
        return if metric.starts_with("dentry-cache miss") {
            rule(false, "a dentry-cache miss reads the file system")
        } else {
            rule(true, "cached path lookups are kernel CPU work")
        };
    }
    if experiment == "mem.latency" {
        let core_cache = metric.starts_with("L1 ") || metric.starts_with("L2 ");
        return if core_cache {
            rule(true, "L1/L2 hit, in core cycles")
        } else {
            rule(false, "beyond L2 (uncore or DRAM time)")
        };
    }
    rule(false, "bound by memory, storage or the network")
}

/// Decides whether a metric scales: from the within-side evidence of `points_a` and
/// `points_b` (one per run or round, time per operation and core clock) when it decides,
/// else by [`static_rule`].
pub fn decide_scaling(
    experiment: &str,
    metric: &str,
    unit: Unit,
    points_a: &[Point],
    points_b: &[Point],
) -> ClockScaling {
    let rule = static_rule(experiment, metric, unit);
    if !matches!(unit, Unit::Ns | Unit::BytesPerSec) {
        return rule;
    }
    let e = normalise::within_side_scaling(points_a, points_b);
    let n = points_a.len() + points_b.len();
    let pct = |x: f64| format!("{:.1}%", x * 100.0);
    match e.verdict {
        Scaling::Undecided => rule,
        Scaling::Scales => ClockScaling {
            scales: true,
            basis: format!(
                "evidence: core-cycle CV {} < time CV {} over {n} runs",
                pct(e.cycles_cv),
                pct(e.time_cv)
            ),
        },
        Scaling::Fixed => ClockScaling {
            scales: false,
            basis: format!(
                "evidence: time CV {} ≤ core-cycle CV {} over {n} runs",
                pct(e.time_cv),
                pct(e.cycles_cv)
            ),
        },
    }
}

/// The verdict when the machine's sharing differs between the sides in the direction of the
/// change: the throughput probes beyond [`THROUGHPUT_THRESHOLD`] for a metric that scales
/// with the core (a busy SMT sibling), or the shared-cache probes beyond [`CACHE_SPREAD`]
/// for a metric of an experiment that carries them (other CPUs or guests holding the
/// last-level cache). The machine's, not the code's.
pub(super) fn busier(out: &MetricComparison) -> Option<Verdict> {
    // B/A of "how shared": above 1 when B was shared more.
    let core = (out.throughput_ratio)
        .filter(|r| out.scales_with_clock && (r - 1.0).abs() > THROUGHPUT_THRESHOLD)
        .map(|r| 1.0 / r);
    let cache = (out.cache_ratio).filter(|r| r.max(1.0 / r) > CACHE_SPREAD);
    let shared_more = [core, cache].into_iter().flatten().find(|r| *r != 1.0)?;
    match out.verdict {
        Verdict::Slower if shared_more > 1.0 => Some(Verdict::MachineBusier),
        Verdict::Faster if shared_more < 1.0 => Some(Verdict::MachineQuieter),
        _ => None,
    }
}
