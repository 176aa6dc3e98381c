//! Per-run calibration of the harness's own timing: timer overhead and granularity, the cost
//! of one turn of the harness loop (reported; each metric times the loop again beside its
//! samples, `harness::loop_ref`), the shortest trustworthy sample interval, and the
//! time-stamp counter's rate against CLOCK_MONOTONIC.
//!
//! Timing model: a sample is `t0 = now(); workload(iters); t1 = now()`. Besides the work the
//! interval holds one timer read (the part of `now()` after it samples the clock plus the part
//! of the second `now()` before it does, which together cost what a back-to-back pair shows)
//! and `iters` turns of the loop that drives the operation. Both are measured here.

use std::hint::black_box;
use std::time::{Duration, Instant};

use super::Profile;
use crate::model::Calibration;

const TIMER_PAIRS: usize = 20_000;
const LOOP_ITERS: u64 = 200_000;
const LOOP_REPEATS: usize = 31;

/// The reference loop whose per-iteration cost is subtracted from workloads written as
/// `for _ in 0..iters { black_box(op()) }`. Kept `inline(never)` so it compiles the same
/// way as the workload closures' loops.
#[inline(never)]
pub fn reference_loop(iters: u64) {
    for i in 0..iters {
        black_box(i);
    }
}

fn median_of(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// (median back-to-back pair cost, smallest non-zero step), ns.
fn timer_overhead() -> (f64, f64) {
    let mut pairs = Vec::with_capacity(TIMER_PAIRS);
    let mut granularity = u128::MAX;
    for _ in 0..TIMER_PAIRS {
        let t0 = Instant::now();
        let t1 = Instant::now();
        let d = t1.duration_since(t0).as_nanos();
        if d > 0 {
            granularity = granularity.min(d);
        }
        pairs.push(d as f64);
    }
    let g = if granularity == u128::MAX {
        1.0
    } else {
        granularity as f64
    };
    (median_of(pairs), g)
}

fn loop_overhead(timer_ns: f64) -> f64 {
    let per_iter: Vec<f64> = (0..LOOP_REPEATS)
        .map(|_| {
            let t0 = Instant::now();
            reference_loop(black_box(LOOP_ITERS));
            let ns = t0.elapsed().as_nanos() as f64;
            ((ns - timer_ns) / LOOP_ITERS as f64).max(0.0)
        })
        .collect();
    median_of(per_iter)
}

/// TSC ticks per ns, measured by reading the counter and CLOCK_MONOTONIC at both ends of a
/// busy window; each end is the reading pair with the smallest counter gap, so a preemption
/// between the two reads cannot skew it.
fn tsc_rate(window: Duration) -> Option<f64> {
    sysmeter_sys::clock::counter_name()?;
    let sample = || {
        (0..64)
            .map(|_| {
                let c0 = sysmeter_sys::clock::counter();
                let t = Instant::now();
                let c1 = sysmeter_sys::clock::counter();
                (c1.wrapping_sub(c0), c0 / 2 + c1 / 2, t)
            })
            .min_by_key(|s| s.0)
    };
    let (_, c_start, t_start) = sample()?;
    while t_start.elapsed() < window {
        std::hint::spin_loop();
    }
    let (_, c_end, t_end) = sample()?;
    let ns = t_end.duration_since(t_start).as_nanos() as f64;
    let ticks = c_end.wrapping_sub(c_start) as f64;
    (ns > 0.0 && ticks > 0.0).then(|| ticks / ns)
}

/// Calibrate the harness for this run (call after pinning to the measuring CPU).
pub fn calibrate(profile: &Profile) -> Calibration {
    // Warm the code paths and let the CPU settle before the numbers that count.
    let _ = timer_overhead();
    let (timer_ns, granularity) = timer_overhead();
    let loop_ns = loop_overhead(timer_ns);
    // Timer granularity below 0.1% of the interval, and never shorter than 20 µs.
    let min_sample_ns = (granularity * 1000.0).max(timer_ns * 1000.0).max(20_000.0);
    let tsc_ghz = tsc_rate(profile.tsc_window);
    Calibration {
        clock: "CLOCK_MONOTONIC via std::time::Instant (vDSO clock_gettime)".to_string(),
        timer_overhead_ns: timer_ns,
        timer_granularity_ns: granularity,
        loop_overhead_ns: loop_ns,
        min_sample_ns,
        tsc_ghz,
        tsc_source: tsc_ghz.and(sysmeter_sys::clock::counter_name().map(str::to_string)),
    }
}
