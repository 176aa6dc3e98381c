//! `bench --rounds N`: the results of one experiment from N interleaved passes (ABAB…, so a
//! slow drift of the machine spreads over every experiment instead of landing on one)
//! combined into one result.
//!
//! Per metric: the raw samples of every round pooled (so the summary, CI and percentiles
//! describe all of them), the round medians with their median (the figure to quote) and
//! their coefficient of variation — the between-round CV, which is the reproducibility a
//! user gets from one run to the next, where the CI from the samples of one pass understates
//! it. TSC and core cycles are recomputed from the pooled samples, each round's core cycles
//! with that round's own probe clock. The findings that quote metrics
//! (`Experiment::metric_findings`, passed in as a [`Quote`]) are drawn again from the pooled
//! metrics, in place of the last round's, so they say what the tables say. Everything else
//! that is not a metric (series, the other findings, artifacts, `machine`) is the last
//! round's; `round_machines` keeps every round's machine state. A result of fewer rounds than planned (the run stopped or died before the rest)
//! says so in its first finding, [`PARTIAL`]. [`Rounds`] keeps every experiment's rounds
//! and its result so far, so the runner can hand that over after each round. Pure: depends
//! on `model` and `stats`.

use super::ctx::metric_seed;
use crate::model::{ExperimentResult, Finding, MachineState, Metric, RoundStats, Status};
use crate::stats;

/// The findings an experiment draws from metrics alone (`harness::metric_findings`).
pub type Quote<'a> = &'a dyn Fn(&[Metric]) -> Vec<Finding>;

/// Key of the finding of a result measured in fewer rounds than planned; its value is the
/// number of rounds measured.
pub const PARTIAL: &str = "rounds.partial";

/// The rounds of every experiment of a run so far and each one's result combined over them.
#[derive(Debug)]
pub struct Rounds {
    planned: usize,
    tsc_ghz: Option<f64>,
    seed: u64,
    measured: Vec<Vec<ExperimentResult>>,
    combined: Vec<Option<ExperimentResult>>,
}

impl Rounds {
    /// No rounds yet of `experiments` experiments, each to be measured `planned` times.
    /// `tsc_ghz` and `seed` as in [`combine`].
    pub fn new(experiments: usize, planned: usize, tsc_ghz: Option<f64>, seed: u64) -> Rounds {
        Rounds {
            planned,
            tsc_ghz,
            seed,
            measured: vec![Vec::new(); experiments],
            combined: vec![None; experiments],
        }
    }

    /// Adds the next round of experiment number `i`, whose metric findings `quote` draws;
    /// its result over the rounds so far.
    pub fn add(
        &mut self,
        i: usize,
        round: ExperimentResult,
        quote: Quote<'_>,
    ) -> Option<&ExperimentResult> {
        let rounds = self.measured.get_mut(i)?;
        rounds.push(round);
        let combined = combine(rounds, self.planned, (self.tsc_ghz, self.seed), quote);
        let slot = self.combined.get_mut(i)?;
        *slot = combined;
        slot.as_ref()
    }

    /// The results over the rounds so far of the experiments measured at least once, in
    /// experiment order: what a later experiment reads of the earlier ones (`Ctx::previous`).
    pub fn so_far(&self) -> Vec<ExperimentResult> {
        self.combined.iter().flatten().cloned().collect()
    }

    /// The results of the experiments measured at least once, in experiment order.
    pub fn finish(self) -> Vec<ExperimentResult> {
        self.combined.into_iter().flatten().collect()
    }
}

/// One result from the per-round results of an experiment, in round order, of `planned`
/// rounds. `tsc_ghz` is the run's TSC rate (for the TSC-cycle summary), `seed` the run's
/// bootstrap seed; `quote` draws the experiment's findings from its metrics.
pub fn combine(
    rounds: &[ExperimentResult],
    planned: usize,
    (tsc_ghz, seed): (Option<f64>, u64),
    quote: Quote<'_>,
) -> Option<ExperimentResult> {
    let machines: Vec<MachineState> = rounds.iter().filter_map(|r| r.machine.clone()).collect();
    let elapsed: u64 = rounds.iter().map(|r| r.elapsed_ns).sum();
    let ok: Vec<&ExperimentResult> = rounds.iter().filter(|r| r.status == Status::Ok).collect();
    let mut result = match ok.last() {
        Some(last) => (*last).clone(),
        None => rounds.last()?.clone(),
    };
    result.elapsed_ns = elapsed;
    result.round_machines = machines;
    if ok.len() > 1 {
        for m in result.metrics.iter_mut() {
            let per_round: Vec<(&Metric, Option<f64>)> = ok
                .iter()
                .filter_map(|r| {
                    let ghz = r.machine.as_ref().map(MachineState::core_ghz);
                    r.metrics
                        .iter()
                        .find(|x| x.name == m.name)
                        .map(|x| (x, ghz))
                })
                .collect();
            pool(m, &per_round, tsc_ghz, seed);
        }
        let last_round = ok.last().map_or_else(Vec::new, |r| quote(&r.metrics));
        requote(&mut result.findings, &last_round, quote(&result.metrics));
    }
    if rounds.len() < planned && result.status == Status::Ok {
        result.findings.insert(0, partial(rounds.len(), planned));
    }
    Some(result)
}

/// Replaces in `findings` those the last round's metrics gave (`last_round`) by `pooled`,
/// the same findings drawn from the pooled metrics, where the first of them stood.
fn requote(findings: &mut Vec<Finding>, last_round: &[Finding], pooled: Vec<Finding>) {
    let quoted = |f: &Finding| last_round.iter().any(|q| q.key == f.key);
    let at = findings.iter().position(quoted).unwrap_or(findings.len());
    findings.retain(|f| !quoted(f));
    findings.splice(at..at, pooled);
}

/// The finding of a result measured in `done` of `planned` rounds.
fn partial(done: usize, planned: usize) -> Finding {
    let only = match done {
        1 => "that one round".to_string(),
        n => format!("those {n} rounds"),
    };
    Finding::new(
        PARTIAL,
        format!(
            "Measured in {done} of {planned} rounds: the run ended before the rest, so these \
             figures come from {only} only."
        ),
        Some(done as f64),
    )
}

/// A "not a result" verdict the experiment itself gave the metric in some round: one the
/// harness's check of that round's own samples does not give.
fn own_verdict(per_round: &[(&Metric, Option<f64>)]) -> Option<String> {
    per_round.iter().find_map(|(x, _)| {
        let harness = stats::degenerate(&x.samples, &x.summary);
        x.degenerate.clone().filter(|_| harness.is_none())
    })
}

/// Replaces `m`'s samples and statistics with those of every round.
fn pool(m: &mut Metric, per_round: &[(&Metric, Option<f64>)], tsc_ghz: Option<f64>, seed: u64) {
    if per_round.len() < 2 {
        return;
    }
    let seed = metric_seed(seed, &m.name);
    let samples: Vec<f64> = per_round
        .iter()
        .flat_map(|(x, _)| x.samples.iter().copied())
        .collect();
    let Ok(summary) = stats::summarize(&samples, seed) else {
        return;
    };
    let medians: Vec<f64> = per_round.iter().map(|(x, _)| x.summary.median).collect();
    m.rounds = round_stats(&medians);
    m.cycles = match (m.cycles, tsc_ghz) {
        (Some(_), Some(ghz)) => Some(summary.scaled(ghz)),
        _ => None,
    };
    let all_clocked = per_round.iter().all(|(_, g)| g.is_some());
    m.core_cycles = match (m.core_cycles, all_clocked) {
        (Some(_), true) => {
            let core: Vec<f64> = per_round
                .iter()
                .flat_map(|(x, g)| x.samples.iter().map(move |s| s * g.unwrap_or(f64::NAN)))
                .collect();
            stats::summarize(&core, seed).ok()
        }
        _ => None,
    };
    m.degenerate = stats::degenerate(&samples, &summary).or_else(|| own_verdict(per_round));
    m.summary = summary;
    m.samples = samples;
}

/// The round medians, their median and their coefficient of variation.
pub fn round_stats(medians: &[f64]) -> Option<RoundStats> {
    Some(RoundStats {
        medians: medians.to_vec(),
        median: stats::median(medians).ok()?,
        cv: stats::cv(medians),
    })
}

#[cfg(test)]
mod tests;
