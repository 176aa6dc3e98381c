//! The durations a tracer keeps of each paired entry and exit (a system call for `trace`, a
//! library function for `calls`): all of them up to a bound, then a uniform reservoir, so
//! medians and percentiles stay honest on programs that make millions of calls while memory
//! stays bounded. Counts, totals, minimum and maximum are kept exactly by the callers. Pure;
//! depends on `fastrand`.

/// Per-call durations kept for statistics, per system call (`trace`) or function (`calls`);
/// beyond this a uniform reservoir sample of this size is kept (counts, totals, min and max
/// stay exact).
pub const MAX_SAMPLES: usize = 1 << 18;

/// Keeps duration `d`, the `seen`-th (counting from 1) of its kind, in `samples`: every one
/// up to [`MAX_SAMPLES`], then a uniform reservoir (Algorithm R: the `seen`-th replaces a
/// random slot with probability MAX/seen). `trace` and `calls` keep their samples by it.
pub fn keep_sample(samples: &mut Vec<f64>, seen: u64, d: f64, rng: &mut fastrand::Rng) {
    if samples.len() < MAX_SAMPLES {
        samples.push(d);
    } else {
        let slot = rng.u64(..seen) as usize;
        if slot < MAX_SAMPLES {
            samples[slot] = d;
        }
    }
}
