//! The runner: pin, calibrate, then run each experiment in turn, handing every finished
//! result to the observer at once (so the caller can store it before the next one starts);
//! with several rounds, an experiment's result so far after each of its rounds.

use std::cell::RefCell;
use std::time::Instant;

use super::machine::cache::CacheTrail;
use super::rounds::Rounds;
use super::watched::Attempt;
use super::{Ctx, Experiment, ExperimentError, Profile, calibrate, watched};
use crate::model::{ExperimentResult, HostInfo, RunConfig, RunKind, RunRecord, Skip, Status};

/// Options of one bench run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Sampling budgets.
    pub profile: Profile,
    /// CPU to pin the measuring thread to (`None`: the last CPU this process may use).
    pub cpu: Option<usize>,
    /// Seed of the bootstrap resampling.
    pub seed: u64,
    /// Experiment parameters from the command line.
    pub params: Params,
    /// Interleaved passes over the experiments (`--rounds N`; the profile's when absent).
    pub rounds: usize,
}

/// Parameters that individual experiments read (each documents which it uses).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Params {
    /// Largest working set for memory experiments (`--max-size`), bytes.
    pub max_size: Option<u64>,
    /// `sysmeter serve` endpoint for the net group (`--remote HOST[:PORT]`).
    pub remote: Option<String>,
    /// Token the remote `sysmeter serve` wants (`--token`, or `SYSMETER_TOKEN`).
    pub token: Option<String>,
    /// Directory the fs group creates its test files under (`--dir`; default: a temporary
    /// directory on the file system of the working directory).
    pub dir: Option<std::path::PathBuf>,
    /// A network or FUSE mount for `fs.remote_read` (`--remote-dir`).
    pub remote_dir: Option<std::path::PathBuf>,
}

/// Receives the run's events; the harness itself never prints or stores.
pub trait RunObserver {
    /// The run record exists (no results yet).
    fn run_started(&mut self, run: &RunRecord);
    /// Experiment `index` of `total` is starting.
    fn experiment_started(&mut self, index: usize, total: usize, id: &str);
    /// The current experiment started measuring `metric` (called between samples only).
    fn progress(&mut self, metric: &str);
    /// Experiment number `seq` finished (ok, skipped or failed). With several rounds this
    /// comes after each of its rounds with the result so far, which replaces the one an
    /// earlier call gave for `seq`; the last call gives its final result.
    fn experiment_finished(&mut self, seq: usize, result: &ExperimentResult);
}

/// The CPUs this process may use, and the one to measure on.
pub fn choose_cpu(requested: Option<usize>) -> Result<(Vec<usize>, usize), String> {
    let cpus = sysmeter_sys::sched::allowed_cpus()
        .map_err(|e| format!("cannot read this process's CPU affinity: {e}"))?;
    let Some(&last) = cpus.last() else {
        return Err("this process may run on no CPU at all".to_string());
    };
    match requested {
        None => Ok((cpus, last)),
        Some(c) if cpus.contains(&c) => Ok((cpus, c)),
        Some(c) => Err(format!(
            "CPU {c} is not available to this process; choose one of {cpus:?} with --cpu N"
        )),
    }
}

/// Run `experiments` in order and return the record. Stops early (marking the record
/// interrupted) when SIGINT/SIGTERM arrives; everything finished before is kept.
pub fn run_experiments(
    experiments: &[&dyn Experiment],
    host: HostInfo,
    opts: &RunOptions,
    cpus: &[usize],
    cpu: usize,
    observer: &mut dyn RunObserver,
) -> RunRecord {
    let pinned = sysmeter_sys::sched::pin_current_thread(cpu).is_ok();
    let calib = calibrate(&opts.profile);
    let config = RunConfig {
        profile: opts.profile.name.to_string(),
        cpu: pinned.then_some(cpu as u32),
        selected: experiments.iter().map(|e| e.id().to_string()).collect(),
        target_ci_width: opts.profile.target_ci,
        calibration: Some(calib),
        seed: opts.seed,
    };
    let started_ns = jiff::Timestamp::now().as_nanosecond() as i64;
    let mut run = RunRecord::new(RunKind::Bench, started_ns, host, config);
    observer.run_started(&run);
    measure_rounds(
        experiments,
        &mut run,
        opts,
        cpus,
        pinned.then_some(cpu),
        observer,
    );
    if !run.interrupted {
        run.finished_ns = Some(jiff::Timestamp::now().as_nanosecond() as i64);
    }
    run
}

/// Measures the experiments in `opts.rounds` interleaved passes into `run.results`,
/// stopping at Ctrl-C (`run.interrupted`). With one round each result is final, handed to
/// the observer and pushed at once. With more, an experiment's result over its rounds so
/// far goes to the observer after each of its rounds, under the experiment's number and
/// replacing the one before (the last is its final result), so a crash keeps every
/// experiment measured at least once; `run.results` gets the results at the end.
fn measure_rounds(
    experiments: &[&dyn Experiment],
    run: &mut RunRecord,
    opts: &RunOptions,
    cpus: &[usize],
    cpu: Option<usize>,
    observer: &mut dyn RunObserver,
) {
    let planned = opts.rounds.max(1);
    let tsc = run.config.calibration.as_ref().and_then(|c| c.tsc_ghz);
    let mut rounds = Rounds::new(experiments.len(), planned, tsc, opts.seed);
    let total = experiments.len() * planned;
    let mut budget = opts.profile.remeasure_budget;
    'rounds: for round in 0..planned {
        for (i, exp) in experiments.iter().enumerate() {
            if sysmeter_sys::signal::interrupted() {
                run.interrupted = true;
                break 'rounds;
            }
            observer.experiment_started(round * experiments.len() + i, total, exp.id());
            let mut attempt = || run_one(*exp, run, opts, cpus, cpu, observer);
            let remeasure = remeasures(planned, &opts.profile).then_some(&mut budget);
            let Some(result) = watched::measured(*exp, cpu, remeasure, &mut attempt) else {
                run.interrupted = true;
                break 'rounds;
            };
            if planned == 1 {
                observer.experiment_finished(run.results.len(), &result);
                run.results.push(result);
            } else if let Some(so_far) = rounds.add(i, result, &|metrics| {
                super::metric_findings(*exp, &run.host, metrics)
            }) {
                observer.experiment_finished(i, so_far);
                // The later experiments of this round read the earlier ones through
                // `Ctx::previous` (mem.bandwidth sizes DRAM by what mem.latency saw).
                run.results = rounds.so_far();
            }
        }
    }
    if planned > 1 {
        run.results = rounds.finish();
    }
}

/// Whether a run of `planned` rounds under `profile` measures moving experiments again.
/// Decided by the profile's budget, not by what is left of it: once the budget is spent, a
/// moving experiment is still offered to the rule, which keeps it with a
/// `machine.not_remeasured` finding instead of keeping it silently.
fn remeasures(planned: usize, profile: &Profile) -> bool {
    planned == 1 && !profile.remeasure_budget.is_zero()
}

/// Run one experiment; `None` when it was interrupted (its partial result is discarded).
/// The attempt carries the probes the experiment took between the points of its series.
/// `exp`'s share of the run budget in one round.
fn time_budget(exp: &dyn Experiment, opts: &RunOptions) -> std::time::Duration {
    let rounds = opts.rounds.max(1) as f64;
    opts.profile.run_budget.mul_f64(exp.time_share() / rounds)
}

fn run_one(
    exp: &dyn Experiment,
    run: &RunRecord,
    opts: &RunOptions,
    cpus: &[usize],
    cpu: Option<usize>,
    observer: &mut dyn RunObserver,
) -> Option<Attempt> {
    let calib = run.config.calibration.clone().unwrap_or_default();
    let started = Instant::now();
    let mut progress = |m: &str| observer.progress(m);
    let mut ctx = Ctx {
        profile: &opts.profile,
        calib: &calib,
        host: &run.host,
        cpu,
        cpus,
        previous: &run.results,
        seed: opts.seed,
        params: &opts.params,
        progress: &mut progress,
        between: RefCell::new(Vec::new()),
        cache_between: RefCell::new(cache_trail(exp)),
        time_budget: time_budget(exp, opts),
    };
    let outcome = exp.run(&mut ctx);
    let between = ctx.between.take();
    let cache_between = ctx.cache_between.take().unwrap_or_default();
    // Experiments may move the thread (cross-CPU work); put it back for the next one.
    if let Some(c) = cpu {
        let _ = sysmeter_sys::sched::pin_current_thread(c);
    }
    let mut result = ExperimentResult::new(exp.id(), exp.about());
    result.estimates = exp.estimate(&run.host, calib.tsc_ghz);
    match outcome {
        Ok(m) => {
            result.metrics = m.metrics;
            flag_degenerate(&mut result.metrics);
            let quoted = super::metric_findings(exp, &run.host, &result.metrics);
            (result.series, result.artifacts) = (m.series, m.artifacts);
            result.findings = m.findings.into_iter().chain(quoted).collect();
        }
        Err(ExperimentError::Interrupted) => return None,
        Err(ExperimentError::Skipped { reason, hint }) => {
            result.status = Status::Skipped;
            result.skip = Some(Skip { reason, hint });
        }
        Err(ExperimentError::Failed(msg)) => {
            result.status = Status::Failed;
            result.error = Some(msg);
        }
    }
    result.elapsed_ns = started.elapsed().as_nanos() as u64;
    Some(Attempt {
        result,
        between,
        cache_between,
    })
}

/// The shared-cache readings between series points, for the experiments that share the
/// last-level cache with the other CPUs (the watch took the first reading just now).
fn cache_trail(exp: &dyn Experiment) -> Option<CacheTrail> {
    exp.shares_caches_with_other_cpus()
        .then(CacheTrail::started_now)
}

/// The harness's check on every metric an experiment returns: a sample set that is mostly
/// zero or whose CI of the median spans more than a decade is marked (`Metric::degenerate`)
/// so that no renderer prints it as a result. A verdict the experiment gave itself (e.g.
/// `cpu.ops`' latency check) stands.
pub(super) fn flag_degenerate(metrics: &mut [crate::model::Metric]) {
    for m in metrics {
        m.degenerate = crate::stats::degenerate(&m.samples, &m.summary).or(m.degenerate.take());
    }
}

#[cfg(test)]
mod tests {
    use crate::model::{Metric, Unit};
    use crate::stats;

    fn metric(samples: Vec<f64>) -> Metric {
        let summary = stats::summarize(&samples, 1).expect("finite samples");
        Metric {
            samples,
            ..Metric::new("aggregate throughput", Unit::BytesPerSec, summary)
        }
    }

    #[test]
    fn the_harness_flags_what_an_experiment_returns_degenerate() {
        // The sampling of issue 17: windows that held no completion.
        let windows = vec![0.0, 0.0, 0.0, 0.0, 3e5, 2e8, 2.3e8, 4.4e8, 1e8];
        let steady: Vec<f64> = (0..30).map(|i| 2e8 + f64::from(i) * 1e6).collect();
        let mut metrics = vec![metric(windows), metric(steady)];
        super::flag_degenerate(&mut metrics);
        let why = metrics[0].degenerate.as_deref().unwrap_or_default();
        assert!(why.contains("reaches 0"), "{why}");
        assert_eq!(metrics[1].degenerate, None);
    }

    #[test]
    fn a_spent_budget_still_offers_moving_experiments_to_the_rule() {
        // Issue 25's review: at exactly zero left, a moving experiment used to be kept
        // without its `machine.not_remeasured` finding. The profile decides, not what is left.
        let mut default = crate::harness::Profile::default_profile();
        assert!(super::remeasures(1, &default));
        assert!(
            !super::remeasures(3, &default),
            "rounds spread the drift instead"
        );
        default.remeasure_budget = std::time::Duration::ZERO;
        assert!(
            !super::remeasures(1, &default),
            "a zero budget never measures again"
        );
    }
}
