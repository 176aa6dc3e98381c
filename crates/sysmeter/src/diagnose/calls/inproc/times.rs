//! Per-call times from the library's tick histograms, with the hook's own cost taken out:
//! the calibration (function 0, an empty function timed through the same hook in the same
//! mode) gives the hook's median and its spread; a function's time is its median minus the
//! calibration's, printed only where it stands clear of that spread, otherwise reported as
//! below resolution with a bound that contains it (never a median of 0 ns).
//!
//! Pure. Depends on the sibling `region`.

use super::region::{BUCKETS, FnCounts, bucket_low};

/// A function's counts summed over threads.
#[derive(Debug, Clone, Default)]
pub struct Totals {
    /// Every call.
    pub count: u64,
    /// Timed calls.
    pub timed: u64,
    /// Ticks of the timed calls.
    pub sum: u64,
    /// Timed calls per bucket.
    pub hist: Vec<u64>,
}

impl Totals {
    /// Adds one thread's counts.
    pub fn add(&mut self, f: &FnCounts) {
        self.count += f.count;
        self.timed += f.timed;
        self.sum += f.sum;
        self.hist.resize(BUCKETS, 0);
        for (h, &v) in self.hist.iter_mut().zip(&f.hist) {
            *h += u64::from(v);
        }
    }

    /// The `q` quantile in ticks (the middle of its bucket); `None` when nothing was timed.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        let n: u64 = self.hist.iter().sum();
        if n == 0 {
            return None;
        }
        let want = (q * n as f64).ceil().max(1.0) as u64;
        let mut acc = 0;
        for (b, &v) in self.hist.iter().enumerate() {
            acc += v;
            if acc >= want {
                return Some((bucket_low(b) + bucket_low(b + 1)) / 2.0);
            }
        }
        None
    }

    /// Mean ticks of a timed call.
    pub fn mean(&self) -> Option<f64> {
        (self.timed > 0).then(|| self.sum as f64 / self.timed as f64)
    }
}

/// The hook's cost in a run, in ns.
#[derive(Debug, Clone, Copy, Default)]
pub struct Hook {
    /// Median of the empty function through the hook.
    pub median_ns: f64,
    /// Mean of the same.
    pub mean_ns: f64,
    /// Half the 10–90 % range of the empty function (at least one bucket).
    pub spread_ns: f64,
    /// One step of the time-stamp counter: a median read from it is known to one step, so
    /// the difference of two medians (a function's and the calibration's) to one more.
    pub step_ns: f64,
    /// Calls of the empty function timed.
    pub timed: u64,
}

impl Hook {
    /// The calibration from its totals, `ns_per_tick` converting; the resolution is at least
    /// one step of the counter (`step_ticks`).
    pub fn of(cal: &Totals, ns_per_tick: f64, step_ticks: f64) -> Hook {
        let (Some(m), Some(p10), Some(p90)) =
            (cal.quantile(0.5), cal.quantile(0.1), cal.quantile(0.9))
        else {
            return Hook::default();
        };
        let bucket = (m / 8.0).max(step_ticks).max(1.0);
        Hook {
            median_ns: m * ns_per_tick,
            mean_ns: cal.mean().unwrap_or(m) * ns_per_tick,
            spread_ns: ((p90 - p10) / 2.0).max(bucket) * ns_per_tick,
            step_ns: step_ticks.max(1.0) * ns_per_tick,
            timed: cal.timed,
        }
    }

    /// The resolution of a time with the hook removed: the hook's spread and one step of
    /// the counter for the subtraction of two medians.
    pub fn resolution_ns(&self) -> f64 {
        self.spread_ns + self.step_ns
    }
}

/// A function's time per call, hook removed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PerCall {
    /// Stands clear of the hook's spread.
    Time {
        /// Median, ns.
        median_ns: f64,
        /// Mean, ns.
        mean_ns: f64,
    },
    /// Not clear of the spread: the time lies between 0 and `bound_ns`.
    BelowResolution {
        /// Upper bound, ns.
        bound_ns: f64,
        /// Mean (hook removed, at least 0), ns.
        mean_ns: f64,
    },
    /// No call of it was timed.
    Untimed,
}

/// The time per call of `f` with `hook` removed.
pub fn per_call(f: &Totals, hook: &Hook, ns_per_tick: f64) -> PerCall {
    let (Some(m), Some(mean)) = (f.quantile(0.5), f.mean()) else {
        return PerCall::Untimed;
    };
    let median_ns = m * ns_per_tick - hook.median_ns;
    let mean_ns = (mean * ns_per_tick - hook.mean_ns).max(0.0);
    if median_ns > hook.resolution_ns() {
        PerCall::Time { median_ns, mean_ns }
    } else {
        PerCall::BelowResolution {
            bound_ns: median_ns.max(0.0) + hook.resolution_ns(),
            mean_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn totals(ticks: &[(usize, u64)]) -> Totals {
        let mut t = Totals {
            hist: vec![0; BUCKETS],
            ..Totals::default()
        };
        for &(b, n) in ticks {
            t.hist[b] += n;
            t.timed += n;
            t.count += n;
            t.sum += (bucket_low(b) as u64) * n;
        }
        t
    }

    #[test]
    fn a_time_inside_the_hooks_spread_is_below_resolution_never_zero() {
        let cal = totals(&[(40, 100)]);
        let hook = Hook::of(&cal, 1.0, 1.0);
        let same = per_call(&totals(&[(40, 50)]), &hook, 1.0);
        let PerCall::BelowResolution { bound_ns, .. } = same else {
            panic!("{same:?}")
        };
        assert!(bound_ns > 0.0);
        let slow = per_call(&totals(&[(80, 50)]), &hook, 1.0);
        assert!(matches!(slow, PerCall::Time { median_ns, .. } if median_ns > 0.0));
    }

    #[test]
    fn the_bound_adds_one_counter_step_for_the_subtraction() {
        let cal = totals(&[(40, 100)]);
        let (coarse, fine) = (Hook::of(&cal, 1.0, 30.0), Hook::of(&cal, 1.0, 1.0));
        assert_eq!(coarse.step_ns, 30.0);
        assert_eq!(coarse.resolution_ns(), coarse.spread_ns + 30.0);
        let f = totals(&[(40, 50)]);
        let bound = |h: &Hook| match per_call(&f, h, 1.0) {
            PerCall::BelowResolution { bound_ns, .. } => bound_ns,
            other => panic!("{other:?}"),
        };
        // Same median as the calibration: the bound is the resolution itself.
        assert_eq!(bound(&coarse), coarse.resolution_ns());
        assert_eq!(bound(&fine), fine.resolution_ns());
        assert!(bound(&coarse) > bound(&fine));
    }
}
