//! One experiment measured under the machine-state probe: a [`Watch`] around it, its
//! `machine` record, the core-cycle equivalent of every time metric, and — where the profile
//! asks for it — one more attempt when the machine did not hold still.
//!
//! The re-measurement rule: an `ok` experiment whose machine state is unstable is measured
//! again once, after the probe has settled (two probes [`SETTLE_GAP`] apart that agree within
//! the drift thresholds, waiting at most [`SETTLE_MAX`]), when its first attempt took no
//! longer than what is left of the run's re-measure budget (`Profile::remeasure_budget`);
//! the second attempt is kept whatever it shows, with a `machine.remeasured` finding that
//! quotes why the first was discarded. One that does not fit the budget keeps its first
//! attempt and says so (`machine.not_remeasured`).
//! Depends on `model`, `stats` and `harness::machine`.

use std::time::{Duration, Instant};

use super::Experiment;
use super::machine::cache::{CACHE_SPREAD, CacheTrail};
use super::machine::judge::{DEFAULT_LIMITS, OTHER_CPUS_SHARE};
use super::machine::sample::relative_change;
use super::machine::{Limits, ProbeSample, Watch};
use crate::model::{CacheShare, ExperimentResult, Finding, MachineState, Status, Unit, units};

/// Pause between the probes that decide the machine has settled.
pub const SETTLE_GAP: Duration = Duration::from_millis(100);

/// Longest wait for the machine to settle before measuring again anyway. Waiting longer
/// rarely helps on a host whose neighbours keep it moving, and the wait is the run's time.
pub const SETTLE_MAX: Duration = Duration::from_millis(500);

/// The drift thresholds for `exp`: experiments that run work of their own beside the
/// measuring thread ([`Experiment::shares_measuring_cpu`]) would otherwise always count it
/// as other tasks, run-queue wait or a busy SMT sibling (the throughput probe), so for them
/// only the core clock and steal time are judged. Experiments that depend on the cache they
/// share with the other CPUs ([`Experiment::shares_caches_with_other_cpus`]) are also judged
/// on how busy those were.
pub fn limits_for(exp: &dyn Experiment) -> Limits {
    let mut limits = DEFAULT_LIMITS;
    if exp.shares_caches_with_other_cpus() {
        limits.other_cpus_share = OTHER_CPUS_SHARE;
    }
    if exp.shares_measuring_cpu() {
        limits.other_share = f64::INFINITY;
        limits.runqueue_share = f64::INFINITY;
        limits.throughput_change = f64::INFINITY;
    }
    limits
}

/// One measurement of an experiment: its result and the probes it took between the points
/// of its series (`Ctx::probe_between_points`).
pub struct Attempt {
    /// The result as the experiment produced it.
    pub result: ExperimentResult,
    /// Probes between series points, for the stability judgment.
    pub between: Vec<ProbeSample>,
    /// Shared-cache readings between series points (experiments that share caches only).
    pub cache_between: CacheTrail,
}

/// Runs `measure` (one attempt of `exp`) inside a watch on `cpu` and records the machine's
/// state and core cycles in the result; `None` when the attempt was interrupted.
pub fn watched(
    exp: &dyn Experiment,
    cpu: Option<usize>,
    measure: &mut dyn FnMut() -> Option<Attempt>,
) -> Option<ExperimentResult> {
    let watch = cpu.and_then(|c| Watch::start(c).ok());
    let watch = match watch {
        Some(w) if exp.shares_caches_with_other_cpus() => Some(w.with_cache()),
        w => w,
    };
    let Attempt {
        mut result,
        between,
        cache_between,
    } = measure()?;
    if let Some(w) = watch {
        result.machine = w.finish(&between, &cache_between, &limits_for(exp)).ok();
    }
    if let Some(c) = result.machine.as_ref().and_then(|m| m.cache) {
        result.findings.push(cache_finding(&c));
    }
    add_core_cycles(&mut result);
    Some(result)
}

/// [`watched`], then once more after the machine settles when the first attempt was
/// measured on a machine that did not hold still and fits in `budget` (what is left of the
/// run's re-measure budget, reduced by what the second attempt and its settling took;
/// `None` never measures again).
pub fn measured(
    exp: &dyn Experiment,
    cpu: Option<usize>,
    budget: Option<&mut Duration>,
    measure: &mut dyn FnMut() -> Option<Attempt>,
) -> Option<ExperimentResult> {
    let mut first = watched(exp, cpu, measure)?;
    let Some(left) = budget else {
        return Some(first);
    };
    let reason = match next_step(&first, *left) {
        Next::Keep => return Some(first),
        Next::OverBudget(finding) => {
            first.findings.push(finding);
            return Some(first);
        }
        Next::Again(reason) => reason,
    };
    let started = Instant::now();
    settle(&limits_for(exp));
    let mut again = watched(exp, cpu, measure)?;
    *left = left.saturating_sub(started.elapsed());
    again
        .findings
        .push(remeasured_finding(&reason, again.machine.as_ref()));
    Some(again)
}

/// What follows a first attempt.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Keep it: it failed, was skipped, or the machine held still.
    Keep,
    /// Measure again (the machine moved, for this reason).
    Again(String),
    /// Keep it with this finding: the machine moved, but a second attempt does not fit.
    OverBudget(Finding),
}

/// The re-measurement rule for an attempt with `left` of the run's re-measure budget.
pub fn next_step(first: &ExperimentResult, left: Duration) -> Next {
    let reason = match (&first.machine, first.status) {
        (Some(m), Status::Ok) if !m.stable => m.reason.clone().unwrap_or_default(),
        _ => return Next::Keep,
    };
    let took = Duration::from_nanos(first.elapsed_ns);
    if took > left {
        return Next::OverBudget(not_remeasured_finding(&reason, took, left));
    }
    Next::Again(reason)
}

/// The finding of an experiment measured on a moving machine and kept, because measuring it
/// again would have taken more than the run's re-measure budget had left.
pub fn not_remeasured_finding(reason: &str, took: Duration, left: Duration) -> Finding {
    Finding::new(
        "machine.not_remeasured",
        format!(
            "Kept although the machine moved ({reason}): measuring it again would take about \
             {}, more than the {} left of this run's re-measure budget; `--thorough` (3 \
             interleaved rounds) spreads such drift instead.",
            units::duration_ns(took.as_nanos() as f64),
            units::duration_ns(left.as_nanos() as f64),
        ),
        None,
    )
}

/// What the shared-cache probe saw during an experiment, for the reader of its last-level
/// figures.
pub fn cache_finding(c: &CacheShare) -> Finding {
    let steady = c.max_ns / c.min_ns <= CACHE_SPREAD;
    Finding::new(
        "machine.cache_share",
        format!(
            "Shared-cache probe: a {} random chase took {} per load ({} readings, median {}); \
             {}",
            units::size(c.bytes),
            units::range(c.min_ns, c.max_ns, Unit::Ns),
            c.count,
            units::value(c.median_ns, Unit::Ns),
            if steady {
                "it held still, so the last-level figures were measured with one share of \
                 that cache."
            } else {
                "the share of the last-level cache left to this CPU changed while it ran \
                 (other CPUs or other guests of the host), so its end and the latencies near \
                 it describe that share, not the cache's size (docs/compare.md)."
            }
        ),
        None,
    )
}

/// The finding that says an experiment was measured twice, and why.
pub fn remeasured_finding(reason: &str, second: Option<&MachineState>) -> Finding {
    let outcome = match second {
        Some(m) if m.stable => "the machine held still for the second attempt",
        Some(_) => "the machine moved again during the second attempt (see its reason)",
        None => "the machine state of the second attempt could not be read",
    };
    Finding::new(
        "machine.remeasured",
        format!("Measured again: the first attempt was discarded because {reason}; {outcome}."),
        None,
    )
}

/// Waits until two probes [`SETTLE_GAP`] apart agree within the limits' clock and
/// throughput thresholds, or [`SETTLE_MAX`] has passed. Returns whether it settled.
pub fn settle(limits: &Limits) -> bool {
    let until = Instant::now() + SETTLE_MAX;
    let mut last = ProbeSample::take();
    while Instant::now() < until {
        std::thread::sleep(SETTLE_GAP);
        let now = ProbeSample::take();
        if agree(&last, &now, limits) {
            return true;
        }
        last = now;
    }
    false
}

/// Whether two probes agree within the clock and throughput thresholds.
pub fn agree(a: &ProbeSample, b: &ProbeSample, limits: &Limits) -> bool {
    let within =
        |x: f64, y: f64, limit: f64| relative_change(x, y).is_some_and(|c| c.abs() <= limit);
    within(a.core_ghz, b.core_ghz, limits.speed_change)
        && within(a.throughput, b.throughput, limits.throughput_change)
}

/// Sets `core_cycles` of every time metric: its statistics × the experiment's core clock
/// (the mean of the start and end probes).
pub fn add_core_cycles(result: &mut ExperimentResult) {
    let Some(ghz) = result.machine.as_ref().map(MachineState::core_ghz) else {
        return;
    };
    if !(ghz.is_finite() && ghz > 0.0) {
        return;
    }
    for m in result.metrics.iter_mut().filter(|m| m.unit == Unit::Ns) {
        m.core_cycles = Some(m.summary.scaled(ghz));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Summary;

    fn metric(name: &str, unit: Unit, summary: Summary) -> crate::model::Metric {
        crate::model::Metric::new(name, unit, summary)
    }

    fn probe(ghz: f64, tp: f64) -> ProbeSample {
        ProbeSample {
            core_ghz: ghz,
            throughput: tp,
            syscall_ns: 200.0,
        }
    }

    #[test]
    fn probes_agree_within_the_thresholds_only() {
        let l = DEFAULT_LIMITS;
        assert!(agree(&probe(3.7, 14.0), &probe(3.6, 13.0), &l));
        assert!(!agree(&probe(3.7, 14.0), &probe(3.0, 14.0), &l));
        assert!(!agree(&probe(3.7, 14.0), &probe(3.7, 7.5), &l));
    }

    #[test]
    fn core_cycles_scale_time_metrics_by_the_mean_clock() {
        let mut r = ExperimentResult::new("x.y", Default::default());
        let s = Summary {
            n: 3,
            median: 100.0,
            ci95: (90.0, 110.0),
            cv: 0.1,
            ..Summary::default()
        };
        r.metrics = vec![metric("t", Unit::Ns, s), metric("b", Unit::BytesPerSec, s)];
        add_core_cycles(&mut r);
        assert!(
            r.metrics[0].core_cycles.is_none(),
            "no machine state, no core cycles"
        );
        r.machine = Some(MachineState {
            core_ghz_start: 4.0,
            core_ghz_end: 3.0,
            stable: false,
            reason: Some("x".into()),
            ..crate::model::fixture::steady_machine(4.0)
        });
        add_core_cycles(&mut r);
        let c = r.metrics[0]
            .core_cycles
            .expect("time metric gets core cycles");
        assert_eq!(c.median, 350.0);
        assert_eq!(c.ci95, (315.0, 385.0));
        assert_eq!(c.cv, 0.1);
        assert!(r.metrics[1].core_cycles.is_none(), "a rate has no cycles");
    }

    fn attempt(stable: bool, took_ms: u64) -> ExperimentResult {
        let mut r = ExperimentResult::new("x.y", Default::default());
        r.elapsed_ns = took_ms * 1_000_000;
        r.machine = Some(MachineState {
            stable,
            reason: (!stable).then(|| "the hypervisor took 17% of the time (steal)".into()),
            ..crate::model::fixture::steady_machine(3.0)
        });
        r
    }

    #[test]
    fn only_a_moved_attempt_that_fits_the_budget_is_measured_again() {
        let left = Duration::from_secs(4);
        assert_eq!(next_step(&attempt(true, 100), left), Next::Keep);
        let reason = "the hypervisor took 17% of the time (steal)".to_string();
        assert_eq!(next_step(&attempt(false, 100), left), Next::Again(reason));
        let mut failed = attempt(false, 100);
        failed.status = Status::Failed;
        assert_eq!(next_step(&failed, left), Next::Keep, "a failure is final");
        let Next::OverBudget(f) = next_step(&attempt(false, 4_500), left) else {
            panic!("a 4.5 s attempt does not fit 4 s");
        };
        assert_eq!(f.key, "machine.not_remeasured");
        assert!(
            f.text.contains("steal") && f.text.contains("4.5"),
            "{}",
            f.text
        );
        assert!(matches!(
            next_step(&attempt(false, 1), Duration::ZERO),
            Next::OverBudget(_)
        ));
    }

    #[test]
    fn the_remeasured_finding_quotes_both_attempts() {
        let f = remeasured_finding("machine speed changed 24% during this experiment", None);
        assert_eq!(f.key, "machine.remeasured");
        assert!(f.text.contains("24%") && f.text.contains("could not be read"));
    }
}
