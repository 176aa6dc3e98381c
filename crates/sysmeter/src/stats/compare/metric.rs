//! One metric compared across two sides, each one run or a set of runs (and rounds): the
//! raw comparison, the normalised one for metrics that scale with the core clock, and the
//! verdict and `--fail-above` outcome judged on the right one of the two.
//!
//! Pure: reads run records. Depends on the rest of `stats::compare`, `stats::normalise` and
//! `model`.

use super::history::{Wanted, run_noise, stored_runs};
use super::machine::{ClockScaling, busier, decide_scaling};
use super::sets::RunNoise;
use super::{
    CompareOptions, Direction, MetricComparison, SampleComparison, Verdict, compare_run_medians,
    compare_samples,
};
use crate::model::{MachineState, Metric, RunRecord, Status, Unit};
use crate::stats::normalise::{self, Kind, Point};

/// One run's (or one round's) median of the metric and the probe's core clock for it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Member {
    pub median: f64,
    pub ghz: Option<f64>,
    throughput: Option<f64>,
    cache_ns: Option<f64>,
}

impl Member {
    fn new(median: f64, state: Option<&MachineState>) -> Member {
        Member {
            median,
            ghz: state.map(MachineState::core_ghz),
            // Adds per core cycle: a clock change moves both probes alike, a busy SMT
            // sibling only the throughput.
            throughput: state
                .map(|s| s.throughput() / s.core_ghz())
                .filter(|t| t.is_finite() && *t > 0.0),
            cache_ns: state.and_then(|s| s.cache).map(|c| c.median_ns),
        }
    }
}

/// A side's measurements of one metric: every run's metric and the per-run/round members.
pub(super) struct Side<'a> {
    metrics: Vec<&'a Metric>,
    pub members: Vec<Member>,
}

impl Side<'_> {
    fn medians(&self) -> Vec<f64> {
        self.members.iter().map(|m| m.median).collect()
    }

    fn pooled_samples(&self) -> Vec<f64> {
        self.metrics
            .iter()
            .flat_map(|m| m.samples.clone())
            .collect()
    }

    /// Every member's clock, or `None` when one lacks a probe.
    fn clocks(&self) -> Option<Vec<f64>> {
        self.members.iter().map(|m| m.ghz).collect()
    }

    /// Median throughput probe per core cycle of the members, when every member has one.
    fn throughput(&self) -> Option<f64> {
        let v: Option<Vec<f64>> = self.members.iter().map(|m| m.throughput).collect();
        median(&v?)
    }

    /// Median shared-cache probe (ns per load) of the members, when every member has one.
    fn cache_ns(&self) -> Option<f64> {
        let v: Option<Vec<f64>> = self.members.iter().map(|m| m.cache_ns).collect();
        median(&v?)
    }

    /// Time-per-operation points for the scaling evidence (rates inverted).
    fn points(&self, unit: Unit) -> Vec<Point> {
        let ns = |v: f64| {
            if unit == Unit::BytesPerSec {
                1e9 / v
            } else {
                v
            }
        };
        self.members
            .iter()
            .filter_map(|m| {
                Some(Point {
                    ns: ns(m.median),
                    core_ghz: m.ghz?,
                })
            })
            .collect()
    }
}

/// The metric `name` of `experiment` in every run of `side` where it was measured in `unit`.
pub(super) fn gather<'a>(
    side: &[&'a RunRecord],
    experiment: &str,
    name: &str,
    unit: Unit,
) -> Side<'a> {
    let mut out = Side {
        metrics: Vec::new(),
        members: Vec::new(),
    };
    for run in side {
        let Some(r) = run
            .results
            .iter()
            .find(|r| r.id == experiment && r.status == Status::Ok)
        else {
            continue;
        };
        let Some(m) = r.metrics.iter().find(|m| m.name == name && m.unit == unit) else {
            continue;
        };
        let run_state = r.machine.as_ref();
        out.metrics.push(m);
        match &m.rounds {
            Some(rounds) if rounds.medians.len() >= 2 => {
                let per_round = r.round_machines.len() == rounds.medians.len();
                for (i, &median) in rounds.medians.iter().enumerate() {
                    let state = if per_round {
                        Some(&r.round_machines[i])
                    } else {
                        run_state
                    };
                    out.members.push(Member::new(median, state));
                }
            }
            _ => out.members.push(Member::new(m.summary.median, run_state)),
        }
    }
    out
}

fn median(v: &[f64]) -> Option<f64> {
    crate::stats::median(v).ok()
}

/// Largest/smallest − 1 of a side's clocks.
fn spread(clocks: &[f64]) -> f64 {
    let lo = clocks.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = clocks.iter().copied().fold(0.0, f64::max);
    if lo > 0.0 { hi / lo - 1.0 } else { 0.0 }
}

/// `value` measured at `ghz`, expressed at `reference` GHz (as if the machine had run at the
/// reference speed): times × ghz / reference, rates × reference / ghz.
pub(super) fn at_clock(kind: Kind, value: f64, ghz: f64, reference: f64) -> f64 {
    match kind {
        Kind::Time => value * ghz / reference,
        Kind::Rate => value * reference / ghz,
    }
}

/// What the normalised comparison needs: the sides, their clocks and the mode.
struct Inputs<'s, 'a> {
    a: &'s Side<'a>,
    b: &'s Side<'a>,
    ma: &'a Metric,
    mb: &'a Metric,
    clocks_a: Vec<f64>,
    clocks_b: Vec<f64>,
    /// Judged between runs (sets, rounds, or a stored history's noise).
    between: bool,
    noise: (Option<RunNoise>, Option<RunNoise>),
}

/// The comparison with B (and, for sets, every run) brought to A's median clock, and the
/// normalised change.
fn normalised(
    i: &Inputs<'_, '_>,
    direction: Direction,
    opts: &CompareOptions,
) -> Option<(SampleComparison, f64)> {
    let kind = Kind::of(i.mb.unit);
    let reference = median(&i.clocks_a)?;
    if i.between {
        let norm = |side: &Side<'_>, clocks: &[f64]| -> Vec<f64> {
            let members = side.members.iter().zip(clocks);
            members
                .map(|(m, &g)| at_clock(kind, m.median, g, reference))
                .collect()
        };
        let (a, b) = (norm(i.a, &i.clocks_a), norm(i.b, &i.clocks_b));
        let c = compare_run_medians(&a, &b, (&[], &[]), i.noise, direction, opts).ok()?;
        let change = c.change()?;
        return Some((c, change));
    }
    let (ga, gb) = (i.clocks_a[0], i.clocks_b[0]);
    let b: Vec<f64> = (i.mb.samples.iter())
        .map(|&v| at_clock(kind, v, gb, ga))
        .collect();
    let c = compare_samples(&i.ma.samples, &b, direction, opts).ok()?;
    let raw_b = median(&i.mb.samples)?;
    let change = normalise::change(kind, c.median_a, raw_b, ga, gb)
        .ok()
        .map_or(c.change()?, |ch| ch.normalised_change);
    Some((c, change))
}

/// The verdict judged on the normalised comparison: a raw change it removes is the machine's.
fn judged(raw: Verdict, normalised: Verdict) -> Verdict {
    match (normalised, raw) {
        (Verdict::NoChange, Verdict::Slower) => Verdict::MachineSlower,
        (Verdict::NoChange, Verdict::Faster) => Verdict::MachineFaster,
        (n, _) => n,
    }
}

/// The runs a metric is compared over: both sides, and for each side that is one run the
/// stored runs of its host that tell the machine's between-run noise (`super::history`),
/// chosen once for every metric.
pub(super) struct Runs<'r, 'a> {
    pub a: &'r [&'a RunRecord],
    pub b: &'r [&'a RunRecord],
    stored_a: Option<Vec<&'a RunRecord>>,
    stored_b: Option<Vec<&'a RunRecord>>,
}

impl<'r, 'a> Runs<'r, 'a> {
    /// The sides and, from `history`, each single-run side's stored runs.
    pub fn new(
        a: &'r [&'a RunRecord],
        b: &'r [&'a RunRecord],
        history: &[&'a RunRecord],
    ) -> Runs<'r, 'a> {
        let compared: Vec<&str> = a.iter().chain(b).map(|r| r.id.as_str()).collect();
        let stored = |side: &[&RunRecord]| match side {
            [run] => Some(stored_runs(history, run, &compared)),
            _ => None,
        };
        Runs {
            a,
            b,
            stored_a: stored(a),
            stored_b: stored(b),
        }
    }

    /// The stored between-run noise of each side that is one run (lent to the other when
    /// only one has it).
    fn noise(&self, wanted: Wanted<'_>) -> (Option<RunNoise>, Option<RunNoise>) {
        let one = |s: &Option<Vec<&RunRecord>>| s.as_deref().and_then(|h| run_noise(h, wanted));
        // A single run without a history of its own (another profile or host) borrows the
        // other side's: its rounds alone would understate it as much.
        match (one(&self.stored_a), one(&self.stored_b)) {
            (None, Some(n)) if self.stored_a.is_some() => (Some(n), Some(n)),
            (Some(n), None) if self.stored_b.is_some() => (Some(n), Some(n)),
            other => other,
        }
    }
}

/// Compares metric `ma` (A's first run) with `mb` (B's first run) over both sides.
pub(super) fn compare_metric(
    experiment: &str,
    (ma, mb): (&Metric, &Metric),
    runs: &Runs<'_, '_>,
    opts: &CompareOptions,
    fail_above: Option<f64>,
) -> MetricComparison {
    let mut out = MetricComparison::new(experiment, mb);
    if ma.unit != mb.unit {
        let units = (ma.unit.as_str(), mb.unit.as_str());
        out.note = Some(format!("units differ ({} in A, {} in B)", units.0, units.1));
        return out;
    }
    let a = gather(runs.a, experiment, &ma.name, ma.unit);
    let b = gather(runs.b, experiment, &mb.name, mb.unit);
    let ClockScaling { scales, basis } = decide_scaling(
        experiment,
        &mb.name,
        mb.unit,
        &a.points(mb.unit),
        &b.points(mb.unit),
    );
    (out.scales_with_clock, out.scaling_basis) = (scales, basis);
    let sets = a.members.len() > 1 || b.members.len() > 1;
    let clocks = a.clocks().zip(b.clocks());
    // In cycles where the comparison itself can be normalised: both sides probed.
    let noise = runs.noise(Wanted::new(experiment, mb, scales && clocks.is_some()));
    (out.run_noise_a, out.run_noise_b) = noise;
    let between = sets || noise.0.is_some() || noise.1.is_some();
    let raw = match raw_comparison(&a, &b, (between, noise), (ma, mb), out.direction, opts) {
        Ok(c) => c,
        Err(note) => {
            out.note = Some(note);
            return out;
        }
    };
    (out.throughput_ratio, out.cache_ratio) = sharing_ratios(&a, &b);
    out.machine_ratio = clocks
        .as_ref()
        .and_then(|(ca, cb)| normalise::machine_ratio(median(ca)?, median(cb)?));
    let normalised = clocks.filter(|_| scales).and_then(|(clocks_a, clocks_b)| {
        let inputs = Inputs {
            a: &a,
            b: &b,
            ma,
            mb,
            clocks_a,
            clocks_b,
            between,
            noise,
        };
        let moved_within = sets
            && (spread(&inputs.clocks_a) > opts.machine_threshold
                || spread(&inputs.clocks_b) > opts.machine_threshold);
        normalised(&inputs, out.direction, opts).map(|n| (n, moved_within))
    });
    judge(&mut out, raw, normalised, opts, fail_above);
    out
}

/// The raw comparison: between runs (of the per-run or per-round medians, with the stored
/// noise of a side that is one run) for sets, rounds or a known history, else of the two
/// runs' samples.
fn raw_comparison(
    a: &Side<'_>,
    b: &Side<'_>,
    (between, noise): (bool, (Option<RunNoise>, Option<RunNoise>)),
    (ma, mb): (&Metric, &Metric),
    direction: Direction,
    opts: &CompareOptions,
) -> Result<SampleComparison, String> {
    if between {
        let (pa, pb) = (a.pooled_samples(), b.pooled_samples());
        let (ra, rb) = (a.medians(), b.medians());
        return compare_run_medians(&ra, &rb, (&pa, &pb), noise, direction, opts)
            .map_err(|e| format!("not compared: {e}"));
    }
    let missing = match (ma.samples.is_empty(), mb.samples.is_empty()) {
        (true, true) => Some("A and B"),
        (true, false) => Some("A"),
        (false, true) => Some("B"),
        (false, false) => None,
    };
    if let Some(side) = missing {
        return Err(format!("no raw samples stored in {side}"));
    }
    compare_samples(&ma.samples, &mb.samples, direction, opts)
        .map_err(|e| format!("not compared: {e}"))
}

/// Stores the comparisons in `out`, decides which one judges it, and settles the verdict.
fn judge(
    out: &mut MetricComparison,
    raw: SampleComparison,
    normalised: Option<((SampleComparison, f64), bool)>,
    opts: &CompareOptions,
    fail_above: Option<f64>,
) {
    let moved_between = out
        .machine_ratio
        .is_some_and(|r| (r - 1.0).abs() > opts.machine_threshold);
    if let Some(((n, change), moved_within)) = normalised {
        out.judged_normalised = moved_between || moved_within;
        out.normalised_change = Some(change);
        out.normalised = Some(n);
    }
    out.comparison = Some(raw);
    settle(out, fail_above);
}

/// The verdict and the `--fail-above` outcome of `out` from the comparisons it holds: the
/// normalised one when `judged_normalised`, else the raw one; then the machine's sharing.
/// Called again after the p-values are adjusted for the whole family (`super::family`).
pub(super) fn settle(out: &mut MetricComparison, fail_above: Option<f64>) {
    let Some(raw) = &out.comparison else {
        return;
    };
    let direction = out.direction;
    let mut verdict = raw.verdict;
    let mut regression = fail_above.is_some_and(|f| raw.regressed_beyond(direction, f));
    if let (true, Some(n)) = (out.judged_normalised, &out.normalised) {
        verdict = judged(raw.verdict, n.verdict);
        regression = fail_above.is_some_and(|f| n.regressed_beyond(direction, f));
    }
    out.verdict = verdict;
    out.regression = regression;
    if let Some(v) = busier(out) {
        out.verdict = v;
        out.regression = false;
    }
}

/// B/A of the throughput probe per core cycle and of the shared-cache probe.
fn sharing_ratios(a: &Side<'_>, b: &Side<'_>) -> (Option<f64>, Option<f64>) {
    (
        a.throughput().zip(b.throughput()).map(|(ta, tb)| tb / ta),
        a.cache_ns().zip(b.cache_ns()).map(|(ca, cb)| cb / ca),
    )
}
