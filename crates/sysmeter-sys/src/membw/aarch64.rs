//! aarch64 bandwidth loops: 256 B per iteration as 8 `ldp`/`stp` pairs of 16-byte q
//! registers; the streaming store is `stnp` (a non-temporal hint) followed by `dmb ishst`.

use core::arch::asm;

pub fn isa() -> (&'static str, usize) {
    ("NEON (ldp/stp of 16-byte q registers)", 16)
}

/// (sum of the words of the bulk, bytes of the bulk)
pub fn read(buf: &[u8]) -> (u64, usize) {
    let n = buf.len() / 256;
    if n == 0 {
        return (0, 0);
    }
    let sum: u64;
    // SAFETY: the loop reads n*256 <= len bytes from buf; ldp of q registers needs no
    // alignment. Four accumulators keep the adds off the critical path.
    unsafe {
        asm!(
            "movi v0.2d, #0", "movi v1.2d, #0", "movi v2.2d, #0", "movi v3.2d, #0",
            "2:",
            ".rept 4",
            "ldp q4, q5, [{p}], #32", "ldp q6, q7, [{p}], #32",
            "add v0.2d, v0.2d, v4.2d", "add v1.2d, v1.2d, v5.2d",
            "add v2.2d, v2.2d, v6.2d", "add v3.2d, v3.2d, v7.2d",
            ".endr",
            "subs {n}, {n}, #1", "b.ne 2b",
            "add v0.2d, v0.2d, v1.2d", "add v2.2d, v2.2d, v3.2d", "add v0.2d, v0.2d, v2.2d",
            "addp d0, v0.2d", "fmov {s}, d0",
            p = inout(reg) buf.as_ptr() => _, n = inout(reg) n => _, s = out(reg) sum,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            out("v4") _, out("v5") _, out("v6") _, out("v7") _,
            options(nostack, readonly),
        );
    }
    (sum, n * 256)
}

pub fn write(buf: &mut [u8], byte: u8) -> usize {
    let n = buf.len() / 256;
    if n == 0 {
        return 0;
    }
    // SAFETY: the loop writes n*256 <= len bytes of buf.
    unsafe {
        asm!(
            "dup v0.16b, {b:w}",
            "2:",
            ".rept 8", "stp q0, q0, [{p}], #32", ".endr",
            "subs {n}, {n}, #1", "b.ne 2b",
            p = inout(reg) buf.as_mut_ptr() => _, n = inout(reg) n => _, b = in(reg) byte as u32,
            out("v0") _, options(nostack),
        );
    }
    n * 256
}

pub fn nt_write(buf: &mut [u8], byte: u8) -> usize {
    let n = buf.len() / 256;
    if n == 0 {
        return 0;
    }
    // SAFETY: the loop writes n*256 <= len bytes of buf (stnp has no post-index form, so
    // offsets are immediate and the pointer advances once per iteration).
    unsafe {
        asm!(
            "dup v0.16b, {b:w}",
            "2:",
            "stnp q0, q0, [{p}]", "stnp q0, q0, [{p}, #32]",
            "stnp q0, q0, [{p}, #64]", "stnp q0, q0, [{p}, #96]",
            "stnp q0, q0, [{p}, #128]", "stnp q0, q0, [{p}, #160]",
            "stnp q0, q0, [{p}, #192]", "stnp q0, q0, [{p}, #224]",
            "add {p}, {p}, #256", "subs {n}, {n}, #1", "b.ne 2b", "dmb ishst",
            p = inout(reg) buf.as_mut_ptr() => _, n = inout(reg) n => _, b = in(reg) byte as u32,
            out("v0") _, options(nostack),
        );
    }
    n * 256
}

pub fn copy(dst: &mut [u8], src: &[u8]) -> usize {
    let n = dst.len().min(src.len()) / 256;
    if n == 0 {
        return 0;
    }
    // SAFETY: n*256 bytes fit in both slices, which cannot overlap (one is borrowed mutably).
    unsafe {
        asm!(
            "2:",
            ".rept 4",
            "ldp q0, q1, [{s}], #32", "ldp q2, q3, [{s}], #32",
            "stp q0, q1, [{d}], #32", "stp q2, q3, [{d}], #32",
            ".endr",
            "subs {n}, {n}, #1", "b.ne 2b",
            d = inout(reg) dst.as_mut_ptr() => _, s = inout(reg) src.as_ptr() => _,
            n = inout(reg) n => _,
            out("v0") _, out("v1") _, out("v2") _, out("v3") _,
            options(nostack),
        );
    }
    n * 256
}
