//! Comparing *sets* of runs: each side is a few per-run (or per-round) medians of a metric,
//! and the test uses their spread — the between-run noise — not the samples inside one run,
//! which understate it (state that shifts a whole run shifts every sample of it together).
//!
//! The test is Welch's t-test on the natural log of the per-run medians, and the 95% CI of
//! the ratio is `exp(Δ ± t₀.₉₇₅·se)` with `Δ = mean ln B − mean ln A` (so the CI is of the
//! ratio of the geometric means and excludes 1 exactly when p < 0.05). Why this test:
//! - with 3 runs against 3 the smallest two-sided Mann-Whitney p is 0.1, so a rank test can
//!   never reach α = 0.05; a bootstrap over 3 runs has 10 distinct resamples per side and
//!   gives intervals far too narrow;
//! - a per-run median is a median of many samples, so it is close to normal whatever the
//!   samples' shape; the log turns a relative change into a shift and makes the spread of
//!   a faster and a slower side comparable; Welch does not assume equal variances.
//!
//! When one side holds a single run its variance cannot be estimated: the test then assumes
//! the other side's between-run variance for both (Student's t with that side's n − 1
//! degrees of freedom — how far the single run lies outside the other side's spread).
//!
//! The machine's history ([`RunNoise`], from its stored runs) stands in for a side that is
//! one run: its rounds — or its single value — share one moment's machine state, so the
//! variance of that side's value is the between-run variance the stored runs show (with
//! their degrees of freedom) unless its rounds' own is larger, and the value is the median
//! of its rounds (the quantity whose spread the stored runs show; one disturbed round moves a mean
//! of three far more than the stored spread allows).
//!
//! Pure: functions of their arguments. Depends on the rest of `stats::compare` and `statrs`.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::{CompareOptions, Direction, SampleComparison, judged, mann_whitney};
use crate::stats::{StatsError, median, validate};

/// The between-run test of two sets of per-run medians.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunsTest {
    /// Runs (or rounds) on side A.
    pub runs_a: usize,
    /// Runs (or rounds) on side B.
    pub runs_b: usize,
    /// t statistic of ln(B) against ln(A).
    pub t: f64,
    /// Degrees of freedom (Welch–Satterthwaite; n − 1 of the larger side when one side has
    /// a single run).
    pub df: f64,
    /// Two-sided p-value.
    pub p_value: f64,
}

/// A machine's between-run noise of one metric, learned from its stored runs
/// (`super::history`): how far the per-run median moves from one run to the next.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RunNoise {
    /// Stored runs it was computed from (other than the runs compared).
    pub runs: usize,
    /// Sample standard deviation of ln(per-run median): about the between-run CV.
    pub sd_log: f64,
}

/// What one side's centre of ln values is uncertain by.
#[derive(Debug, Clone, Copy)]
struct Term {
    /// Variance of the side's centre.
    var_mean: f64,
    /// Variance of one run's value, lent to a side of one value without noise of its own.
    var_one: f64,
    /// Degrees of freedom of the estimate.
    df: f64,
    /// From the stored runs (the side is then centred on the median of its values).
    stored: bool,
}

/// The side's term: its own spread (n ≥ 2), or the stored noise when that is larger. The
/// values of one run (its rounds) share the machine's state of that moment, so their spread
/// usually understates how far the run moves from one run to the next, which the stored
/// runs show; but a run whose rounds spread more than the stored runs do (its clock moved
/// within it, say) is that much less certain. `None` for one value without noise.
fn term(values: &[f64], noise: Option<RunNoise>) -> Option<Term> {
    let n = values.len() as f64;
    let own = (values.len() >= 2).then(|| {
        let (_, v) = mean_var(values);
        Term {
            var_mean: v / n,
            var_one: v,
            df: n - 1.0,
            stored: false,
        }
    });
    let stored = noise.filter(|s| s.runs >= 2).map(|s| Term {
        var_mean: s.sd_log * s.sd_log,
        var_one: s.sd_log * s.sd_log,
        df: s.runs as f64 - 1.0,
        stored: true,
    });
    match (own, stored) {
        (Some(o), Some(s)) if o.var_mean > s.var_mean => Some(o),
        (_, Some(s)) => Some(s),
        (o, None) => o,
    }
}

/// Welch's t-test of `ln b` against `ln a` and the 95% CI of the ratio of geometric means.
/// `None` when a value is not positive, or neither side has two values.
pub fn welch_log(a: &[f64], b: &[f64]) -> Option<(RunsTest, (f64, f64))> {
    welch_log_with(a, b, (None, None))
}

/// [`welch_log`] with each side's stored between-run noise, if any (pass it only for a side
/// that is one run: see `term`). A side of one value and no noise assumes the other side's
/// variance of one run for it (Student's t with the other side's degrees of freedom). Both
/// sides judged on the *same* stored noise (the same host's runs: equal values) hold one
/// estimate of the variance, not two, so the test has that estimate's degrees of freedom.
pub fn welch_log_with(
    a: &[f64],
    b: &[f64],
    (noise_a, noise_b): (Option<RunNoise>, Option<RunNoise>),
) -> Option<(RunsTest, (f64, f64))> {
    if a.is_empty() || b.is_empty() || a.iter().chain(b).any(|&x| !(x.is_finite() && x > 0.0)) {
        return None;
    }
    let la: Vec<f64> = a.iter().map(|x| x.ln()).collect();
    let lb: Vec<f64> = b.iter().map(|x| x.ln()).collect();
    let (ta, tb) = (term(&la, noise_a), term(&lb, noise_b));
    let (se2, df) = match (ta, tb) {
        (None, None) => return None,
        (None, Some(t)) | (Some(t), None) => (t.var_one + t.var_mean, t.df),
        (Some(ta), Some(tb)) if ta.stored && tb.stored && noise_a == noise_b => {
            (ta.var_mean + tb.var_mean, ta.df)
        }
        (Some(ta), Some(tb)) => {
            let (qa, qb) = (ta.var_mean, tb.var_mean);
            let denom = qa * qa / ta.df + qb * qb / tb.df;
            let df = if denom > 0.0 {
                (qa + qb).powi(2) / denom
            } else {
                ta.df + tb.df
            };
            (qa + qb, df)
        }
    };
    let delta = centre(&lb, tb) - centre(&la, ta);
    let se = se2.sqrt();
    let test = |t: f64, p: f64| RunsTest {
        runs_a: a.len(),
        runs_b: b.len(),
        t,
        df,
        p_value: p,
    };
    if se == 0.0 || !se.is_finite() {
        // No spread at all: identical sides are no change, different ones are certain.
        let p = if delta == 0.0 { 1.0 } else { 0.0 };
        let r = delta.exp();
        return Some((test(0.0, p), (r, r)));
    }
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let t = delta / se;
    let p = (2.0 * (1.0 - dist.cdf(t.abs()))).clamp(0.0, 1.0);
    let q = dist.inverse_cdf(0.975);
    let ci = ((delta - q * se).exp(), (delta + q * se).exp());
    Some((test(t, p), ci))
}

/// Where a side's ln values lie: the median for a side judged on its stored noise (one
/// run's rounds) — the quantity the stored runs' spread was taken of (`super::history`), and
/// one a single disturbed round does not drag — else the mean.
fn centre(logs: &[f64], term: Option<Term>) -> f64 {
    match term {
        Some(t) if t.stored => crate::stats::median(logs).unwrap_or(f64::NAN),
        _ => mean_var(logs).0,
    }
}

/// Mean and sample variance (n − 1; 0 for one value).
pub(crate) fn mean_var(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    (mean, var)
}

/// Compares sets of per-run medians `b` against `a`. `samples_a`/`samples_b` are all raw
/// samples of each side pooled (may be empty): their Mann-Whitney test is kept in `test` to
/// show what the single-pair rule would have said, but only [`RunsTest`] decides.
/// `median_a`/`median_b` are the medians of the per-run medians; `ratio` their ratio.
/// `noise` is each side's stored between-run noise, for a side that is one run.
pub fn compare_run_medians(
    a: &[f64],
    b: &[f64],
    samples: (&[f64], &[f64]),
    noise: (Option<RunNoise>, Option<RunNoise>),
    direction: Direction,
    opts: &CompareOptions,
) -> Result<SampleComparison, StatsError> {
    validate(a)?;
    validate(b)?;
    let (median_a, median_b) = (median(a)?, median(b)?);
    let (sa, sb) = match samples {
        (sa, sb) if !sa.is_empty() && !sb.is_empty() => (sa, sb),
        _ => (a, b),
    };
    let test = mann_whitney(sb, sa);
    let welch = welch_log_with(a, b, noise);
    let (ratio_ci95, runs_test) = (welch.map(|(_, ci)| ci), welch.map(|(t, _)| t));
    Ok(judged(
        (a, b),
        (median_a, median_b),
        (ratio_ci95, test, runs_test),
        direction,
        opts,
    ))
}
