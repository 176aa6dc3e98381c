//! Normalising a change between two runs for the machine's speed: the arithmetic `compare`
//! uses when the machine-state probes of runs A and B disagree, and the rule that decides,
//! from data, whether a metric's cost scales with the core clock at all.
//!
//! - [`core_cycles`]: time × the probe's core clock = core cycles (not TSC ticks).
//! - [`change`]: given the medians of a metric in runs A and B and the probe core clocks of
//!   A and B, the machine ratio (speed B/A), the raw change and the *normalised* change,
//!   i.e. the change of the metric in core cycles. For a time metric
//!   `normalised = (b × ghz_b) / (a × ghz_a) − 1`; for a rate (per second) it is the rate
//!   per cycle, `(b / ghz_b) / (a / ghz_a) − 1`. Normalising is only right for metrics whose
//!   cost scales with the core clock; a DRAM miss or a disk read costs the same ns at any
//!   clock, and normalising it would invent a change.
//! - [`clock_scaling`]: that decision from several runs (or rounds) of one metric with
//!   different probe values: the metric scales when its core-cycle count varies less (lower
//!   CV) than its time does. If the metric costs a fixed number of cycles, multiplying by
//!   the clock removes the clock's variation and the cycle CV is the measurement noise
//!   alone, below the time CV; if it costs a fixed number of ns, multiplying adds the
//!   clock's variation. (The cycle CV is the lower exactly when the elasticity — the slope of
//!   ln time on −ln clock — exceeds ½.) The decision needs the probe itself to have moved
//!   clearly more than its own repeatability ([`MIN_PROBE_CV`]), at least [`MIN_POINTS`]
//!   points, and the elasticity's 95% CI on one side of ½; otherwise it is
//!   [`Scaling::Undecided`] and the caller keeps its documented default per metric.
//! - [`within_side_scaling`]: the same decision for a comparison of two sets of runs, from
//!   the variation *inside* each set only. Across the sets a real change of the metric is
//!   confounded with the probe ratio (a DRAM-bound metric 25% slower on a machine 24%
//!   slower has a steadier "cycle count" than time), so each side is first divided by its
//!   own geometric means of time and clock.
//!
//! Pure: numbers in, numbers out. Depends on `thiserror`, `statrs`, `stats::cv` and
//! `model::Unit` (which unit is a rate).

use super::cv;

/// Fewest (time, clock) points [`clock_scaling`] decides from.
pub const MIN_POINTS: usize = 3;

/// Smallest CV of the probe's core clock across the points for [`clock_scaling`] to decide:
/// 2%, about 3× the probe's CV between back-to-back probes on a loaded machine (≤ 0.7%
/// measured; 0.03% quiet). Below it the clock's variation is lost in the metric's noise.
pub const MIN_PROBE_CV: f64 = 0.02;

/// Why a change cannot be normalised.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum NormaliseError {
    /// A median or a probe clock is zero, negative, NaN or infinite.
    #[error(
        "cannot normalise: {what} is {value}, not a positive finite number (was the \
         machine-state probe recorded for both runs?)"
    )]
    NotPositive {
        /// Which input.
        what: &'static str,
        /// Its value.
        value: f64,
    },
}

/// Whether bigger is worse (a time) or better (a rate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A cost per operation in ns: scales as 1 / clock when it scales.
    Time,
    /// Operations or bytes per second: scales as the clock when it scales.
    Rate,
}

impl Kind {
    /// A rate for bytes per second, else a time.
    pub fn of(unit: crate::model::Unit) -> Kind {
        match unit {
            crate::model::Unit::BytesPerSec => Kind::Rate,
            _ => Kind::Time,
        }
    }
}

/// Core cycles in `ns` nanoseconds at `ghz`: `ns × ghz`.
pub fn core_cycles(ns: f64, ghz: f64) -> f64 {
    ns * ghz
}

/// Speed of B relative to A from their probes' core clocks: `ghz_b / ghz_a` (0.76 = B's
/// machine ran 24% slower). `None` unless both are positive and finite.
pub fn machine_ratio(ghz_a: f64, ghz_b: f64) -> Option<f64> {
    (positive(ghz_a) && positive(ghz_b)).then(|| ghz_b / ghz_a)
}

/// A change between runs A and B, raw and normalised for the machine's speed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// Speed B/A of the machine (`ghz_b / ghz_a`).
    pub machine_ratio: f64,
    /// `b / a − 1`: +0.30 means B's value is 30% higher.
    pub raw_change: f64,
    /// The same after dividing out the machine ratio (the change in core cycles for a time,
    /// in work per cycle for a rate).
    pub normalised_change: f64,
}

/// The raw and normalised change of a metric whose medians are `median_a` and `median_b`,
/// measured with probe core clocks `ghz_a` and `ghz_b`.
pub fn change(
    kind: Kind,
    median_a: f64,
    median_b: f64,
    ghz_a: f64,
    ghz_b: f64,
) -> Result<Change, NormaliseError> {
    for (what, value) in [
        ("the median of run A", median_a),
        ("the median of run B", median_b),
        ("the core clock of run A", ghz_a),
        ("the core clock of run B", ghz_b),
    ] {
        if !positive(value) {
            return Err(NormaliseError::NotPositive { what, value });
        }
    }
    let ratio = ghz_b / ghz_a;
    let raw = median_b / median_a;
    let normalised = match kind {
        Kind::Time => raw * ratio,
        Kind::Rate => raw / ratio,
    };
    Ok(Change {
        machine_ratio: ratio,
        raw_change: raw - 1.0,
        normalised_change: normalised - 1.0,
    })
}

fn positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

/// One run's (or round's) median of a time metric and its probe's core clock.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// The metric's median, ns per operation (convert rates to time per operation first).
    pub ns: f64,
    /// The probe's core clock for that run, GHz.
    pub core_ghz: f64,
}

/// Whether a metric's cost follows the core clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scaling {
    /// Its core-cycle count is steadier than its time: normalise it.
    Scales,
    /// Its time is steadier than its cycle count (memory, I/O, timers): do not normalise.
    Fixed,
    /// Too few points, or the clock did not move enough to tell.
    Undecided,
}

/// The evidence behind a [`Scaling`] decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalingEvidence {
    /// CV of the metric's time across the points.
    pub time_cv: f64,
    /// CV of its core-cycle count (time × clock).
    pub cycles_cv: f64,
    /// CV of the probe's core clock.
    pub probe_cv: f64,
    /// Elasticity of the time to the clock: −slope of ln(time) against ln(clock) by least
    /// squares; 1 = all cycles, 0 = all fixed ns, between = a mix. `None` when undefined.
    pub elasticity: Option<f64>,
    /// The decision.
    pub verdict: Scaling,
}

/// Decide from `points` whether the metric scales with the core clock (see the module docs).
/// Points with a non-positive or non-finite value are ignored.
pub fn clock_scaling(points: &[Point]) -> ScalingEvidence {
    let ok: Vec<Point> = points
        .iter()
        .copied()
        .filter(|p| positive(p.ns) && positive(p.core_ghz))
        .collect();
    // One line through the points: two parameters.
    let df = ok.len() as f64 - 2.0;
    evidence(ok, df)
}

/// The evidence of `ok` (valid points) whose regression residuals have `residual_df` degrees
/// of freedom.
fn evidence(ok: Vec<Point>, residual_df: f64) -> ScalingEvidence {
    let times: Vec<f64> = ok.iter().map(|p| p.ns).collect();
    let cycles: Vec<f64> = ok.iter().map(|p| core_cycles(p.ns, p.core_ghz)).collect();
    let clocks: Vec<f64> = ok.iter().map(|p| p.core_ghz).collect();
    let (time_cv, cycles_cv, probe_cv) = (cv(&times), cv(&cycles), cv(&clocks));
    // cycles_cv < time_cv exactly when the elasticity exceeds ½; decided only when its 95%
    // CI lies on one side of ½, so a few points over a clock that barely moved (the probe
    // steps by 0.1 GHz) cannot flip a call between "scales" and "fixed" by chance.
    let clear = elasticity_ci(&ok, residual_df).is_some_and(|(e, half)| (e - 0.5).abs() > half);
    let too_little = ok.len() < MIN_POINTS || probe_cv.is_nan() || probe_cv < MIN_PROBE_CV;
    let verdict = if too_little || !clear {
        Scaling::Undecided
    } else if cycles_cv < time_cv {
        Scaling::Scales
    } else {
        Scaling::Fixed
    };
    ScalingEvidence {
        time_cv,
        cycles_cv,
        probe_cv,
        elasticity: elasticity(&ok),
        verdict,
    }
}

/// [`clock_scaling`] on the points of two sides, each divided by its own geometric mean of
/// time and of clock, so only the variation within a side is evidence (see the module docs).
/// A side of one point says nothing about that variation and is left out; each side's
/// centring uses up one degree of freedom of the residuals, the common slope one more.
pub fn within_side_scaling(a: &[Point], b: &[Point]) -> ScalingEvidence {
    let centred = |side: &[Point]| -> Vec<Point> {
        let ok: Vec<Point> = side
            .iter()
            .copied()
            .filter(|p| positive(p.ns) && positive(p.core_ghz))
            .collect();
        if ok.len() < 2 {
            return Vec::new();
        }
        let n = ok.len() as f64;
        let gm_ns = (ok.iter().map(|p| p.ns.ln()).sum::<f64>() / n).exp();
        let gm_ghz = (ok.iter().map(|p| p.core_ghz.ln()).sum::<f64>() / n).exp();
        ok.iter()
            .map(|p| Point {
                ns: p.ns / gm_ns,
                core_ghz: p.core_ghz / gm_ghz,
            })
            .collect()
    };
    let (ca, cb) = (centred(a), centred(b));
    let sides = [&ca, &cb].iter().filter(|s| !s.is_empty()).count() as f64;
    let df = (ca.len() + cb.len()) as f64 - sides - 1.0;
    let mut all = ca;
    all.extend(cb);
    evidence(all, df)
}

/// The least-squares line of ln time on ln clock: the elasticity (minus its slope) and what
/// its confidence interval needs.
struct Fit {
    elasticity: f64,
    /// Residual sum of squares.
    rss: f64,
    /// Sum of squared deviations of ln clock.
    sxx: f64,
}

/// [`Fit`] of `points`; `None` under two points or without spread of the clock.
fn fit(points: &[Point]) -> Option<Fit> {
    let xs: Vec<f64> = points.iter().map(|p| p.core_ghz.ln()).collect();
    let ys: Vec<f64> = points.iter().map(|p| p.ns.ln()).collect();
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    if xs.len() < 2 || sxx <= 0.0 {
        return None;
    }
    let e = -sxy / sxx;
    // ln ns = my − e (ln ghz − mx) + residual.
    let rss = (xs.iter().zip(&ys))
        .map(|(x, y)| (y - my + e * (x - mx)).powi(2))
        .sum();
    Some(Fit {
        elasticity: e,
        rss,
        sxx,
    })
}

/// The elasticity and the half-width of its 95% CI from the regression's residuals
/// (Student's t with `df` degrees of freedom); `None` with `df` < 1 or without a [`fit`].
fn elasticity_ci(points: &[Point], df: f64) -> Option<(f64, f64)> {
    use statrs::distribution::{ContinuousCDF, StudentsT};
    let f = fit(points).filter(|_| df >= 1.0)?;
    let se = (f.rss / df / f.sxx).sqrt();
    let q = StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975);
    Some((f.elasticity, q * se))
}

fn elasticity(points: &[Point]) -> Option<f64> {
    fit(points).map(|f| f.elasticity)
}

#[cfg(test)]
mod tests;
