//! The machine-state probe: three fixed, short measurements that tell how fast this CPU is
//! *right now*, taken before and after every experiment so that a change of the machine
//! (a host changing the guest's clock, a busy SMT sibling, a slower kernel path) can be told
//! apart from a change of the thing measured.
//!
//! - [`mul_chain`]: a latency-bound chain of dependent 64-bit multiplies (`imul r64, r64` on
//!   x86_64, `mul x, x, x` on aarch64), `.rept 32` per turn of a counted loop. Every multiply
//!   reads the previous one's result *and the chain is carried across loop turns and calls*
//!   (the value is never reset to a constant), so no two multiplies can overlap: time per
//!   multiply is exactly the multiplier's latency in core cycles divided by the core clock.
//!   The loop's `dec`+`jnz` (`subs`+`b.ne`) runs on another port in the shadow of the chain,
//!   off its critical path, so it costs nothing and is not subtracted.
//! - [`independent_adds`]: eight independent add chains (`add r, r`, register operand, so no
//!   renamer can fold it as an immediate increment), four turns of the eight per loop turn:
//!   32 adds per turn with up to eight ready each cycle, so the time is set by how many ALU
//!   operations the core issues per cycle — the resource an SMT sibling shares, which a
//!   latency chain barely feels. The loop's fused `dec`+`jnz` takes one more ALU slot per
//!   32 adds (≈ 3%); it is not subtracted (only ratios of this figure are used).
//! - [`null_syscalls`]: raw `getppid` through `syscall(2)` (the [`crate::syscall`] wrapper),
//!   the cheapest kernel entry and exit.
//!
//! **Timed interval** (each of [`time_mul_chain`], [`time_throughput`], [`time_add_chain`],
//! [`time_null_syscalls`]): one `clock_gettime(CLOCK_MONOTONIC)` through the vDSO, the
//! kernel's loop, one more `clock_gettime`. Nothing else. The pair of clock reads (≈ 20–40 ns
//! here) is not subtracted: against ≈ 10–20 µs per repetition it is ≤ 0.3%, and it is the
//! same in every probe, so it cancels from the start/end and run A/run B ratios the probe is
//! for.
//!
//! **Repetitions** ([`probe`]): one untimed warm-up of each kernel (instruction cache, branch
//! predictor, the core waking from idle), then [`PROBE_REPS`] rounds of the three
//! measurements interleaved, and the **minimum** of each. Interrupts, preemption, steal and
//! timer ticks can only *add* time to a repetition, never remove it, so the minimum is the
//! repetition nobody disturbed, and it is the most repeatable statistic of a handful of
//! samples (the median of five still moves with ordinary jitter, and is spoiled when three of
//! the five are hit, e.g. by one long interrupt storm). Measured on the development machine
//! (200 probes, min vs median of the same five multiply-chain repetitions, other builds
//! running): CV of the core clock 1.3% vs 1.8%, p95 of the change between neighbouring
//! probes 0.57% vs 2.5%. The whole probe's work takes ≈ 150–180 µs at 3.69 GHz (median
//! 176 µs, p95 213 µs; ≈ 0.6 ms at 1 GHz), within the ≤ 2 ms budget; a probe during which the
//! thread is preempted takes longer in wall time (one of 200 took 5.2 ms), which its minimum
//! is immune to.
//!
//! **Why the chains must be carried.** `kernels::run_chain` (used by `cpu.ops`) restarts
//! each block of 100 operations from a constant, so consecutive blocks do not depend on one
//! another and the out-of-order core runs the next block's chain while the previous one
//! finishes (Zen 4 keeps 320 instructions in flight, more than one block). Measured here
//! on one CPU back to back: its add chain 0.16–0.21 ns per add ("5.2–6.3 GHz"), its
//! multiply chain 0.72 ns ("4.1–4.2 GHz"), while the carried chains of this module give
//! 0.273 ns per add (3.66 GHz at 1 cycle) and 0.82 ns per multiply (3.66–3.69 GHz at 3
//! cycles): the carried add and multiply agree within 1.5%, and both `cpu.ops` figures
//! are too fast, the add one by 45–70%, the multiply one by ≈ 13%. `/proc/cpuinfo` can
//! not settle it in this guest: it shows the TSC rate (2596 MHz) for every CPU.
//!
//! Depends only on `libc` (through [`crate::clock`] and [`crate::syscall`]).

use crate::clock::{self, ClockId};
use crate::syscall;

/// Multiplies per loop turn of [`mul_chain`].
pub const MUL_UNROLL: u64 = 32;
/// Adds per loop turn of [`independent_adds`] and [`add_chain`].
pub const ADD_UNROLL: u64 = 32;
/// Loop turns of one [`probe`] repetition of the multiply chain: 20 480 multiplies,
/// ≈ 17 µs at 3.6 GHz.
pub const PROBE_MUL_TURNS: u64 = 640;
/// Loop turns of one [`probe`] repetition of the throughput loop: 65 536 adds, ≈ 5 µs at
/// 4 adds per cycle and 3.6 GHz.
pub const PROBE_ADD_TURNS: u64 = 2048;
/// Null system calls in one [`probe`] repetition: ≈ 10–15 µs here.
pub const PROBE_SYSCALLS: u64 = 48;
/// Timed repetitions of each measurement in one [`probe`]; the minimum is kept.
pub const PROBE_REPS: usize = 5;

/// One probe's raw numbers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProbeReading {
    /// Nanoseconds per dependent 64-bit multiply (minimum over the repetitions).
    pub mul_ns: f64,
    /// Nanoseconds per add in the throughput-bound loop (minimum over the repetitions).
    pub add_ns: f64,
    /// Nanoseconds per null system call (minimum over the repetitions).
    pub syscall_ns: f64,
    /// Wall time of the whole probe, warm-up included, in ns.
    pub duration_ns: u64,
}

/// Run the standard probe: warm-up, then [`PROBE_REPS`] interleaved repetitions of the
/// multiply chain, the throughput loop and the null system call; minimum of each.
pub fn probe() -> ProbeReading {
    probe_with(PROBE_REPS)
}

/// [`probe`] with `reps` repetitions (at least one).
pub fn probe_with(reps: usize) -> ProbeReading {
    let t0 = now();
    std::hint::black_box(mul_chain(PROBE_MUL_TURNS / 8, 3));
    std::hint::black_box(independent_adds(PROBE_ADD_TURNS / 8));
    std::hint::black_box(null_syscalls(PROBE_SYSCALLS / 8));
    let (mut mul, mut add, mut sys) = (u64::MAX, u64::MAX, u64::MAX);
    for _ in 0..reps.max(1) {
        mul = mul.min(time_mul_chain(PROBE_MUL_TURNS));
        add = add.min(time_throughput(PROBE_ADD_TURNS));
        sys = sys.min(time_null_syscalls(PROBE_SYSCALLS));
    }
    ProbeReading {
        mul_ns: per_op(mul, PROBE_MUL_TURNS * MUL_UNROLL),
        add_ns: per_op(add, PROBE_ADD_TURNS * ADD_UNROLL),
        syscall_ns: per_op(sys, PROBE_SYSCALLS),
        duration_ns: elapsed(t0),
    }
}

/// Nanoseconds per operation; a zero elapsed time (a clock that did not move) is reported as
/// one nanosecond so the result stays finite and positive.
fn per_op(ns: u64, ops: u64) -> f64 {
    ns.max(1) as f64 / ops.max(1) as f64
}

#[inline(always)]
fn now() -> i64 {
    clock::clock_gettime_ns(ClockId::Monotonic)
}

#[inline(always)]
fn elapsed(t0: i64) -> u64 {
    u64::try_from(now().saturating_sub(t0)).unwrap_or(0)
}

/// The one timed interval of the probe: a clock read, `work`, a clock read, in ns (its
/// result kept with `black_box` so the work cannot be removed).
#[inline(always)]
fn timed<R>(work: impl FnOnce() -> R) -> u64 {
    let t0 = now();
    std::hint::black_box(work());
    elapsed(t0)
}

/// Time `turns` × [`MUL_UNROLL`] dependent multiplies, in ns.
#[inline(never)]
pub fn time_mul_chain(turns: u64) -> u64 {
    timed(|| mul_chain(turns, std::hint::black_box(3)))
}

/// Time `turns` × [`ADD_UNROLL`] adds of the throughput loop, in ns.
#[inline(never)]
pub fn time_throughput(turns: u64) -> u64 {
    timed(|| independent_adds(std::hint::black_box(turns)))
}

/// Time `turns` × [`ADD_UNROLL`] dependent adds (the cross-check of the core clock), in ns.
#[inline(never)]
pub fn time_add_chain(turns: u64) -> u64 {
    timed(|| add_chain(std::hint::black_box(turns)))
}

/// Time `calls` null system calls, in ns.
#[inline(never)]
pub fn time_null_syscalls(calls: u64) -> u64 {
    timed(|| null_syscalls(std::hint::black_box(calls)))
}

/// `calls` raw `getppid` system calls; returns the sum of the results (observable work).
#[inline(never)]
pub fn null_syscalls(calls: u64) -> i64 {
    let mut acc = 0i64;
    for _ in 0..calls {
        acc = acc.wrapping_add(syscall::null_syscall());
    }
    acc
}

/// `turns` × [`MUL_UNROLL`] dependent 64-bit multiplies (`x = x * x`) starting from `x`;
/// returns the final value. An odd start stays odd, so the chain never collapses to zero
/// (not that the latency depends on the value on any current core).
#[inline(never)]
pub fn mul_chain(turns: u64, x: u64) -> u64 {
    let mut x = x;
    if turns == 0 {
        return x;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register-only arithmetic and a counted loop on local values; no memory, no
    // stack, the counter is > 0 on entry so the loop terminates.
    unsafe {
        std::arch::asm!("2:", ".rept 32", "imul {x}, {x}", ".endr", "dec {n}", "jnz 2b",
            x = inout(reg) x, n = inout(reg) turns => _, options(nomem, nostack))
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: register-only arithmetic and a counted loop on local values; no memory, no
    // stack, the counter is > 0 on entry so the loop terminates.
    unsafe {
        std::arch::asm!("2:", ".rept 32", "mul {x}, {x}, {x}", ".endr", "subs {n}, {n}, #1",
            "b.ne 2b", x = inout(reg) x, n = inout(reg) turns => _, options(nomem, nostack))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..turns * MUL_UNROLL {
        x = std::hint::black_box(x.wrapping_mul(x));
    }
    x
}

/// `turns` × [`ADD_UNROLL`] adds spread over eight independent chains (throughput-bound);
/// returns the chains' sum.
#[inline(never)]
pub fn independent_adds(turns: u64) -> u64 {
    let k = std::hint::black_box(1u64);
    let mut r = [0u64, 1, 2, 3, 4, 5, 6, 7];
    if turns == 0 {
        return r.iter().sum();
    }
    let [a, b, c, d, e, f, g, h] = &mut r;
    // SAFETY: register-only arithmetic and a counted loop on local values; no memory, no
    // stack, the counter is > 0 on entry so the loop terminates.
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    unsafe {
        #[cfg(target_arch = "x86_64")]
        std::arch::asm!("2:", ".rept 4",
            "add {a}, {k}", "add {b}, {k}", "add {c}, {k}", "add {d}, {k}",
            "add {e}, {k}", "add {f}, {k}", "add {g}, {k}", "add {h}, {k}",
            ".endr", "dec {n}", "jnz 2b",
            a = inout(reg) *a, b = inout(reg) *b, c = inout(reg) *c, d = inout(reg) *d,
            e = inout(reg) *e, f = inout(reg) *f, g = inout(reg) *g, h = inout(reg) *h,
            k = in(reg) k, n = inout(reg) turns => _, options(nomem, nostack));
        #[cfg(target_arch = "aarch64")]
        std::arch::asm!("2:", ".rept 4",
            "add {a}, {a}, {k}", "add {b}, {b}, {k}", "add {c}, {c}, {k}", "add {d}, {d}, {k}",
            "add {e}, {e}, {k}", "add {f}, {f}, {k}", "add {g}, {g}, {k}", "add {h}, {h}, {k}",
            ".endr", "subs {n}, {n}, #1", "b.ne 2b",
            a = inout(reg) *a, b = inout(reg) *b, c = inout(reg) *c, d = inout(reg) *d,
            e = inout(reg) *e, f = inout(reg) *f, g = inout(reg) *g, h = inout(reg) *h,
            k = in(reg) k, n = inout(reg) turns => _, options(nomem, nostack));
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..turns * 4 {
        for v in [
            &mut *a, &mut *b, &mut *c, &mut *d, &mut *e, &mut *f, &mut *g, &mut *h,
        ] {
            *v = std::hint::black_box(v.wrapping_add(k));
        }
    }
    r.iter().fold(0u64, |s, v| s.wrapping_add(*v))
}

/// `turns` × [`ADD_UNROLL`] dependent adds (`add x, k` with `k` in a register, carried
/// across loop turns): one add per core cycle on every current core. The cross-check of the
/// multiply chain's core clock; not part of [`probe`].
#[inline(never)]
pub fn add_chain(turns: u64) -> u64 {
    let k = std::hint::black_box(1u64);
    let mut x = 0u64;
    if turns == 0 {
        return x;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register-only arithmetic and a counted loop on local values; no memory, no
    // stack, the counter is > 0 on entry so the loop terminates.
    unsafe {
        std::arch::asm!("2:", ".rept 32", "add {x}, {k}", ".endr", "dec {n}", "jnz 2b",
            x = inout(reg) x, k = in(reg) k, n = inout(reg) turns => _, options(nomem, nostack))
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: register-only arithmetic and a counted loop on local values; no memory, no
    // stack, the counter is > 0 on entry so the loop terminates.
    unsafe {
        std::arch::asm!("2:", ".rept 32", "add {x}, {x}, {k}", ".endr", "subs {n}, {n}, #1",
            "b.ne 2b", x = inout(reg) x, k = in(reg) k, n = inout(reg) turns => _,
            options(nomem, nostack))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..turns * ADD_UNROLL {
        x = std::hint::black_box(x.wrapping_add(k));
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_compute_what_they_claim() {
        // x -> x^2, 32 times per turn: 3^(2^32) mod 2^64, checked against plain Rust.
        let mut want = 3u64;
        for _ in 0..2 * MUL_UNROLL {
            want = want.wrapping_mul(want);
        }
        assert_eq!(mul_chain(2, 3), want);
        assert_eq!(mul_chain(0, 5), 5);
        assert_eq!(add_chain(3), 3 * ADD_UNROLL);
        assert_eq!(add_chain(0), 0);
        // Each of the 8 chains gets 4 adds per turn: 28 + 32 × turns.
        assert_eq!(independent_adds(5), 28 + 5 * ADD_UNROLL);
        assert_eq!(independent_adds(0), 28);
        let ppid = i64::from(std::os::unix::process::parent_id());
        assert_eq!(null_syscalls(3), 3 * ppid);
    }

    #[test]
    fn probe_gives_finite_positive_numbers_well_within_its_budget() {
        let r = probe();
        for v in [r.mul_ns, r.add_ns, r.syscall_ns] {
            assert!(v.is_finite() && v > 0.0, "{r:?}");
        }
        // The budget is 2 ms; 50 ms leaves room for a loaded 2-CPU machine.
        assert!(r.duration_ns < 50_000_000, "{r:?}");
        let one = probe_with(0);
        assert!(one.mul_ns > 0.0 && one.add_ns > 0.0 && one.syscall_ns > 0.0);
    }

    #[test]
    fn timers_report_elapsed_time() {
        for t in [
            time_mul_chain(4),
            time_throughput(4),
            time_add_chain(4),
            time_null_syscalls(2),
        ] {
            assert!(t < 1_000_000_000, "{t}");
        }
        assert_eq!(per_op(0, 0), 1.0);
        assert_eq!(per_op(100, 4), 25.0);
    }
}
