//! What one sample costs the sampled program, measured before each profile.
//!
//! A sample is a timer interrupt on the target's CPU that walks its frame pointers and
//! copies the stack into the ring buffer; that time is taken from the target (and in a VM
//! each timer interrupt also exits to the hypervisor, which dominates). To measure it, this
//! thread runs a fixed spin loop (~5 ms) alternately without and with a sampling event on
//! itself (same event type and call-chain settings, at a high frequency so the difference is
//! well above noise), `PAIRS` times each, timing each block by the thread's CPU time
//! (`observe::overhead::paired`, the one A/B loop, in its per-event mode). The cost per sample is the median over
//! pairs of (sampled − unsampled CPU time) / samples taken. The in-target overhead of a profile at
//! frequency F is then estimated as `cost × F` of its CPU time.
//!
//! How good is the estimate? Side by side on this project's 2-vCPU VM
//! (`scripts/profile-overhead.sh`: CPU time of the same workload with and without
//! profiling, medians of 7–11 alternating pairs, release build): at 4999 Hz the target's CPU
//! time grew 3.4–4.6% against an estimate of 3.9–4.2%; at 999 Hz it grew 0.5–2.5% over four
//! runs of the script against estimates of 0.7–1.1% — a sample at 1 kHz can cost up to about
//! twice one at 10 kHz (colder caches for the stack walk: `perf record -g` costs the same
//! ~2%, without `-g` ~0.5%), and calibrating at 1 kHz directly needs seconds to rise above
//! the noise of a busy machine. A kernel with IRQ time accounting would also charge
//! interrupt time to no thread and lower the estimate. The reader's own CPU time is
//! measured separately (session).

use crate::diagnose::observe::overhead::{CpuOf, Paired, Traced, cpu_ns, paired};
use crate::diagnose::observe::pump::{SampleCount, drain_ring};
use perf_event::Sampler;

use crate::diagnose::observe::sampled::SampledError;
use crate::diagnose::observe::sampled::cpu_clock::{
    builder, format, is_permission, open_error, open_sampler,
};

/// Timed blocks of each kind.
const PAIRS: usize = 10;
/// Target CPU time of one block, ns.
const BLOCK_NS: f64 = 5e6;
/// Highest calibration frequency (samples per second).
const MAX_CALIBRATION_HZ: u64 = 10_000;

/// The measured cost of sampling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Calibration {
    /// Wall time one sample takes from the sampled thread, ns (0 when below what the
    /// calibration can resolve).
    pub per_sample_ns: f64,
    /// Frequency the calibration sampled at, Hz.
    pub frequency: u64,
    /// Samples taken in one sampled block (median).
    pub samples_per_block: f64,
    /// CPU time of an unsampled block (median), ns.
    pub block_ns: f64,
}

impl Calibration {
    /// Share of the target's CPU time spent taking samples at `frequency` (0.003 = 0.3%).
    pub fn in_target_share(&self, frequency: u64) -> f64 {
        self.per_sample_ns * frequency as f64 / 1e9
    }
}

/// A spin loop whose iterations cost the same every time (a dependent multiply-add).
fn spin(iterations: u64) -> u64 {
    let mut x = 1u64;
    for _ in 0..iterations {
        x = std::hint::black_box(x)
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
    }
    x
}

/// CPU time of `iterations` of [`spin`] on this thread, ns.
fn timed(iterations: u64) -> f64 {
    let t = cpu_ns(CpuOf::Thread);
    std::hint::black_box(spin(iterations));
    cpu_ns(CpuOf::Thread) - t
}

/// Iterations that take about [`BLOCK_NS`].
fn block_iterations() -> u64 {
    let mut n = 10_000u64;
    loop {
        let ns = timed(n);
        if ns >= 1e6 || n >= 1 << 40 {
            return ((n as f64) * BLOCK_NS / ns.max(1.0)).max(1.0) as u64;
        }
        n *= 4;
    }
}

fn max_sample_rate() -> u64 {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or(MAX_CALIBRATION_HZ)
}

/// An event sampling this thread like a profile would, disabled.
fn self_sampler(frequency: u64) -> Result<Sampler, SampledError> {
    let open = |kernel: bool| {
        let mut b = builder(frequency, kernel);
        b.observe_self().any_cpu().inherit(false);
        open_sampler(&b)
    };
    match open(true) {
        Err(e) if is_permission(&e) => open(false),
        other => other,
    }
    .map_err(|e| open_error("this process (overhead calibration)".into(), e))
}

/// Samples waiting in the ring buffer (and drops them).
fn drain_samples(s: &mut Sampler) -> u64 {
    let mut n = SampleCount::default();
    drain_ring(s, format(), &mut n);
    n.0
}

/// Measures the cost of one sample (about 0.1 s of CPU time).
pub fn calibrate() -> Result<Calibration, SampledError> {
    let frequency = MAX_CALIBRATION_HZ.min(max_sample_rate()).max(1);
    let mut sampler = self_sampler(frequency)?;
    let iterations = block_iterations();
    let sample_error = |e| open_error("this process (overhead calibration)".into(), e);
    let unsampled = |_: &mut Sampler| Ok(timed(iterations));
    let sampled = |s: &mut Sampler| {
        s.enable().map_err(sample_error)?;
        let cost_ns = timed(iterations);
        s.disable().map_err(sample_error)?;
        let events = drain_samples(s) as f64;
        Ok(Traced { cost_ns, events })
    };
    let pairs = Paired::per_event(&paired(PAIRS, &mut sampler, unsampled, sampled)?);
    Ok(Calibration {
        per_sample_ns: pairs.per_event_ns().unwrap_or(0.0),
        frequency,
        samples_per_block: pairs.events_per_block(),
        block_ns: pairs.plain_block_ns(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_is_cost_times_frequency() {
        let c = Calibration {
            per_sample_ns: 2000.0,
            frequency: 10_000,
            samples_per_block: 100.0,
            block_ns: 1e7,
        };
        assert!((c.in_target_share(1000) - 0.002).abs() < 1e-12);
    }
}
