//! [`Ctx`]: what an experiment gets to measure with, and the adaptive sampling loop behind
//! [`Ctx::measure`].

use std::cell::RefCell;
use std::time::{Duration, Instant};

use super::loop_ref::LoopReference;
use super::machine::ProbeSample;
use super::machine::cache::CacheTrail;
use super::{ExperimentError, Profile};
use crate::model::{Calibration, ExperimentResult, Finding, HostInfo, Metric, Series, Unit};
use crate::stats;

/// How to time one operation.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Metric name, unique within the experiment.
    pub name: String,
    /// Operations performed by one iteration of the workload.
    pub ops_per_iter: u64,
    /// Whether the workload's loop is the harness loop (`for _ in 0..iters`), whose
    /// calibrated per-iteration cost is then subtracted.
    pub subtract_loop: bool,
    /// Note for the report table.
    pub note: Option<String>,
    /// Share of the profile's time budget this metric may spend (1 unless a long series of
    /// metrics asks for less, see [`Spec::budget_share`]).
    pub budget_share: f64,
}

impl Spec {
    /// One operation per iteration of the harness loop.
    pub fn new(name: &str) -> Spec {
        Spec {
            name: name.to_string(),
            ops_per_iter: 1,
            subtract_loop: true,
            note: None,
            budget_share: 1.0,
        }
    }
    /// Spend at most `share` of the profile's budget on this metric: for experiments of
    /// many metrics whose samples are long and rarely reach the target CI (bandwidth by
    /// level, kernel and thread count), so the experiment as a whole stays within the run.
    pub fn budget_share(mut self, share: f64) -> Spec {
        self.budget_share = share.clamp(0.05, 1.0);
        self
    }
    /// Each iteration performs `n` operations (e.g. an unrolled chain).
    pub fn ops(mut self, n: u64) -> Spec {
        self.ops_per_iter = n.max(1);
        self
    }
    /// The workload brings its own loop: do not subtract the harness loop overhead.
    pub fn own_loop(mut self) -> Spec {
        self.subtract_loop = false;
        self
    }
    /// Attach a note.
    pub fn note(mut self, note: &str) -> Spec {
        self.note = Some(note.to_string());
        self
    }
}

/// What an experiment's `run` returns.
#[derive(Debug, Default)]
pub struct Measured {
    /// Scalar metrics.
    pub metrics: Vec<Metric>,
    /// Curves.
    pub series: Vec<Series>,
    /// Findings.
    pub findings: Vec<Finding>,
    /// Non-numeric outputs.
    pub artifacts: Vec<crate::model::Artifact>,
}

impl Measured {
    /// The figure of the metric named `name`, if measured: its median, or with rounds the
    /// median of its round medians ([`Metric::figure`], what every page shows).
    pub fn median(&self, name: &str) -> Option<f64> {
        self.metrics
            .iter()
            .find(|m| m.name == name)
            .map(Metric::figure)
    }
    /// Add a finding.
    pub fn find(&mut self, key: &str, text: String, value: Option<f64>) {
        self.findings.push(Finding::new(key, text, value));
    }
}

/// The measuring context handed to [`super::Experiment::run`].
pub struct Ctx<'a> {
    /// Sampling budgets.
    pub profile: &'a Profile,
    /// This run's calibration.
    pub calib: &'a Calibration,
    /// The machine.
    pub host: &'a HostInfo,
    /// CPU the measuring thread is pinned to.
    pub cpu: Option<usize>,
    /// CPUs this process may use.
    pub cpus: &'a [usize],
    /// Results of the experiments that already ran in this run.
    pub previous: &'a [ExperimentResult],
    /// Experiment parameters from the command line.
    pub params: &'a super::Params,
    pub(super) seed: u64,
    pub(super) progress: &'a mut dyn FnMut(&str),
    /// Probes taken between the points of a series ([`Ctx::probe_between_points`]); the
    /// watch around the experiment judges them with its start and end probes.
    pub(super) between: RefCell<Vec<ProbeSample>>,
    /// Shared-cache readings between series points, `Some` for experiments that share the
    /// last-level cache with the other CPUs (at most one per `cache::BETWEEN_GAP`).
    pub(super) cache_between: RefCell<Option<CacheTrail>>,
    /// This experiment's part of the run budget for one round ([`Ctx::time_budget`]).
    pub(super) time_budget: Duration,
}

impl Ctx<'_> {
    /// This run's seed, for experiments that draw random orders or data (reproducible).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Tell the progress display what is being measured now (for workloads that time
    /// themselves instead of going through [`Ctx::measure`]).
    pub fn progress(&mut self, what: &str) {
        (self.progress)(what);
    }

    /// Wall time this experiment should plan its work for in one round: its
    /// [`super::Experiment::time_share`] of the profile's run budget, divided by the rounds.
    pub fn time_budget(&self) -> Duration {
        self.time_budget
    }

    /// Median of `metric` of experiment `id` if it ran earlier in this run.
    pub fn previous_median(&self, id: &str, metric: &str) -> Option<f64> {
        let r = self.previous.iter().find(|r| r.id == id)?;
        r.metrics
            .iter()
            .find(|m| m.name == metric)
            .map(|m| m.summary.median)
    }

    /// Probe the machine between two points of a long series (≈ 0.2 ms, outside every
    /// timed sample) and keep the probe for the experiment's stability judgment. Only on the
    /// measuring CPU: `None` when the thread is not pinned there (the probe measures the
    /// CPU it runs on), and then nothing is kept.
    pub fn probe_between_points(&self) -> Option<ProbeSample> {
        let cpu = self.cpu?;
        if sysmeter_sys::sched::current_cpu() != Some(cpu) {
            return None;
        }
        let p = ProbeSample::take();
        self.between.borrow_mut().push(p);
        if let Some(trail) = self.cache_between.borrow_mut().as_mut() {
            trail.take_between();
        }
        Some(p)
    }

    /// A CPU other than the measuring one, for cross-CPU experiments.
    pub fn other_cpu(&self) -> Option<usize> {
        self.cpus.iter().copied().find(|&c| Some(c) != self.cpu)
    }

    /// Measure an infallible workload; see [`Ctx::try_measure`].
    pub fn measure(
        &mut self,
        spec: Spec,
        mut workload: impl FnMut(u64),
    ) -> Result<Metric, ExperimentError> {
        self.try_measure(spec, |n| {
            workload(n);
            Ok(())
        })
    }

    /// Time `workload(iters)` repeatedly: size `iters` so a sample lasts the target
    /// interval, warm up, then sample until the 95% CI of the median is within the target
    /// width, the budget is spent, or the sample cap is reached. Each sample is converted
    /// to time per operation after subtracting the timer and (if the workload uses the
    /// harness loop) loop overhead.
    pub fn try_measure(
        &mut self,
        spec: Spec,
        mut workload: impl FnMut(u64) -> Result<(), ExperimentError>,
    ) -> Result<Metric, ExperimentError> {
        (self.progress)(&spec.name);
        let iters = self.size_iterations(&mut workload)?;
        let warm_until = Instant::now() + self.profile.warmup;
        while Instant::now() < warm_until {
            workload(iters)?;
        }
        // The loop's turn is timed beside the samples (`loop_ref`), not taken from the run's
        // start: its cost moves with the machine's state.
        let mut loop_ref = spec
            .subtract_loop
            .then(|| LoopReference::start(iters, self.calib.timer_overhead_ns));
        let ops = (iters * spec.ops_per_iter) as f64;
        let timer_ns = self.calib.timer_overhead_ns;
        let overhead = |loop_ref: &Option<LoopReference>| {
            timer_ns + iters as f64 * loop_ref.as_ref().map_or(0.0, LoopReference::per_turn_ns)
        };
        let net = |raw: f64, overhead: f64| ((raw - overhead) / ops).max(0.0);
        let mut overhead_total = overhead(&loop_ref);
        let mut raws = Vec::new();
        let mut samples = Vec::new();
        let budget = self.profile.budget.mul_f64(spec.budget_share);
        let start = Instant::now();
        loop {
            if sysmeter_sys::signal::interrupted() {
                return Err(ExperimentError::Interrupted);
            }
            let t0 = Instant::now();
            workload(iters)?;
            let raw = t0.elapsed().as_nanos() as f64;
            raws.push(raw);
            samples.push(net(raw, overhead_total));
            let read = loop_ref
                .as_mut()
                .is_some_and(|r| r.after_sample(samples.len()));
            // The stopping rule judges what will be reported: every sample net of the
            // current estimate of the loop's turn.
            if read && overhead(&loop_ref) != overhead_total {
                overhead_total = overhead(&loop_ref);
                for (s, &raw) in samples.iter_mut().zip(&raws) {
                    *s = net(raw, overhead_total);
                }
            }
            if self.enough(&samples, start, budget) {
                break;
            }
        }
        let mut m = self.metric(&spec.name, Unit::Ns, samples)?;
        m.subtracted_overhead_ns = overhead_total / ops;
        m.ops_per_sample = iters * spec.ops_per_iter;
        m.note = spec.note;
        Ok(m)
    }

    fn size_iterations(
        &mut self,
        workload: &mut impl FnMut(u64) -> Result<(), ExperimentError>,
    ) -> Result<u64, ExperimentError> {
        let target = (self.profile.sample_target.as_nanos() as f64).max(self.calib.min_sample_ns);
        let mut iters = 1u64;
        loop {
            let t0 = Instant::now();
            workload(iters)?;
            let ns = t0.elapsed().as_nanos() as f64;
            if ns >= target / 8.0 || iters >= 1 << 40 {
                let per_iter = (ns / iters as f64).max(0.01);
                return Ok(((target / per_iter).ceil() as u64).max(1));
            }
            iters *= 2;
        }
    }

    fn enough(&self, samples: &[f64], start: Instant, budget: std::time::Duration) -> bool {
        let n = samples.len();
        let p = self.profile;
        if n >= p.max_samples {
            return true;
        }
        let spent = start.elapsed();
        // One operation longer than the whole budget: take at least 3 samples, and stop
        // at 4x the budget whatever the count, so no metric can run away with the run.
        if spent >= budget * 4 && n >= 3 {
            return true;
        }
        if n < p.min_samples {
            return false;
        }
        if spent >= budget {
            return true;
        }
        // Cheap stopping rule (one sort): the order-statistic CI of the median.
        if n.is_multiple_of(8)
            && let Ok((lo, hi)) = stats::median_ci_distribution_free(samples)
        {
            let med = stats::median(samples).unwrap_or(0.0);
            return stats::relative_ci_width(lo, hi, med) <= p.target_ci;
        }
        false
    }

    /// Build a metric from per-operation samples (ns for times), with its summary and, for
    /// times, the same in TSC cycles.
    pub fn metric(
        &self,
        name: &str,
        unit: Unit,
        samples: Vec<f64>,
    ) -> Result<Metric, ExperimentError> {
        let seed = metric_seed(self.seed, name);
        let summary = stats::summarize(&samples, seed)
            .map_err(|e| ExperimentError::Failed(format!("statistics of {name}: {e}")))?;
        let cycles = match (unit, self.calib.tsc_ghz) {
            (Unit::Ns, Some(ghz)) => {
                let c: Vec<f64> = samples.iter().map(|s| s * ghz).collect();
                stats::summarize(&c, seed).ok()
            }
            _ => None,
        };
        Ok(Metric {
            cycles,
            samples,
            ..Metric::new(name, unit, summary)
        })
    }

    /// [`Ctx::metric`] with its note: what a sample is, how many were taken, what else a
    /// reader needs beside the figure.
    pub fn noted_metric(
        &self,
        name: &str,
        unit: Unit,
        samples: Vec<f64>,
        note: impl Into<String>,
    ) -> Result<Metric, ExperimentError> {
        let mut m = self.metric(name, unit, samples)?;
        m.note = Some(note.into());
        Ok(m)
    }

    /// A metric derived sample by sample from another (e.g. per-switch cost from a round
    /// trip): `f` is applied to every raw sample of `from`.
    pub fn derive(
        &self,
        name: &str,
        from: &Metric,
        note: &str,
        f: impl Fn(f64) -> f64,
    ) -> Result<Metric, ExperimentError> {
        let samples = from.samples.iter().map(|&s| f(s)).collect();
        let mut m = self.noted_metric(name, from.unit, samples, note)?;
        m.ops_per_sample = from.ops_per_sample;
        m.subtracted_overhead_ns = from.subtracted_overhead_ns;
        Ok(m)
    }
}

/// The bootstrap seed of metric `name` in a run seeded with `seed`.
pub(super) fn metric_seed(seed: u64, name: &str) -> u64 {
    seed ^ fnv1a(name)
}

/// FNV-1a hash of a name: a stable per-metric seed offset.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}
