//! Complexity fits for `sysmeter scale`: fit t = a·g(N) + b for each complexity class g ∈ {1,
//! log N, N, N log N, N², N³, 2^N}, pick the class that describes the data, and predict.
//! [`knee`] finds an abrupt rise of the time per element.
//!
//! How a class is fitted, and why:
//! - **Relative least squares.** Each size's time is weighted by 1/t², i.e. the fit minimises
//!   the squared *relative* residuals. Timing noise is proportional to the time, and sizes
//!   span decades: plain least squares would let the largest size decide everything.
//! - **a ≥ 0 and b ≥ 0.** The fixed cost b (process start-up, set-up) cannot be negative and
//!   time does not fall as N grows. The constraint is also what separates neighbouring
//!   classes over a finite range: a straight line through N log N data needs a negative
//!   intercept, so without it O(N) and O(N log N) fit almost alike. Every class can still
//!   reproduce a constant (a = 0), so no class does worse than O(1).
//! - **nRMS** is the root mean square of the relative residuals (t − fit)/t: 0.02 means the
//!   class misses the measured times by about 2%. It is comparable across classes and runs.
//! - **Selection** ([`SelectRule`]): take the lowest nRMS m*, then choose the *simplest* class
//!   whose nRMS is within max(m*·(1 + `rel_margin`), m* + `abs_margin`). A more complex class
//!   therefore wins only if it lowers nRMS by more than 20% *and* by more than half a
//!   percentage point — differences smaller than that are noise, and the simpler class is
//!   the better explanation (each class has the same two parameters, so "complex" means more
//!   curvature, not more parameters).
//! - A class is skipped, with the reason, when g overflows a double (2^N beyond N ≈ 1023) or
//!   does not vary over the sizes.
//!
//! Pure: depends on nothing but the standard library and `thiserror`.

mod class;
pub mod knee;

#[cfg(test)]
mod tests;

pub use class::Class;

/// The fit of one class: t ≈ a·g(N) + b.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClassFit {
    /// The class.
    pub class: Class,
    /// Coefficient of g(N), in the unit of t per unit of g (≥ 0). For O(1) it is the constant.
    pub a: f64,
    /// Fixed cost, in the unit of t (≥ 0; always 0 for O(1)).
    pub b: f64,
    /// Root mean square of the relative residuals (t − fit)/t.
    pub nrms: f64,
}

impl ClassFit {
    /// The fitted time at size `n`; `None` where g(n) is not finite.
    pub fn predict(&self, n: f64) -> Option<f64> {
        let g = self.class.g(n);
        let t = self.a * g + self.b;
        t.is_finite().then_some(t)
    }
}

/// Why data cannot be fitted at all.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// The size and time slices differ in length.
    #[error("got {sizes} sizes but {times} times; every size needs exactly one time")]
    LengthMismatch {
        /// Number of sizes.
        sizes: usize,
        /// Number of times.
        times: usize,
    },
    /// Fewer distinct sizes than a two-parameter fit needs.
    #[error(
        "a complexity fit needs at least {needed} distinct sizes but got {got}; measure more \
         sizes (--sizes or a wider --range)"
    )]
    TooFewSizes {
        /// Distinct sizes given.
        got: usize,
        /// Distinct sizes needed.
        needed: usize,
    },
    /// A size or time is not a positive finite number.
    #[error(
        "point {index} (N = {n}, t = {t}) is not usable: sizes and times must be positive \
         finite numbers"
    )]
    BadPoint {
        /// Position of the point.
        index: usize,
        /// Its size.
        n: f64,
        /// Its time.
        t: f64,
    },
}

/// A class that was not fitted, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Skipped {
    /// The class.
    pub class: Class,
    /// Why, in one sentence.
    pub reason: String,
}

/// How [`select`] trades fit quality against simplicity (module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelectRule {
    /// A simpler class is kept while its nRMS ≤ best·(1 + this).
    pub rel_margin: f64,
    /// … or while its nRMS ≤ best + this (absolute, as a fraction: 0.005 = 0.5 points).
    pub abs_margin: f64,
}

impl Default for SelectRule {
    fn default() -> SelectRule {
        SelectRule {
            rel_margin: 0.25,
            abs_margin: 0.005,
        }
    }
}

/// Fits of every class and the chosen one.
#[derive(Debug, Clone, PartialEq)]
pub struct Complexity {
    /// Fitted classes, simplest first.
    pub fits: Vec<ClassFit>,
    /// Classes that could not be fitted.
    pub skipped: Vec<Skipped>,
    /// Index into `fits` of the chosen class.
    pub best: usize,
}

impl Complexity {
    /// The chosen fit.
    pub fn best(&self) -> &ClassFit {
        &self.fits[self.best]
    }

    /// The fit with the lowest nRMS other than the chosen one, if any.
    pub fn runner_up(&self) -> Option<&ClassFit> {
        self.fits
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != self.best)
            .map(|(_, f)| f)
            .min_by(|x, y| x.nrms.total_cmp(&y.nrms))
    }
}

/// Smallest number of distinct sizes [`fit_all`] accepts (two parameters plus one to judge).
pub const MIN_SIZES: usize = 3;

/// Fits every class to the points (`sizes[i]`, `times[i]`) and selects one by `rule`.
pub fn fit_all(sizes: &[f64], times: &[f64], rule: SelectRule) -> Result<Complexity, FitError> {
    check_points(sizes, times)?;
    let mut fits = Vec::new();
    let mut skipped = Vec::new();
    for class in Class::ALL {
        match fit_class(class, sizes, times) {
            Ok(fit) => fits.push(fit),
            Err(reason) => skipped.push(Skipped { class, reason }),
        }
    }
    // O(1) always fits (g = 1 is finite and the times are positive), so `fits` is not empty.
    let best = select(&fits, rule);
    Ok(Complexity {
        fits,
        skipped,
        best,
    })
}

/// Validates lengths, positivity and the number of distinct sizes.
fn check_points(sizes: &[f64], times: &[f64]) -> Result<(), FitError> {
    if sizes.len() != times.len() {
        return Err(FitError::LengthMismatch {
            sizes: sizes.len(),
            times: times.len(),
        });
    }
    for (index, (&n, &t)) in sizes.iter().zip(times).enumerate() {
        if !(n.is_finite() && t.is_finite() && n > 0.0 && t > 0.0) {
            return Err(FitError::BadPoint { index, n, t });
        }
    }
    let mut distinct = sizes.to_vec();
    distinct.sort_unstable_by(f64::total_cmp);
    distinct.dedup();
    if distinct.len() < MIN_SIZES {
        return Err(FitError::TooFewSizes {
            got: distinct.len(),
            needed: MIN_SIZES,
        });
    }
    Ok(())
}

/// Index of the simplest fit whose nRMS is within the rule's margins of the lowest
/// (`fits` simplest first, not empty).
pub fn select(fits: &[ClassFit], rule: SelectRule) -> usize {
    let lowest = fits.iter().map(|f| f.nrms).fold(f64::INFINITY, f64::min);
    let limit = (lowest * (1.0 + rule.rel_margin)).max(lowest + rule.abs_margin);
    fits.iter().position(|f| f.nrms <= limit).unwrap_or(0)
}

/// Fits t = a·g(N) + b with a, b ≥ 0 by relative least squares; `Err` says why the class
/// cannot be fitted to these sizes. Points must already be checked.
pub fn fit_class(class: Class, sizes: &[f64], times: &[f64]) -> Result<ClassFit, String> {
    let raw: Vec<f64> = sizes.iter().map(|&n| class.g(n)).collect();
    if let Some(i) = raw.iter().position(|g| !g.is_finite()) {
        let limit = if class == Class::Exponential {
            " (2^N is finite only up to N = 1023)"
        } else {
            ""
        };
        return Err(format!(
            "{} overflows a double at N = {}{limit}",
            class.term(),
            sizes[i]
        ));
    }
    // Scale g to at most 1 in magnitude so that the sums below stay far from overflow
    // (N³ and 2^N reach 1e300 where a double still holds g but not g²).
    let scale = raw.iter().fold(0.0f64, |m, g| m.max(g.abs()));
    let gs: Vec<f64> = raw
        .iter()
        .map(|g| g / scale.max(f64::MIN_POSITIVE))
        .collect();
    let (a, b) = if class == Class::Constant {
        (through_origin(&gs, times), 0.0)
    } else {
        let lo = gs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = gs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if hi - lo <= 1e-12 * hi.abs().max(lo.abs()) || hi.is_nan() || lo.is_nan() {
            return Err(format!(
                "{} does not vary over the sizes measured, so it cannot be told apart from \
                 a constant",
                class.term()
            ));
        }
        nonnegative_pair(&gs, times)
    };
    let a = a / scale.max(f64::MIN_POSITIVE);
    let nrms = relative_rms(sizes, times, |n| a * class.g(n) + b);
    Ok(ClassFit { class, a, b, nrms })
}

/// Weighted sums of the normal equations with weights 1/t².
struct Sums {
    w: f64,
    g: f64,
    gg: f64,
    t: f64,
    gt: f64,
}

fn sums(gs: &[f64], times: &[f64]) -> Sums {
    let mut s = Sums {
        w: 0.0,
        g: 0.0,
        gg: 0.0,
        t: 0.0,
        gt: 0.0,
    };
    for (&g, &t) in gs.iter().zip(times) {
        let w = 1.0 / (t * t);
        s.w += w;
        s.g += w * g;
        s.gg += w * g * g;
        s.t += w * t;
        s.gt += w * g * t;
    }
    s
}

/// Best a ≥ 0 for t ≈ a·g (no intercept).
fn through_origin(gs: &[f64], times: &[f64]) -> f64 {
    let s = sums(gs, times);
    if s.gg > 0.0 {
        (s.gt / s.gg).max(0.0)
    } else {
        0.0
    }
}

/// Best (a, b) with a, b ≥ 0 for t ≈ a·g + b. The objective is a convex quadratic, so when the
/// free optimum leaves the quadrant the constrained one lies on an edge (a = 0 or b = 0):
/// evaluate both edges' optima and keep the better.
fn nonnegative_pair(gs: &[f64], times: &[f64]) -> (f64, f64) {
    let s = sums(gs, times);
    let det = s.w * s.gg - s.g * s.g;
    if det > 0.0 {
        let a = (s.w * s.gt - s.g * s.t) / det;
        let b = (s.gg * s.t - s.g * s.gt) / det;
        if a >= 0.0 && b >= 0.0 {
            return (a, b);
        }
    }
    let edge_b = (0.0, s.t / s.w);
    let edge_a = (through_origin(gs, times), 0.0);
    let cost = |(a, b): (f64, f64)| -> f64 {
        gs.iter()
            .zip(times)
            .map(|(&g, &t)| ((t - a * g - b) / t).powi(2))
            .sum()
    };
    if cost(edge_a) < cost(edge_b) {
        edge_a
    } else {
        edge_b
    }
}

/// Root mean square of (t − model(N))/t.
fn relative_rms(sizes: &[f64], times: &[f64], model: impl Fn(f64) -> f64) -> f64 {
    let sum: f64 = sizes
        .iter()
        .zip(times)
        .map(|(&n, &t)| ((t - model(n)) / t).powi(2))
        .sum();
    (sum / sizes.len() as f64).sqrt()
}
