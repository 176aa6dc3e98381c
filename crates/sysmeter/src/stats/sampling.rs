//! Random variates the bootstrap needs beyond uniforms: standard normal, gamma and beta.
//!
//! Pure: every function draws only from the caller's seeded `fastrand::Rng`, so results are
//! reproducible. Kept private to `stats`; not a general-purpose distribution library.

/// Uniform on (0, 1]: never 0, so its logarithm and powers stay finite.
pub(crate) fn uniform_open(rng: &mut fastrand::Rng) -> f64 {
    1.0 - rng.f64()
}

/// Standard normal by the Box–Muller transform (one of the pair is discarded for simplicity;
/// the bootstrap draws a few thousand of these, so the waste does not matter).
pub(crate) fn standard_normal(rng: &mut fastrand::Rng) -> f64 {
    let radius = (-2.0 * uniform_open(rng).ln()).sqrt();
    radius * (std::f64::consts::TAU * rng.f64()).cos()
}

/// Gamma(shape, 1) for `shape ≥ 1` by Marsaglia & Tsang (2000), "A simple method for
/// generating gamma variables": rejection from a transformed normal, ~1.03 tries on average.
pub(crate) fn gamma(rng: &mut fastrand::Rng, shape: f64) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = standard_normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u = uniform_open(rng);
        let x2 = x * x;
        // Cheap squeeze first; the logarithmic test only for the few points it rejects.
        if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// Beta(a, b) for `a, b ≥ 1` as `X / (X + Y)` with X ~ Gamma(a), Y ~ Gamma(b).
pub(crate) fn beta(rng: &mut fastrand::Rng, a: f64, b: f64) -> f64 {
    let x = gamma(rng, a);
    let y = gamma(rng, b);
    x / (x + y)
}
