//! One probe of the machine's speed as three numbers: the effective core clock, the ALU
//! throughput and the null-syscall cost ([`ProbeSample`]), and the arithmetic from the raw
//! probe reading to them.
//!
//! The core clock is `CYCLES_PER_MUL / ns per dependent multiply`. The constant is the
//! latency of a 64-bit register multiply, which is documented and uniform on x86-64 and
//! varies a little on aarch64:
//! - x86_64: `imul r64, r64` takes **3 cycles** on every Intel core since Sandy Bridge
//!   (2011) and every AMD core since Bulldozer/Zen (Agner Fog's instruction tables, uops.info).
//! - aarch64: `mul x, x, x` (MADD X-form) takes **2 cycles** on the cores Linux servers and
//!   recent phones use — Cortex-A76 and later, Neoverse N1/N2/V1/V2 (Graviton 2–4, Ampere
//!   Altra, Cobalt, Axion); Arm's software optimisation guides and LLVM's scheduling models
//!   (`AArch64SchedNeoverseN2.td`: `WriteIM64` latency 2). Older and little cores differ
//!   (Cortex-A53/A55: 4 in LLVM's model; Apple M1/M2: 3; A57/A72: 3 or more), so there the
//!   absolute GHz is off by that factor. Ratios of probes (drift, machine B/A) do not
//!   depend on the constant at all; only absolute core-cycle figures do.
//!
//! How repeatable the probe is on the development machine, and the thresholds chosen from
//! that, is documented on [`super::judge::Limits`].
//!
//! Pure apart from [`ProbeSample::take`], which runs the probe (≈ 0.2 ms) on the calling
//! thread; the timed intervals are those of [`sysmeter_sys::probe`].

use serde::{Deserialize, Serialize};
use sysmeter_sys::probe::{self, ProbeReading};

/// Core cycles per dependent 64-bit multiply on this architecture (see the module docs).
#[cfg(target_arch = "x86_64")]
pub const CYCLES_PER_MUL: f64 = 3.0;
/// Core cycles per dependent 64-bit multiply on this architecture (see the module docs).
#[cfg(target_arch = "aarch64")]
pub const CYCLES_PER_MUL: f64 = 2.0;
/// Core cycles per dependent 64-bit multiply: unknown on this architecture, so 1 and the
/// core clock is only meaningful relative to other probes.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const CYCLES_PER_MUL: f64 = 1.0;

/// The machine's speed at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ProbeSample {
    /// Effective core clock, GHz: cycles per multiply / ns per multiply.
    pub core_ghz: f64,
    /// Independent adds completed per ns (issue-width bound).
    pub throughput: f64,
    /// One null system call, ns.
    pub syscall_ns: f64,
}

impl ProbeSample {
    /// From a raw probe reading, with `cycles_per_mul` the multiply latency in cycles.
    pub fn from_reading(r: &ProbeReading, cycles_per_mul: f64) -> ProbeSample {
        ProbeSample {
            core_ghz: core_ghz(cycles_per_mul, r.mul_ns),
            throughput: per_ns(r.add_ns),
            syscall_ns: r.syscall_ns,
        }
    }

    /// Run the standard probe on the calling thread (≈ 0.2 ms of work).
    pub fn take() -> ProbeSample {
        ProbeSample::from_reading(&probe::probe(), CYCLES_PER_MUL)
    }
}

/// Core clock in GHz from the time of one multiply (`cycles / ns`); 0 for a non-positive
/// or non-finite time.
pub fn core_ghz(cycles_per_mul: f64, mul_ns: f64) -> f64 {
    if mul_ns.is_finite() && mul_ns > 0.0 {
        cycles_per_mul / mul_ns
    } else {
        0.0
    }
}

/// Operations per ns from ns per operation; 0 for a non-positive or non-finite time.
pub fn per_ns(ns_per_op: f64) -> f64 {
    if ns_per_op.is_finite() && ns_per_op > 0.0 {
        1.0 / ns_per_op
    } else {
        0.0
    }
}

/// `(end − start) / start`: +0.10 means end is 10% higher. `None` when start is not a
/// positive finite number or end is not finite.
pub fn relative_change(start: f64, end: f64) -> Option<f64> {
    (start.is_finite() && start > 0.0 && end.is_finite()).then(|| (end - start) / start)
}

/// How far two estimates of the core clock disagree, as `|a − b| / max(a, b)` (0 = equal);
/// `None` unless both are positive. The add chain (1 cycle per add) and the multiply chain
/// should agree within a few % when both are carried across loop turns.
pub fn clock_disagreement(a_ghz: f64, b_ghz: f64) -> Option<f64> {
    let hi = a_ghz.max(b_ghz);
    (a_ghz > 0.0 && b_ghz > 0.0 && hi.is_finite()).then(|| (a_ghz - b_ghz).abs() / hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_clock_is_cycles_over_time() {
        let r = ProbeReading {
            mul_ns: 0.8,
            add_ns: 0.0625,
            syscall_ns: 250.0,
            duration_ns: 300_000,
        };
        let s = ProbeSample::from_reading(&r, 3.0);
        assert!((s.core_ghz - 3.75).abs() < 1e-12);
        assert!((s.throughput - 16.0).abs() < 1e-12);
        assert_eq!(s.syscall_ns, 250.0);
        assert_eq!(core_ghz(2.0, 0.5), 4.0);
        assert_eq!(core_ghz(3.0, 0.0), 0.0);
        assert_eq!(core_ghz(3.0, f64::NAN), 0.0);
        assert_eq!(per_ns(-1.0), 0.0);
    }

    #[test]
    fn relative_change_and_disagreement() {
        assert_eq!(relative_change(4.0, 3.0), Some(-0.25));
        assert_eq!(relative_change(2.0, 2.5), Some(0.25));
        assert_eq!(relative_change(0.0, 1.0), None);
        assert_eq!(relative_change(1.0, f64::INFINITY), None);
        assert_eq!(clock_disagreement(3.6, 3.6), Some(0.0));
        let d = clock_disagreement(5.91, 3.84).expect("both positive");
        assert!((d - (5.91 - 3.84) / 5.91).abs() < 1e-12);
        assert_eq!(clock_disagreement(0.0, 3.0), None);
    }

    #[test]
    fn a_real_probe_gives_a_plausible_sample() {
        let s = ProbeSample::take();
        assert!(s.core_ghz.is_finite() && s.core_ghz > 0.0, "{s:?}");
        assert!(s.throughput.is_finite() && s.throughput > 0.0, "{s:?}");
        assert!(s.syscall_ns.is_finite() && s.syscall_ns > 0.0, "{s:?}");
    }
}
