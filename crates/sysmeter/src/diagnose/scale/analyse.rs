//! From timed runs to an [`ExperimentResult`]: per-size series (wall time, time per element,
//! CPU time) summarised with `stats::summarize`, the complexity fit and its metrics, the knee
//! scan, predictions, and an artifact holding every run's raw numbers.
//!
//! Pure: a function of the configuration and the measurements (no clock, no OS).

use std::collections::BTreeMap;

use super::findings;
use super::{FitStat, Measured, RunSample, ScaleConfig, Stop, TimeBasis};
use crate::model::{About, Artifact, ExperimentResult, Metric, Series, SeriesPoint, Status, Unit};
use crate::stats::fit::knee::{self, KneeRule, KneeScan};
use crate::stats::fit::{self, Class, ClassFit, Complexity, SelectRule};
use crate::stats::summarize;

/// The runs of one size.
pub(super) struct SizeRuns {
    pub n: u64,
    pub wall: Vec<f64>,
    pub cpu: Vec<f64>,
    /// The fitted time of each run (wall or cpu, by the configuration).
    pub fitted: Vec<f64>,
}

impl SizeRuns {
    /// The fitted statistic of the fitted time.
    pub fn value(&self, stat: FitStat) -> f64 {
        match stat {
            FitStat::Median => crate::stats::median(&self.fitted).unwrap_or(f64::NAN),
            FitStat::Min => self.fitted.iter().copied().fold(f64::NAN, f64::min),
        }
    }
}

/// What the fit and knee scan found, for the findings.
pub(super) struct Analysis<'a> {
    pub cfg: &'a ScaleConfig,
    pub sizes: Vec<SizeRuns>,
    pub fit: Option<Complexity>,
    pub fit_error: Option<String>,
    pub knee: Option<KneeScan>,
}

/// The `scale` result: series per size, fit metrics, findings and the raw runs.
pub fn analyse(cfg: &ScaleConfig, measured: &Measured) -> ExperimentResult {
    let sizes = group(&measured.runs, cfg.basis);
    let mut result = ExperimentResult::new("scale", about(cfg, measured));
    result.series = series(&sizes, cfg);
    result.elapsed_ns = measured.runs.iter().map(|r| r.wall_ns as u64).sum();
    result.artifacts = vec![runs_csv(&measured.runs)];
    if let Some(Stop::Failed(why)) = &measured.stop {
        result.status = Status::Failed;
        result.error = Some(why.clone());
    }
    let xs: Vec<f64> = sizes.iter().map(|s| s.n as f64).collect();
    let ts: Vec<f64> = sizes.iter().map(|s| s.value(cfg.stat)).collect();
    let (fit, fit_error) = match fit::fit_all(&xs, &ts, SelectRule::default()) {
        Ok(f) => (Some(f), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let knee = fit.as_ref().map(|f| knee_scan(f.best(), &sizes, &xs, &ts));
    let analysis = Analysis {
        cfg,
        sizes,
        fit,
        fit_error,
        knee,
    };
    if let Some(f) = &analysis.fit {
        result.metrics = metrics(f, &analysis, cfg.seed);
    }
    result.findings = findings::all(&analysis, measured);
    result
}

/// Runs grouped by size, sizes ascending.
fn group(runs: &[RunSample], basis: TimeBasis) -> Vec<SizeRuns> {
    let mut by: BTreeMap<u64, SizeRuns> = BTreeMap::new();
    for r in runs {
        let e = by.entry(r.size).or_insert_with(|| SizeRuns {
            n: r.size,
            wall: Vec::new(),
            cpu: Vec::new(),
            fitted: Vec::new(),
        });
        let cpu = r.user_ns + r.system_ns;
        e.wall.push(r.wall_ns);
        e.cpu.push(cpu);
        e.fitted.push(match basis {
            TimeBasis::Wall => r.wall_ns,
            TimeBasis::Cpu => cpu,
        });
    }
    by.into_values().collect()
}

/// The knee scan of the fitted times: time per element, or per 2^N when the best fit is
/// exponential (its log-log slope grows without bound, which is no knee).
fn knee_scan(best: &ClassFit, sizes: &[SizeRuns], xs: &[f64], ts: &[f64]) -> KneeScan {
    let exponential = best.class == Class::Exponential;
    let unit = |n: f64| if exponential { n.exp2() } else { n };
    let baseline: Vec<f64> = xs
        .iter()
        .map(|&n| best.predict(n).unwrap_or(f64::NAN))
        .collect();
    knee::detect(xs, ts, unit, &baseline, noise(sizes), KneeRule::default())
}

/// Typical relative uncertainty of one size's fitted value: the median over sizes of the
/// runs' robust spread (1.4826·MAD, the stddev of normal data) over their median, ÷ √runs.
/// 0 when no size has two runs.
fn noise(sizes: &[SizeRuns]) -> f64 {
    let spreads: Vec<f64> = sizes
        .iter()
        .filter(|s| s.fitted.len() > 1)
        .filter_map(|s| {
            let median = crate::stats::median(&s.fitted).ok()?;
            let deviations: Vec<f64> = s.fitted.iter().map(|x| (x - median).abs()).collect();
            let mad = crate::stats::median(&deviations).ok()?;
            let relative = 1.4826 * mad / median / (s.fitted.len() as f64).sqrt();
            relative.is_finite().then_some(relative)
        })
        .collect();
    crate::stats::median(&spreads).unwrap_or(0.0)
}

fn about(cfg: &ScaleConfig, m: &Measured) -> About {
    About {
        title: format!("Run time by input size: {}", cfg.command_line()),
        measures: format!(
            "The {} of `{}` for {} sizes × {} runs ({} timed runs finished), and the \
             complexity class t = a·g(N) + b that describes it",
            cfg.basis.label(),
            cfg.command_line(),
            cfg.sizes.len(),
            cfg.repeat,
            m.runs.len()
        ),
        methodology: format!(
            "Each run is timed from just before the spawn to the moment the kernel reports \
             the exit (waitid), so process start-up is inside and ends up in the fixed cost b; \
             user+sys CPU time comes from wait4. All runs go in one random order (seed {}) \
             after {} untimed warm-up run(s). Every class is fitted to the {} time per size by least squares on relative errors with a, b ≥ 0; nRMS is the RMS relative \
             error. A more complex class must lower nRMS by over 20% and 0.5 points to win. A \
             knee is the best split of log time-per-element vs log N into two fitted lines where \
             the cost rises ≥ 1.5× over the first line's trend while no class fits within 5% \
             and 3× the run-to-run noise.",
            cfg.seed,
            cfg.warmup,
            match cfg.stat {
                FitStat::Median => "median",
                FitStat::Min => "fastest (--stat min)",
            }
        ),
        references: vec![
            "D. Spinellis, Code Quality, ch. 4 Time Performance: algorithm complexity".into(),
            "D. Spinellis, Code Quality, ch. 4 Time Performance: involuntary interactions (thrashing)".into(),
        ],
    }
}

/// One series point per size from per-run values.
fn points(
    sizes: &[SizeRuns],
    seed: u64,
    value: impl Fn(&SizeRuns) -> Vec<f64>,
) -> Vec<SeriesPoint> {
    sizes
        .iter()
        .filter_map(|s| {
            let summary = summarize(&value(s), seed).ok()?;
            Some(SeriesPoint {
                x: s.n as f64,
                summary,
                cycles: None,
            })
        })
        .collect()
}

fn series(sizes: &[SizeRuns], cfg: &ScaleConfig) -> Vec<Series> {
    let seed = cfg.seed;
    let make = |name: &str, pts: Vec<SeriesPoint>| Series {
        name: name.into(),
        x_label: "N".into(),
        x_unit: Unit::Count,
        y_unit: Unit::Ns,
        points: pts,
    };
    vec![
        make("wall time", points(sizes, seed, |s| s.wall.clone())),
        make(
            &format!("{} per element (t/N)", cfg.basis.label()),
            points(sizes, seed, |s| {
                s.fitted.iter().map(|t| t / s.n as f64).collect()
            }),
        ),
        make(
            "CPU time (user+sys)",
            points(sizes, seed, |s| s.cpu.clone()),
        ),
    ]
}

/// A derived metric holding one value.
fn single(name: String, unit: Unit, value: f64, note: String, seed: u64) -> Option<Metric> {
    let summary = summarize(&[value], seed).ok()?;
    Some(Metric {
        note: Some(note),
        samples: vec![value],
        ..Metric::new(&name, unit, summary)
    })
}

fn metrics(f: &Complexity, a: &Analysis<'_>, seed: u64) -> Vec<Metric> {
    use super::text::formula;
    use crate::model::units::{count, percent};
    let best = f.best();
    let mut out = Vec::new();
    let term = if best.class == Class::Constant {
        "the constant time".to_string()
    } else {
        format!("the coefficient of {}", best.class.term())
    };
    out.extend(single(
        format!("best fit {}: a", best.class.label()),
        Unit::Ns,
        best.a,
        format!("{term}; t ≈ {}", formula(best)),
        seed,
    ));
    out.extend(single(
        format!("best fit {}: b", best.class.label()),
        Unit::Ns,
        best.b,
        "fixed cost (start-up, set-up)".into(),
        seed,
    ));
    for c in &f.fits {
        let mark = if c.class == best.class { "; best" } else { "" };
        out.extend(single(
            format!("nRMS {}", c.class.label()),
            Unit::Count,
            c.nrms,
            format!("{}{mark}; t ≈ {}", percent(c.nrms), formula(c)),
            seed,
        ));
    }
    out.extend(predicted(best, a, seed));
    if let Some(KneeScan::Knee(h)) = &a.knee {
        out.extend(single(
            "knee at N".into(),
            Unit::Count,
            h.at,
            format!(
                "time per element rises {}× by N = {}",
                count(h.rise),
                count(h.next)
            ),
            seed,
        ));
    }
    out
}

/// One metric per `--predict` size.
fn predicted(best: &ClassFit, a: &Analysis<'_>, seed: u64) -> Vec<Metric> {
    use crate::model::units::count;
    let largest = a.sizes.last().map_or(1.0, |s| s.n as f64);
    let mut out = Vec::new();
    for &n in &a.cfg.predict {
        if let Some(t) = best.predict(n as f64) {
            let beyond = n as f64 / largest;
            let note = if beyond > 1.0 {
                format!(
                    "{}, {}× beyond the largest size",
                    best.class.label(),
                    count(beyond)
                )
            } else {
                format!("{}, inside the measured range", best.class.label())
            };
            out.extend(single(
                format!("predicted t(N = {})", count(n as f64)),
                Unit::Ns,
                t,
                note,
                seed,
            ));
        }
    }
    out
}

/// Every run's raw numbers as CSV, in run order, so the statistics can be recomputed.
fn runs_csv(runs: &[RunSample]) -> Artifact {
    let mut text = String::from("order,n,wall_ns,user_ns,sys_ns,max_rss_kib\n");
    for r in runs {
        text.push_str(&format!(
            "{},{},{},{},{},{}\n",
            r.order, r.size, r.wall_ns, r.user_ns, r.system_ns, r.max_rss_kib
        ));
    }
    Artifact {
        name: "runs.csv".into(),
        media_type: "text/csv".into(),
        content: text,
    }
}
