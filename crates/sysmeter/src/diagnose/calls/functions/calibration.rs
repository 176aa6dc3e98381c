//! The hooks' own cost in a `calls --functions` run, measured in the same run by the
//! library: `inside`, the ticks an empty function's own interval holds (its entry hook after
//! the first reading and its exit hook before the second), from a histogram of 4 096 calls;
//! `full`, what a call's two hooks add to its caller's time, from 64 paired blocks of 256
//! hooked and 256 plain calls (the paired A/B shape of every tracer's calibration). Each
//! comes with its spread (half the 10–90 % range, at least one step of the counter): the
//! resolution.
//!
//! Pure. Depends on the sibling `inproc` (the histogram's reading, `times::Hook`).

use super::super::inproc::funcs_region::{CAL_CALLS, Functions};
use super::super::inproc::times::{Hook, Totals};

/// The hooks' cost, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    /// Inside a function's own interval, per call (mean).
    pub inside_ns: f64,
    /// Its spread.
    pub inside_spread_ns: f64,
    /// Added to the caller's time per call (median of the paired blocks).
    pub full_ns: f64,
    /// Its spread.
    pub full_spread_ns: f64,
    /// Empty calls timed for `inside`.
    pub calls: u64,
}

impl Cost {
    /// From the library's calibration, `ns_per_tick` converting; spreads at least one step
    /// of the counter (`step_ticks`).
    pub fn of(f: &Functions, ns_per_tick: f64, step_ticks: f64) -> Cost {
        let hist: Vec<u64> = f.cal_hist.iter().map(|&v| u64::from(v)).collect();
        let calls = hist.iter().sum();
        let inside = Hook::of(
            &Totals {
                count: calls,
                timed: calls,
                sum: f.cal_sum,
                hist,
            },
            ns_per_tick,
            step_ticks,
        );
        let mut per: Vec<f64> = f
            .cal_blocks
            .iter()
            .map(|&b| b as f64 / CAL_CALLS * ns_per_tick)
            .collect();
        per.sort_by(f64::total_cmp);
        let at = |q: f64| per.get(((per.len() as f64 - 1.0) * q).round() as usize);
        let (full, spread) = match (at(0.5), at(0.1), at(0.9)) {
            (Some(&m), Some(&lo), Some(&hi)) => (m.max(0.0), (hi - lo) / 2.0),
            _ => (0.0, 0.0),
        };
        let step = step_ticks * ns_per_tick / CAL_CALLS;
        Cost {
            // Sums of many calls are corrected, so the mean is what is removed.
            inside_ns: inside.mean_ns,
            inside_spread_ns: inside.spread_ns,
            full_ns: full.max(inside.mean_ns),
            full_spread_ns: spread.max(step),
            calls,
        }
    }

    /// The time of `calls` activations that made `nested` calls in all, measured `raw_ns`:
    /// each activation's own interval holds `inside`, each nested call `extra` more (the
    /// full cost for an inclusive time; the full cost less `inside`, which the callee's own
    /// interval already held, for a self time). Returns (time, resolution).
    pub fn remove(&self, raw_ns: f64, calls: u64, nested: u64, inclusive: bool) -> (f64, f64) {
        let extra = if inclusive {
            self.full_ns
        } else {
            self.full_ns - self.inside_ns
        };
        let (c, n) = (calls as f64, nested as f64);
        let time = raw_ns - c * self.inside_ns - n * extra;
        let resolution =
            c * self.inside_spread_ns + n * (self.inside_spread_ns + self.full_spread_ns);
        (time.max(0.0), resolution)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_calls_take_their_hooks_out_of_the_caller() {
        let c = Cost {
            inside_ns: 10.0,
            inside_spread_ns: 1.0,
            full_ns: 30.0,
            full_spread_ns: 2.0,
            calls: 1,
        };
        // One call of 1000 ns measured, 4 calls inside it.
        assert_eq!(
            c.remove(1000.0, 1, 4, true),
            (1000.0 - 10.0 - 120.0, 1.0 + 12.0)
        );
        assert_eq!(
            c.remove(1000.0, 1, 4, false),
            (1000.0 - 10.0 - 80.0, 1.0 + 12.0)
        );
        assert_eq!(c.remove(5.0, 1, 0, false).0, 0.0);
    }
}
