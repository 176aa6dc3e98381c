//! The harness loop's cost measured *beside* each metric, not once per run. A workload written
//! as `for _ in 0..iters { black_box(op()) }` pays one turn of that loop per operation, and the
//! turn's cost is subtracted. It is not a constant of the machine: on this development host a
//! turn took 0.32 ns (one core cycle) in most runs and 0.59–0.64 ns in runs whose start fell in
//! a moment when the core's other hardware thread was busy (its front end then alternates
//! between the two threads). The run-start calibration then subtracted 0.3 ns too much from
//! every call of the whole run, and `cpu.call`'s direct call read 0.70 ns in those runs and
//! 0.97 ns in the others — a 30% "change" between identical runs. Timing the reference loop
//! between the metric's own samples subtracts what a turn cost at that moment.
//!
//! Depends on `harness::calibrate` (the reference loop) only.

use std::hint::black_box;
use std::time::Instant;

use super::calibrate::reference_loop;

/// One reference reading before the first sample and one after every this many samples.
/// A reading runs the workload's turn count of the bare loop, so it costs a fraction of a
/// sample: for a call (1 ns against a 0.32 ns turn) the readings add about 8% to the
/// metric's time, for an operation as cheap as the turn itself at most a quarter. They
/// count against the metric's time budget like its samples.
const EVERY: usize = 4;
/// Readings before the first sample (their median is the estimate until more arrive).
const FIRST: usize = 3;

/// The reference loop's per-turn cost during one metric's sampling.
pub struct LoopReference {
    iters: u64,
    timer_ns: f64,
    /// Per-turn readings, kept sorted so the median is at hand after each one.
    readings: Vec<f64>,
}

impl LoopReference {
    /// Starts with [`FIRST`] readings of `iters` turns (the workload's own count, so the
    /// loop runs the same length); `timer_ns` is the calibrated timer pair.
    pub fn start(iters: u64, timer_ns: f64) -> LoopReference {
        let mut r = LoopReference {
            iters: iters.max(1),
            timer_ns,
            readings: Vec::new(),
        };
        for _ in 0..FIRST {
            r.read();
        }
        r
    }

    /// Takes a reading when one is due after `samples` samples; whether it did (only then
    /// can [`LoopReference::per_turn_ns`] have moved).
    pub fn after_sample(&mut self, samples: usize) -> bool {
        let due = samples.is_multiple_of(EVERY);
        if due {
            self.read();
        }
        due
    }

    fn read(&mut self) {
        let t0 = Instant::now();
        reference_loop(black_box(self.iters));
        let ns = t0.elapsed().as_nanos() as f64;
        let turn = ((ns - self.timer_ns) / self.iters as f64).max(0.0);
        let at = self.readings.partition_point(|&r| r < turn);
        self.readings.insert(at, turn);
    }

    /// Median per-turn cost of the readings so far, ns.
    pub fn per_turn_ns(&self) -> f64 {
        self.readings
            .get(self.readings.len() / 2)
            .copied()
            .unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::LoopReference;

    #[test]
    fn readings_come_first_and_then_every_few_samples() {
        let mut r = LoopReference::start(10_000, 0.0);
        assert_eq!(r.readings.len(), super::FIRST);
        for n in 1..=8 {
            r.after_sample(n);
        }
        assert_eq!(r.readings.len(), super::FIRST + 2, "after samples 4 and 8");
        let turn = r.per_turn_ns();
        // A turn of a counting loop costs something, and far less than a microsecond.
        assert!(turn > 0.0 && turn < 1000.0, "{turn}");
    }
}
