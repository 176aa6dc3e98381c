//! Bandwidth kernels for `mem.bandwidth`: read (sum of 64-bit lanes), write (fill with a
//! byte), copy (src → dst) and non-temporal write (streaming stores that bypass the caches),
//! over byte slices.
//!
//! The hot loops are inline assembly, so the compiler can neither drop, merge, shorten nor
//! re-vectorise them: an `asm!` block without `pure` is assumed to have side effects, so two
//! identical passes stay two passes, and the read loop's sum is an output of the block. On
//! x86_64 the AVX2 loops (selected at run time with `is_x86_feature_detected!`) move 256 B per
//! iteration as 8 × 32-byte `vpaddq ymm, [mem]` / `vmovdqu` / `vmovntdq` (+ `sfence`); the
//! SSE2 fallback moves 64 B per iteration with `movdqu` + `paddq` / `movdqu` / `movntdq`. On
//! aarch64 the loops use `ldp`/`stp q` pairs and `stnp` for the non-temporal store. Head and
//! tail bytes that do not fill a whole iteration (and, for streaming stores, the head before
//! the first 32-byte boundary) are done in plain Rust.
//!
//! Checked by reading the compiler's output (`cargo rustc --release -p sysmeter-sys --
//! --emit asm`, x86_64, rustc 1.95): each hot loop appears exactly as written — `read_avx2`
//! is 8 × `vpaddq ymmN, ymmN, ymmword ptr [rdi + k*32]` then `addq $256, %rdi; decq; jne`,
//! followed once by the horizontal sum into `rax`; `write_avx2` is 8 × `vmovdqu %ymm0,
//! k*32(%rdi)`; `nt_write_avx2` 8 × `vmovntdq %ymm0, k*32(%rdi)` with one `sfence` after the
//! loop; `copy_avx2` 8 `vmovdqu` loads and 8 stores per iteration. The safe wrappers call
//! the kernel once per call (the `is_x86_feature_detected!` check is one load of std's
//! cached feature word), and only the Rust tails (never used by `mem.bandwidth`, whose
//! chunks are multiples of 256 B) were auto-vectorised by the compiler. The aarch64 file was
//! assembled with `--target aarch64-unknown-linux-gnu` (`ldp q4, q5, [x10], #32` …
//! `stnp q0, q0, [x10, #32]` in the output) but not run.

use std::io;

/// Bytes one iteration of the widest loop moves; buffers sized in multiples of this run
/// entirely in assembly.
pub const BLOCK: usize = 256;

/// The vector instruction set the kernels use on this CPU, for reports.
pub fn vector_isa() -> &'static str {
    arch::isa().0
}

/// Width in bytes of one vector load or store of [`vector_isa`].
pub fn vector_bytes() -> usize {
    arch::isa().1
}

/// Whether [`nt_write`] is available on this architecture.
pub fn nt_write_supported() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "aarch64"))
}

/// Read every byte of `buf`: returns the wrapping sum of its little-endian 64-bit words
/// (offsets 0, 8, 16, … from the start), plus each byte of a final partial word.
pub fn read(buf: &[u8]) -> u64 {
    let (bulk, done) = arch::read(buf);
    let tail = &buf[done..];
    let words = tail.chunks_exact(8);
    let rest = words.remainder().iter().map(|&b| b as u64);
    words
        .map(|w| u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]))
        .chain(rest)
        .fold(bulk, u64::wrapping_add)
}

/// Fill `buf` with `byte` using ordinary (cached) stores.
pub fn write(buf: &mut [u8], byte: u8) {
    let done = arch::write(buf, byte);
    buf[done..].fill(byte);
}

/// Copy `src` into `dst` with vector loads and ordinary stores.
///
/// # Panics
/// When the lengths differ (a programming error in the caller).
pub fn copy(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "membw::copy needs equal lengths");
    let done = arch::copy(dst, src);
    dst[done..].copy_from_slice(&src[done..]);
}

/// Fill `buf` with `byte` using non-temporal (streaming) stores, which write whole lines
/// without first reading them into the cache, then fence so they are globally visible.
/// Bytes before the first 32-byte boundary and after the last whole iteration use ordinary
/// stores. Fails with `ErrorKind::Unsupported` on architectures without such stores here.
pub fn nt_write(buf: &mut [u8], byte: u8) -> io::Result<()> {
    if !nt_write_supported() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no non-temporal store kernel for this architecture",
        ));
    }
    let head = buf.as_ptr().align_offset(32).min(buf.len());
    let (first, aligned) = buf.split_at_mut(head);
    first.fill(byte);
    let done = arch::nt_write(aligned, byte);
    aligned[done..].fill(byte);
    Ok(())
}

#[cfg(target_arch = "x86_64")]
mod arch {
    use core::arch::asm;

    fn avx2() -> bool {
        std::is_x86_feature_detected!("avx2")
    }

    pub fn isa() -> (&'static str, usize) {
        if avx2() {
            ("AVX2 (32-byte loads/stores)", 32)
        } else {
            ("SSE2 (16-byte loads/stores)", 16)
        }
    }

    /// (sum of the words of the bulk, bytes of the bulk)
    pub fn read(buf: &[u8]) -> (u64, usize) {
        if avx2() {
            let n = buf.len() / 256;
            // SAFETY: AVX2 was detected; the loop reads n*256 <= len bytes from buf.
            return (unsafe { read_avx2(buf.as_ptr(), n) }, n * 256);
        }
        let n = buf.len() / 64;
        // SAFETY: the loop reads n*64 <= len bytes from buf with unaligned loads.
        (unsafe { read_sse2(buf.as_ptr(), n) }, n * 64)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn read_avx2(p: *const u8, n: usize) -> u64 {
        if n == 0 {
            return 0;
        }
        let sum: u64;
        // SAFETY: the caller guarantees p..p+n*256 is readable; VEX loads need no alignment.
        // Four independent accumulators keep the adds off the critical path.
        unsafe {
            asm!(
                "vpxor ymm0, ymm0, ymm0", "vpxor ymm1, ymm1, ymm1",
                "vpxor ymm2, ymm2, ymm2", "vpxor ymm3, ymm3, ymm3",
                "2:",
                "vpaddq ymm0, ymm0, ymmword ptr [{p}]",
                "vpaddq ymm1, ymm1, ymmword ptr [{p} + 32]",
                "vpaddq ymm2, ymm2, ymmword ptr [{p} + 64]",
                "vpaddq ymm3, ymm3, ymmword ptr [{p} + 96]",
                "vpaddq ymm0, ymm0, ymmword ptr [{p} + 128]",
                "vpaddq ymm1, ymm1, ymmword ptr [{p} + 160]",
                "vpaddq ymm2, ymm2, ymmword ptr [{p} + 192]",
                "vpaddq ymm3, ymm3, ymmword ptr [{p} + 224]",
                "add {p}, 256", "dec {n}", "jnz 2b",
                "vpaddq ymm0, ymm0, ymm1", "vpaddq ymm2, ymm2, ymm3",
                "vpaddq ymm0, ymm0, ymm2",
                "vextracti128 xmm1, ymm0, 1", "vpaddq xmm0, xmm0, xmm1",
                "vpshufd xmm1, xmm0, 0x4e", "vpaddq xmm0, xmm0, xmm1",
                "vmovq {s}, xmm0", "vzeroupper",
                p = inout(reg) p => _, n = inout(reg) n => _, s = out(reg) sum,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                options(nostack, readonly),
            );
        }
        sum
    }

    unsafe fn read_sse2(p: *const u8, n: usize) -> u64 {
        if n == 0 {
            return 0;
        }
        let sum: u64;
        // SAFETY: the caller guarantees p..p+n*64 is readable; movdqu needs no alignment.
        unsafe {
            asm!(
                "pxor xmm0, xmm0", "pxor xmm1, xmm1", "pxor xmm2, xmm2", "pxor xmm3, xmm3",
                "2:",
                "movdqu xmm4, [{p}]", "movdqu xmm5, [{p} + 16]",
                "movdqu xmm6, [{p} + 32]", "movdqu xmm7, [{p} + 48]",
                "paddq xmm0, xmm4", "paddq xmm1, xmm5", "paddq xmm2, xmm6", "paddq xmm3, xmm7",
                "add {p}, 64", "dec {n}", "jnz 2b",
                "paddq xmm0, xmm1", "paddq xmm2, xmm3", "paddq xmm0, xmm2",
                "pshufd xmm1, xmm0, 0x4e", "paddq xmm0, xmm1", "movq {s}, xmm0",
                p = inout(reg) p => _, n = inout(reg) n => _, s = out(reg) sum,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                options(nostack, readonly),
            );
        }
        sum
    }

    /// Ordinary or streaming stores of one byte value: which instruction is the only
    /// difference between `write` and `nt_write`, so one macro builds both.
    macro_rules! store_kernel {
        ($avx:ident, $sse:ident, $vst:literal, $sst:literal, $fence:literal) => {
            #[target_feature(enable = "avx2")]
            unsafe fn $avx(p: *mut u8, n: usize, v: u64) {
                // SAFETY: the caller guarantees p..p+n*256 is writable (and 32-byte aligned
                // for streaming stores); n >= 1.
                unsafe {
                    asm!(
                        "vmovq xmm0, {v}", "vpbroadcastq ymm0, xmm0",
                        "2:",
                        concat!($vst, " ymmword ptr [{p}], ymm0"),
                        concat!($vst, " ymmword ptr [{p} + 32], ymm0"),
                        concat!($vst, " ymmword ptr [{p} + 64], ymm0"),
                        concat!($vst, " ymmword ptr [{p} + 96], ymm0"),
                        concat!($vst, " ymmword ptr [{p} + 128], ymm0"),
                        concat!($vst, " ymmword ptr [{p} + 160], ymm0"),
                        concat!($vst, " ymmword ptr [{p} + 192], ymm0"),
                        concat!($vst, " ymmword ptr [{p} + 224], ymm0"),
                        "add {p}, 256", "dec {n}", "jnz 2b", $fence, "vzeroupper",
                        p = inout(reg) p => _, n = inout(reg) n => _, v = in(reg) v,
                        out("ymm0") _, options(nostack),
                    );
                }
            }

            unsafe fn $sse(p: *mut u8, n: usize, v: u64) {
                // SAFETY: the caller guarantees p..p+n*64 is writable (and 16-byte aligned for
                // streaming stores); n >= 1.
                unsafe {
                    asm!(
                        "movq xmm0, {v}", "punpcklqdq xmm0, xmm0",
                        "2:",
                        concat!($sst, " [{p}], xmm0"), concat!($sst, " [{p} + 16], xmm0"),
                        concat!($sst, " [{p} + 32], xmm0"), concat!($sst, " [{p} + 48], xmm0"),
                        "add {p}, 64", "dec {n}", "jnz 2b", $fence,
                        p = inout(reg) p => _, n = inout(reg) n => _, v = in(reg) v,
                        out("xmm0") _, options(nostack),
                    );
                }
            }
        };
    }

    store_kernel!(write_avx2, write_sse2, "vmovdqu", "movdqu", "");
    store_kernel!(
        nt_write_avx2,
        nt_write_sse2,
        "vmovntdq",
        "movntdq",
        "sfence"
    );

    fn stores(buf: &mut [u8], byte: u8, nt: bool) -> usize {
        let v = u64::from_ne_bytes([byte; 8]);
        let p = buf.as_mut_ptr();
        if avx2() {
            let n = buf.len() / 256;
            if n > 0 {
                // SAFETY: AVX2 detected; n*256 <= len bytes of buf are written; nt callers
                // pass a 32-byte aligned buf.
                unsafe {
                    if nt {
                        nt_write_avx2(p, n, v)
                    } else {
                        write_avx2(p, n, v)
                    }
                }
            }
            return n * 256;
        }
        let n = buf.len() / 64;
        if n > 0 {
            // SAFETY: n*64 <= len bytes of buf are written; nt callers pass a 32-byte
            // aligned buf, which satisfies movntdq's 16-byte alignment.
            unsafe {
                if nt {
                    nt_write_sse2(p, n, v)
                } else {
                    write_sse2(p, n, v)
                }
            }
        }
        n * 64
    }

    pub fn write(buf: &mut [u8], byte: u8) -> usize {
        stores(buf, byte, false)
    }

    pub fn nt_write(buf: &mut [u8], byte: u8) -> usize {
        stores(buf, byte, true)
    }

    pub fn copy(dst: &mut [u8], src: &[u8]) -> usize {
        let (d, s) = (dst.as_mut_ptr(), src.as_ptr());
        if avx2() {
            let n = dst.len().min(src.len()) / 256;
            // SAFETY: AVX2 detected; n*256 bytes fit in both slices, which cannot overlap
            // (one is borrowed mutably).
            unsafe { copy_avx2(d, s, n) };
            return n * 256;
        }
        let n = dst.len().min(src.len()) / 64;
        // SAFETY: n*64 bytes fit in both slices, which cannot overlap.
        unsafe { copy_sse2(d, s, n) };
        n * 64
    }

    #[target_feature(enable = "avx2")]
    unsafe fn copy_avx2(d: *mut u8, s: *const u8, n: usize) {
        if n == 0 {
            return;
        }
        // SAFETY: the caller guarantees both ranges of n*256 bytes are valid and disjoint.
        unsafe {
            asm!(
                "2:",
                "vmovdqu ymm0, [{s}]", "vmovdqu ymm1, [{s} + 32]",
                "vmovdqu ymm2, [{s} + 64]", "vmovdqu ymm3, [{s} + 96]",
                "vmovdqu [{d}], ymm0", "vmovdqu [{d} + 32], ymm1",
                "vmovdqu [{d} + 64], ymm2", "vmovdqu [{d} + 96], ymm3",
                "vmovdqu ymm0, [{s} + 128]", "vmovdqu ymm1, [{s} + 160]",
                "vmovdqu ymm2, [{s} + 192]", "vmovdqu ymm3, [{s} + 224]",
                "vmovdqu [{d} + 128], ymm0", "vmovdqu [{d} + 160], ymm1",
                "vmovdqu [{d} + 192], ymm2", "vmovdqu [{d} + 224], ymm3",
                "add {s}, 256", "add {d}, 256", "dec {n}", "jnz 2b", "vzeroupper",
                d = inout(reg) d => _, s = inout(reg) s => _, n = inout(reg) n => _,
                out("ymm0") _, out("ymm1") _, out("ymm2") _, out("ymm3") _,
                options(nostack),
            );
        }
    }

    unsafe fn copy_sse2(d: *mut u8, s: *const u8, n: usize) {
        if n == 0 {
            return;
        }
        // SAFETY: the caller guarantees both ranges of n*64 bytes are valid and disjoint.
        unsafe {
            asm!(
                "2:",
                "movdqu xmm0, [{s}]", "movdqu xmm1, [{s} + 16]",
                "movdqu xmm2, [{s} + 32]", "movdqu xmm3, [{s} + 48]",
                "movdqu [{d}], xmm0", "movdqu [{d} + 16], xmm1",
                "movdqu [{d} + 32], xmm2", "movdqu [{d} + 48], xmm3",
                "add {s}, 64", "add {d}, 64", "dec {n}", "jnz 2b",
                d = inout(reg) d => _, s = inout(reg) s => _, n = inout(reg) n => _,
                out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                options(nostack),
            );
        }
    }
}

#[cfg(target_arch = "aarch64")]
mod aarch64;
#[cfg(target_arch = "aarch64")]
use aarch64 as arch;

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod arch {
    //! No vector kernels here: the bulk is empty and the portable tails do all the work.
    pub fn isa() -> (&'static str, usize) {
        ("portable Rust (no vector kernels for this architecture)", 8)
    }
    pub fn read(_: &[u8]) -> (u64, usize) {
        (0, 0)
    }
    pub fn write(_: &mut [u8], _: u8) -> usize {
        0
    }
    pub fn nt_write(_: &mut [u8], _: u8) -> usize {
        0
    }
    pub fn copy(_: &mut [u8], _: &[u8]) -> usize {
        0
    }
}

#[cfg(test)]
mod tests;
