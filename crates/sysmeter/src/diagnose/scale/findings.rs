//! The sentences of a `scale` result: the best class with its formula, how sure the choice
//! is, the knee (or why there is none), predictions, and warnings about noise, start-up
//! dominating the small sizes, or a command that mostly waits.
//!
//! Pure.

use super::analyse::{Analysis, SizeRuns};
use super::text::formula;
use super::{FitStat, Measured, Stop, TimeBasis};
use crate::model::Finding;
use crate::model::units::{count, duration_ns, percent};
use crate::stats::fit::knee::{KneeScan, NoKnee};
use crate::stats::fit::{Class, ClassFit, Complexity};

/// Runs whose coefficient of variation exceeds this are called noisy.
const NOISY_CV: f64 = 0.10;
/// A best fit with a larger nRMS is called poor.
const POOR_NRMS: f64 = 0.10;
/// A runner-up within this factor of the best nRMS makes the choice ambiguous.
const CLOSE_RATIO: f64 = 1.5;

/// Every finding, most important first.
pub(super) fn all(a: &Analysis<'_>, m: &Measured) -> Vec<Finding> {
    let mut out = Vec::new();
    if m.stop == Some(Stop::Interrupted) {
        out.push(Finding::new(
            "interrupted",
            format!(
                "interrupted after {} of {} runs; the fit uses the runs that finished",
                m.runs.len(),
                m.planned
            ),
            None,
        ));
    }
    if let Some(e) = &a.fit_error {
        out.push(Finding::new("no_fit", format!("no fit: {e}"), None));
    }
    if let Some(f) = &a.fit {
        out.extend(fit_findings(f));
        out.extend(a.knee.as_ref().map(knee_finding));
        out.extend(predictions(f.best(), a));
        out.extend(fixed_cost(f.best(), &a.sizes, a.cfg.stat));
    }
    out.extend(noise(&a.sizes));
    out.extend(cpu_share(m, a.cfg.basis));
    out
}

fn fit_findings(f: &Complexity) -> Vec<Finding> {
    let best = f.best();
    let mut out = vec![Finding::new(
        "best_fit",
        format!(
            "best fit {}: t ≈ {} (nRMS {})",
            best.class.label(),
            formula(best),
            percent(best.nrms)
        ),
        Some(best.a),
    )];
    // Classes whose fit collapsed to a constant (a = 0) say nothing new; leave them out.
    let rival = f
        .fits
        .iter()
        .filter(|c| c.class != best.class && (c.a > 0.0 || c.class == Class::Constant))
        .min_by(|x, y| x.nrms.total_cmp(&y.nrms));
    if let Some(r) = rival
        && r.nrms < best.nrms * CLOSE_RATIO
    {
        out.push(Finding::new(
            "fit_ambiguous",
            format!(
                "{} fits almost as well (nRMS {} vs {}); a wider range of sizes would tell \
                 them apart",
                r.class.label(),
                percent(r.nrms),
                percent(best.nrms)
            ),
            Some(r.nrms),
        ));
    }
    if best.nrms > POOR_NRMS {
        out.push(Finding::new(
            "fit_poor",
            format!(
                "no class describes the times well (best nRMS {}): the growth changes over \
                 the range (see the knee) or the runs are noisy",
                percent(best.nrms)
            ),
            Some(best.nrms),
        ));
    }
    for s in &f.skipped {
        out.push(Finding::new(
            &format!("not_fitted_{}", s.class.key()),
            format!("{} not fitted: {}", s.class.label(), s.reason),
            None,
        ));
    }
    out
}

fn knee_finding(scan: &KneeScan) -> Finding {
    match scan {
        KneeScan::Knee(k) => Finding::new(
            "knee",
            format!(
                "knee: between N = {} and {} the time per element rises, to {}× its earlier \
                 trend (log-log slope {:.2} before, {:.2} after) — a working set outgrowing \
                 a cache or memory (thrashing), or a steeper term taking over",
                count(k.at),
                count(k.next),
                count(k.rise),
                k.slope_before,
                k.slope_after
            ),
            Some(k.at),
        ),
        KneeScan::NoKnee(k, why) => {
            let because = match why {
                NoKnee::SmallRise => format!(
                    "the largest rise, past N = {}, is only {}× (a knee needs 1.5×)",
                    count(k.at),
                    count(k.rise)
                ),
                NoKnee::StartUpDominates => format!(
                    "the smallest sizes, up to N = {}, are mostly fixed cost (time per element \
                     falls there), so a rise after them cannot be told from the class's own \
                     growth; start the sizes higher",
                    count(k.at)
                ),
                NoKnee::OneLineSuffices => {
                    "two segments fit its log-log curve no better than one line".to_string()
                }
                NoKnee::ClassFits { class_nrms } => format!(
                    "the best complexity class fits it within {} (a knee needs a misfit of 5% \
                     and 3× the run-to-run noise or more)",
                    percent(*class_nrms)
                ),
                NoKnee::NoBetterThanClass { class_error } => format!(
                    "a split at N = {} (a rise of {}×) misses the times by {}, the \
                     best complexity class by {}: not clearly better",
                    count(k.at),
                    count(k.rise),
                    percent(k.error),
                    percent(*class_error)
                ),
            };
            Finding::new(
                "no_knee",
                format!("no knee: the time per element follows one trend — {because}"),
                None,
            )
        }
        KneeScan::TooFewPoints { got, needed } => Finding::new(
            "no_knee",
            format!("knee detection needs at least {needed} sizes; {got} were measured"),
            None,
        ),
    }
}

fn predictions(best: &ClassFit, a: &Analysis<'_>) -> Vec<Finding> {
    let largest = a.sizes.last().map_or(1.0, |s| s.n as f64);
    a.cfg
        .predict
        .iter()
        .map(|&n| {
            let nf = n as f64;
            match best.predict(nf) {
                Some(t) if nf > largest => Finding::new(
                    &format!("prediction_{n}"),
                    format!(
                        "predicted t(N = {}) ≈ {} by {} (extrapolated {}× beyond the largest \
                         size; a cache or memory limit beyond it would make this an \
                         underestimate)",
                        count(nf),
                        duration_ns(t),
                        best.class.label(),
                        count(nf / largest)
                    ),
                    Some(t),
                ),
                Some(t) => Finding::new(
                    &format!("prediction_{n}"),
                    format!(
                        "predicted t(N = {}) ≈ {} by {}",
                        count(nf),
                        duration_ns(t),
                        best.class.label()
                    ),
                    Some(t),
                ),
                None => Finding::new(
                    &format!("prediction_{n}"),
                    format!(
                        "no prediction for N = {}: {} overflows there",
                        count(nf),
                        best.class.term()
                    ),
                    None,
                ),
            }
        })
        .collect()
}

fn fixed_cost(best: &ClassFit, sizes: &[SizeRuns], stat: FitStat) -> Option<Finding> {
    let smallest = sizes.first()?.value(stat);
    let share = best.b / smallest;
    (best.class != Class::Constant && share > 0.5).then(|| {
        Finding::new(
            "fixed_cost_dominates",
            format!(
                "the fixed cost b ≈ {} is {} of the smallest run: sizes that small show \
                 start-up more than growth; start the range higher",
                duration_ns(best.b),
                percent(share)
            ),
            Some(share),
        )
    })
}

fn noise(sizes: &[SizeRuns]) -> Option<Finding> {
    let noisy: Vec<(u64, f64)> = sizes
        .iter()
        .filter(|s| s.fitted.len() > 1)
        .filter_map(|s| {
            let cv = crate::stats::summarize(&s.fitted, 0).ok()?.cv;
            (cv > NOISY_CV).then_some((s.n, cv))
        })
        .collect();
    let worst = noisy.iter().map(|p| p.1).fold(0.0, f64::max);
    (!noisy.is_empty()).then(|| {
        let ns: Vec<String> = noisy.iter().map(|p| count(p.0 as f64)).collect();
        Finding::new(
            "noisy_sizes",
            format!(
                "runs at N = {} vary by more than {} (CV up to {}): the machine is busy or \
                 the command's time varies; raise --repeat, or fit the fastest run of each \
                 size with --stat min",
                ns.join(", "),
                percent(NOISY_CV),
                percent(worst)
            ),
            Some(worst),
        )
    })
}

fn cpu_share(m: &Measured, basis: TimeBasis) -> Option<Finding> {
    let shares: Vec<f64> = m
        .runs
        .iter()
        .filter(|r| r.wall_ns > 0.0)
        .map(|r| (r.user_ns + r.system_ns) / r.wall_ns)
        .collect();
    let share = crate::stats::median(&shares).ok()?;
    let text = match (share >= 0.8, basis) {
        (true, _) => format!(
            "user+sys CPU time is {} of the wall time: the command is CPU-bound, so the fit \
             describes its computation",
            percent(share)
        ),
        (false, TimeBasis::Wall) => format!(
            "user+sys CPU time is only {} of the wall time: the command waits (I/O, sleep, or \
             for a CPU other processes hold), and the wall-time fit includes the waiting; \
             --time cpu fits the computation alone, `sysmeter run` shows what it waits for",
            percent(share)
        ),
        (false, TimeBasis::Cpu) => format!(
            "user+sys CPU time is only {} of the wall time: the command waits (I/O, sleep, or \
             for a CPU); this fit of CPU time leaves the waiting out",
            percent(share)
        ),
    };
    Some(Finding::new("cpu_share", text, Some(share)))
}
