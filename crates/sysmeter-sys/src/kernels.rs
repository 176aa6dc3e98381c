//! Hot kernels that must compile to exactly the instructions an experiment claims to time.
//!
//! Dependent-operation chains are inline assembly: `.rept 100` copies of one instruction,
//! each reading the previous one's result, so the time per instruction is its latency and the
//! compiler can neither fold, vectorise nor remove them. Call targets are `#[inline(never)]`
//! functions with an empty `asm!` (which the compiler must assume has side effects), so calls
//! cannot be hoisted out of a loop or deleted.

use core::arch::asm;

/// Instructions per call of each `*_chain` kernel.
pub const CHAIN_LEN: u64 = 100;

/// A dependent operation chain that `cpu.ops` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Chain {
    /// 64-bit integer add.
    IntAdd,
    /// 64-bit integer multiply.
    IntMul,
    /// 64-bit unsigned integer divide (dividend ≈ 2^40, divisor 1, so the value is kept).
    IntDiv,
    /// Double-precision add.
    FloatAdd,
    /// Double-precision multiply.
    FloatMul,
    /// Double-precision divide.
    FloatDiv,
    /// Double-precision square root.
    FloatSqrt,
}

/// Run `iters` × [`CHAIN_LEN`] dependent operations of kind `chain`; returns the final value
/// so callers can keep it observable.
///
/// The value is carried from one block of [`CHAIN_LEN`] to the next, so the whole run is one
/// chain: restarting each block from a constant lets the out-of-order core overlap the end
/// of one block with the start of the next (a 100-add block then costs about half a cycle
/// per add, a multiply block 2.5–2.8 cycles instead of 3 on Zen 4), and by an amount that
/// changes with what the SMT sibling does, since it shares the reorder buffer.
#[inline(never)]
pub fn run_chain(chain: Chain, iters: u64) -> u64 {
    // Odd, so squaring never reaches zero; exactly representable values for the floats.
    let (mut x, mut f) = (0x12_3456_789bu64, 1.0f64);
    for _ in 0..iters {
        (x, f) = chain_once(chain, x, f);
    }
    x ^ f.to_bits()
}

/// The addend of the add chain, in a register the compiler cannot see the value of: an add
/// of an immediate (`add x, 1`) is resolved by the renamer of some recent x86 cores before it
/// executes (Intel's since Golden Cove), so a chain of them measured 0.06 ns — nothing — on
/// such a core. An add of a register is an add on every core.
#[inline(always)]
fn step() -> u64 {
    std::hint::black_box(1)
}

#[inline(always)]
fn chain_once(chain: Chain, mut x: u64, mut f: f64) -> (u64, f64) {
    let one: f64 = 1.0;
    let zero: f64 = 0.0;
    let k = step();
    // SAFETY: every arm is register-only arithmetic on local values; no memory, no stack.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        match chain {
            Chain::IntAdd => asm!(".rept 100", "add {x}, {k}", ".endr", x = inout(reg) x,
                k = in(reg) k, options(nomem, nostack)),
            Chain::IntMul => asm!(".rept 100", "imul {x}, {x}", ".endr", x = inout(reg) x,
                options(nomem, nostack)),
            Chain::IntDiv => asm!(".rept 100", "xor edx, edx", "div {d}", ".endr",
                d = in(reg) 1u64, inout("rax") x, out("rdx") _, options(nomem, nostack)),
            Chain::FloatAdd => asm!(".rept 100", "addsd {f}, {z}", ".endr", f = inout(xmm_reg) f,
                z = in(xmm_reg) zero, options(nomem, nostack)),
            Chain::FloatMul => asm!(".rept 100", "mulsd {f}, {o}", ".endr", f = inout(xmm_reg) f,
                o = in(xmm_reg) one, options(nomem, nostack)),
            Chain::FloatDiv => asm!(".rept 100", "divsd {f}, {o}", ".endr", f = inout(xmm_reg) f,
                o = in(xmm_reg) one, options(nomem, nostack)),
            Chain::FloatSqrt => asm!(".rept 100", "sqrtsd {f}, {f}", ".endr",
                f = inout(xmm_reg) f, options(nomem, nostack)),
        }
        #[cfg(target_arch = "aarch64")]
        match chain {
            Chain::IntAdd => asm!(".rept 100", "add {x}, {x}, {k}", ".endr", x = inout(reg) x,
                k = in(reg) k, options(nomem, nostack)),
            Chain::IntMul => asm!(".rept 100", "mul {x}, {x}, {x}", ".endr", x = inout(reg) x,
                options(nomem, nostack)),
            Chain::IntDiv => asm!(".rept 100", "udiv {x}, {x}, {d}", ".endr", x = inout(reg) x,
                d = in(reg) 1u64, options(nomem, nostack)),
            Chain::FloatAdd => asm!(".rept 100", "fadd {f:d}, {f:d}, {z:d}", ".endr",
                f = inout(vreg) f, z = in(vreg) zero, options(nomem, nostack)),
            Chain::FloatMul => asm!(".rept 100", "fmul {f:d}, {f:d}, {o:d}", ".endr",
                f = inout(vreg) f, o = in(vreg) one, options(nomem, nostack)),
            Chain::FloatDiv => asm!(".rept 100", "fdiv {f:d}, {f:d}, {o:d}", ".endr",
                f = inout(vreg) f, o = in(vreg) one, options(nomem, nostack)),
            Chain::FloatSqrt => asm!(".rept 100", "fsqrt {f:d}, {f:d}", ".endr",
                f = inout(vreg) f, options(nomem, nostack)),
        }
    }
    (x, f)
}

/// The tightest possible counted loop: one decrement and one conditional branch per
/// iteration, in assembly (`dec; jnz` / `subs; b.ne`).
#[inline(never)]
pub fn tight_loop(iters: u64) {
    if iters == 0 {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: register-only loop on a local counter.
    unsafe {
        asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) iters => _, options(nomem, nostack))
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: register-only loop on a local counter.
    unsafe {
        asm!("2:", "subs {n}, {n}, #1", "b.ne 2b", n = inout(reg) iters => _,
            options(nomem, nostack))
    };
}

/// Count the non-zero bytes of `data` with a real conditional branch per byte (never a
/// cmov or a vector compare): random data makes the branch unpredictable.
#[inline(never)]
pub fn branchy_count(data: &[u8]) -> u64 {
    let mut acc = 0u64;
    for &b in data {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: register-only test and branch on local values.
        unsafe {
            asm!("test {b}, {b}", "jz 2f", "add {acc}, 1", "2:", b = in(reg_byte) b,
                acc = inout(reg) acc, options(nomem, nostack))
        };
        #[cfg(target_arch = "aarch64")]
        // SAFETY: register-only test and branch on local values.
        unsafe {
            asm!("cbz {b:w}, 2f", "add {acc}, {acc}, #1", "2:", b = in(reg) b as u32,
                acc = inout(reg) acc, options(nomem, nostack))
        };
    }
    acc
}

/// An opaque point the compiler must assume has effects: keeps call bodies alive.
#[inline(always)]
fn opaque() {
    // SAFETY: an empty instruction sequence.
    unsafe { asm!("", options(nostack, preserves_flags)) };
}

macro_rules! call_target {
    ($(#[$doc:meta] $name:ident($($arg:ident),*);)*) => {$(
        #[$doc]
        #[inline(never)]
        pub fn $name($($arg: u64),*) -> u64 {
            opaque();
            0 $(^ $arg)*
        }
    )*};
}

call_target! {
    /// A non-inlined call with no arguments.
    call0();
    /// A non-inlined call with 1 integer argument.
    call1(a);
    /// A non-inlined call with 2 integer arguments.
    call2(a, b);
    /// A non-inlined call with 3 integer arguments.
    call3(a, b, c);
    /// A non-inlined call with 4 integer arguments.
    call4(a, b, c, d);
    /// A non-inlined call with 5 integer arguments.
    call5(a, b, c, d, e);
    /// A non-inlined call with 6 integer arguments.
    call6(a, b, c, d, e, f);
    /// A non-inlined call with 7 integer arguments (the 7th goes on the stack on x86_64).
    call7(a, b, c, d, e, f, g);
}

/// A trait with one method, for the dynamic-dispatch (virtual) call.
pub trait Op {
    /// One call through the vtable.
    fn op(&self, a: u64) -> u64;
}

/// The implementation behind `dyn Op`.
pub struct OpImpl;

impl Op for OpImpl {
    #[inline(never)]
    fn op(&self, a: u64) -> u64 {
        opaque();
        a
    }
}
