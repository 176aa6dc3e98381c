//! The run-to-run interval of a metric: a 95% prediction interval for the median of the next
//! run on this machine, beside the within-run 95% CI of the median (which only says how well
//! this run's samples pin down this run's median, and which the next run misses more often
//! than not on a machine whose state moves between runs).
//!
//! The per-run values are those `compare` learns the between-run noise from
//! (`compare::history`: the median of a run's round medians, or its median), taken as
//! measured (not in core cycles: the interval is read in the metric's unit). From, in order:
//!
//! 1. **history**: this run and the stored runs of its host, profile and sysmeter version
//!    that started no later than it (`history::stored_runs`; the newest [`HISTORY_RUNS`]
//!    values), when there are at least [`MIN_HISTORY_RUNS`];
//! 2. **rounds**: this run's round medians (`--rounds N`, N ≥ 2);
//! 3. **this run only**: the within-run CI itself, said to be nothing more.
//!
//! With `n` values of mean `m` and sample standard deviation `s` on the log scale, the
//! interval is `exp(m ± √((t · s · √(1 + 1/n))² + w²))`: Student's t at 0.975 with n − 1
//! degrees of freedom, and `w` the half-width of this run's within-run CI on the log scale
//! (the next run's median carries a sampling error of its own of about that size). The
//! reasons are in docs/methodology.md ("Two intervals").
//!
//! Pure: a function of the records it is given (`commands::run_history` loads them).
//! Depends on `model`, `statrs` and `stats::compare::history`.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::compare::history::{HISTORY_RUNS, MIN_HISTORY_RUNS, Wanted, run_value_ln, stored_runs};
use super::compare::sets::mean_var;
use crate::model::{IntervalBasis, Metric, RunRecord, RunToRun, Status};

/// The run-to-run interval of metric `m` of experiment `experiment` of `run`, given the
/// stored runs `history` (any runs: those of another host, profile or version, newer than
/// `run`, or `run` itself are left out here). `None` for a metric that is not a result
/// (degenerate) or has no finite median.
pub fn run_to_run(
    run: &RunRecord,
    experiment: &str,
    m: &Metric,
    history: &[&RunRecord],
) -> Option<RunToRun> {
    if m.degenerate.is_some() || !m.summary.median.is_finite() {
        return None;
    }
    let w = within_half_log(m);
    let wanted = Wanted::new(experiment, m, false);
    let logs = history_logs(run, wanted, history);
    if let (Some(w), true) = (w, logs.len() >= MIN_HISTORY_RUNS) {
        return interval(IntervalBasis::History, &logs, w);
    }
    let rounds: Option<Vec<f64>> = (m.rounds.as_ref())
        .filter(|r| r.medians.len() >= 2)
        .and_then(|r| r.medians.iter().map(|&x| positive_ln(x)).collect());
    if let (Some(w), Some(logs)) = (w, rounds) {
        return interval(IntervalBasis::Rounds, &logs, w);
    }
    Some(RunToRun {
        basis: IntervalBasis::ThisRun,
        runs: 1,
        lo: m.summary.ci95.0,
        hi: m.summary.ci95.1,
        sd_log: 0.0,
    })
}

/// Fills `run_to_run` of every metric of `run`'s measured experiments ([`run_to_run`]).
pub fn annotate(run: &mut RunRecord, history: &[&RunRecord]) {
    let found: Vec<Vec<Option<RunToRun>>> = (run.results.iter())
        .map(|r| {
            (r.metrics.iter())
                .map(|m| match r.status {
                    Status::Ok => run_to_run(run, &r.id, m, history),
                    _ => None,
                })
                .collect()
        })
        .collect();
    for (r, intervals) in run.results.iter_mut().zip(found) {
        for (m, i) in r.metrics.iter_mut().zip(intervals) {
            m.run_to_run = i;
        }
    }
}

/// ln of the per-run values of `run` and of the runs of `history` that tell its noise and
/// started no later than it, newest first, at most [`HISTORY_RUNS`]; empty when `run` itself
/// has no value.
fn history_logs(run: &RunRecord, wanted: Wanted<'_>, history: &[&RunRecord]) -> Vec<f64> {
    let Some(own) = run_value_ln(run, wanted) else {
        return Vec::new();
    };
    let earlier: Vec<&RunRecord> = (history.iter().copied())
        .filter(|h| h.started_ns <= run.started_ns)
        .collect();
    let stored = stored_runs(&earlier, run, &[run.id.as_str()]);
    let mut logs = vec![own];
    logs.extend(stored.iter().filter_map(|h| run_value_ln(h, wanted)));
    logs.truncate(HISTORY_RUNS);
    logs
}

/// Half-width of the within-run 95% CI of the median on the log scale (the larger side);
/// `None` when the median or an end of the CI is not positive and finite.
fn within_half_log(m: &Metric) -> Option<f64> {
    let (lo, hi) = m.summary.ci95;
    let med = positive_ln(m.summary.median)?;
    Some((positive_ln(hi)? - med).max(med - positive_ln(lo)?))
}

fn positive_ln(x: f64) -> Option<f64> {
    (x.is_finite() && x > 0.0).then(|| x.ln())
}

/// The prediction interval of the next value of `logs` (at least 2), widened by the
/// within-run half-width `w` in quadrature, back on the metric's scale.
fn interval(basis: IntervalBasis, logs: &[f64], w: f64) -> Option<RunToRun> {
    let (mean, sd, half) = prediction_half_width(logs, w)?;
    Some(RunToRun {
        basis,
        runs: logs.len(),
        lo: (mean - half).exp(),
        hi: (mean + half).exp(),
        sd_log: sd,
    })
}

/// Mean and sample standard deviation of `logs`, and the half-width
/// `√((t₀.₉₇₅,ₙ₋₁ · s · √(1 + 1/n))² + w²)`; `None` with fewer than 2 values.
pub fn prediction_half_width(logs: &[f64], w: f64) -> Option<(f64, f64, f64)> {
    let n = logs.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let (mean, var) = mean_var(logs);
    let sd = var.sqrt();
    let t = StudentsT::new(0.0, 1.0, nf - 1.0).ok()?.inverse_cdf(0.975);
    let between = t * sd * (1.0 + 1.0 / nf).sqrt();
    Some((mean, sd, between.hypot(w)))
}

#[cfg(test)]
mod tests;
