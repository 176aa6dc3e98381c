//! `bench --rounds N`: the results of one experiment from N interleaved passes (ABAB…, so a
//! slow drift of the machine spreads over every experiment instead of landing on one)
//! combined into one result.
//!
//! Per metric: the raw samples of every round pooled (so the summary, CI and percentiles
//! describe all of them), the round medians with their median (the figure to quote) and
//! their coefficient of variation — the between-round CV, which is the reproducibility a
//! user gets from one run to the next, where the CI from the samples of one pass understates
//! it. TSC and core cycles are recomputed from the pooled samples, each round's core cycles
//! with that round's own probe clock. Everything that is not a metric (series, findings,
//! artifacts, `machine`) is the last round's; `round_machines` keeps every round's machine
//! state. A result of fewer rounds than planned (the run stopped or died before the rest)
//! says so in its first finding, [`PARTIAL`]. [`Rounds`] keeps every experiment's rounds
//! and its result so far, so the runner can hand that over after each round. Pure: depends
//! on `model` and `stats`.

use super::ctx::metric_seed;
use crate::model::{ExperimentResult, Finding, MachineState, Metric, RoundStats, Status};
use crate::stats;

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

    /// Adds the next round of experiment number `i`; its result over the rounds so far.
    pub fn add(&mut self, i: usize, round: ExperimentResult) -> Option<&ExperimentResult> {
        let rounds = self.measured.get_mut(i)?;
        rounds.push(round);
        let combined = combine(rounds, self.planned, self.tsc_ghz, self.seed);
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
/// bootstrap seed.
pub fn combine(
    rounds: &[ExperimentResult],
    planned: usize,
    tsc_ghz: Option<f64>,
    seed: u64,
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
    }
    if rounds.len() < planned && result.status == Status::Ok {
        result.findings.insert(0, partial(rounds.len(), planned));
    }
    Some(result)
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
mod tests {
    use super::*;
    use crate::model::{About, Unit};

    fn metric(name: &str, samples: Vec<f64>) -> Metric {
        let summary = stats::summarize(&samples, 1).expect("finite samples");
        Metric {
            cycles: Some(summary),
            samples,
            core_cycles: Some(summary),
            ..Metric::new(name, Unit::Ns, summary)
        }
    }

    fn round(samples: Vec<f64>, ghz: f64) -> ExperimentResult {
        let mut r = ExperimentResult::new("os.syscall", About::default());
        r.metrics = vec![metric("null", samples)];
        r.elapsed_ns = 10;
        r.machine = Some(crate::model::fixture::steady_machine(ghz));
        r
    }

    #[test]
    fn rounds_pool_samples_and_report_the_between_round_spread() {
        let rounds = vec![
            round(vec![100.0, 101.0, 99.0], 4.0),
            round(vec![120.0, 121.0, 119.0], 3.0),
            round(vec![110.0, 111.0, 109.0], 3.5),
        ];
        let r = combine(&rounds, 3, Some(2.5), 7).expect("three rounds");
        let m = &r.metrics[0];
        assert_eq!(m.samples.len(), 9);
        let s = m.rounds.as_ref().expect("round statistics");
        assert_eq!(s.medians, [100.0, 120.0, 110.0]);
        assert_eq!(s.median, 110.0);
        assert!((s.cv - 10.0 / 110.0).abs() < 1e-9, "cv {}", s.cv);
        assert_eq!(r.round_machines.len(), 3);
        assert_eq!(r.elapsed_ns, 30);
        // Core cycles use each round's own clock: 400, 360, 385 cycles per op.
        let c = m.core_cycles.expect("core cycles");
        assert_eq!(c.median, 385.0);
        assert_eq!(m.cycles.expect("tsc cycles").median, 110.0 * 2.5);
    }

    #[test]
    fn failed_rounds_do_not_pool_and_a_single_round_is_unchanged() {
        let mut bad = round(vec![1.0, 1.0, 1.0], 4.0);
        bad.status = Status::Failed;
        let good = round(vec![100.0, 101.0, 99.0], 4.0);
        let r = combine(&[bad, good.clone()], 2, None, 7).expect("one good round");
        assert_eq!(r.metrics, good.metrics);
        assert_eq!(r.round_machines.len(), 2);
        assert!(combine(&[], 1, None, 7).is_none());
    }

    #[test]
    fn a_pooled_metric_that_is_mostly_zero_is_not_a_result() {
        let zeros = |v: f64| vec![0.0, 0.0, 0.0, 0.0, v, v * 1.1];
        let rounds = vec![round(zeros(5e8), 3.0), round(zeros(4e8), 3.0)];
        let combined = combine(&rounds, 2, Some(2.6), 1).expect("a result");
        let why = combined.metrics[0]
            .degenerate
            .as_deref()
            .unwrap_or_default();
        assert!(why.contains("8 of 12 samples are 0"), "{why}");
        // Ordinary rounds stay results.
        let ok = vec![
            round(vec![200.0, 201.0, 199.0], 3.0),
            round(vec![202.0, 200.0], 3.0),
        ];
        assert_eq!(
            combine(&ok, 2, Some(2.6), 1).expect("a result").metrics[0].degenerate,
            None
        );
    }

    fn partial_of(r: &ExperimentResult) -> Option<&Finding> {
        r.findings.iter().find(|f| f.key == PARTIAL)
    }

    #[test]
    fn a_result_of_fewer_rounds_than_planned_says_so_until_the_last_round() {
        let mut rounds = Rounds::new(2, 3, None, 7);
        let first = rounds
            .add(0, round(vec![100.0, 101.0], 4.0))
            .expect("a result");
        let f = partial_of(first).expect("partial after one round");
        assert_eq!(f.value, Some(1.0));
        assert!(f.text.contains("1 of 3 rounds"), "{}", f.text);
        assert_eq!(first.findings[0].key, PARTIAL, "shown first");
        let mut skipped = ExperimentResult::new("fs.read", About::default());
        skipped.status = Status::Skipped;
        let other = rounds.add(1, skipped).expect("a result");
        assert!(partial_of(other).is_none(), "a skip is no measurement");
        let second = rounds
            .add(0, round(vec![110.0, 111.0], 4.0))
            .expect("a result");
        assert!(partial_of(second).expect("2 of 3").text.contains("2 of 3"));
        assert_eq!(
            second.metrics[0].rounds.as_ref().map(|r| r.medians.len()),
            Some(2)
        );
        let last = rounds
            .add(0, round(vec![120.0, 121.0], 4.0))
            .expect("a result");
        assert!(partial_of(last).is_none(), "{:?}", last.findings);
        let results = rounds.finish();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0].metrics[0].samples.len(), 6);
        assert_eq!(results[1].status, Status::Skipped);
    }
}
