//! The pointer-chasing kernel of `mem.latency`: a page-aligned buffer holding a closed chain
//! of absolute addresses, and a hot loop in which every load's address is the value the
//! previous load returned.
//!
//! Because each load depends on the one before, the loads cannot overlap: the time per load
//! is the load-to-use latency of wherever the line lives (L1, L2, L3 or DRAM). The loop is
//! inline assembly — `.rept 16` copies of `mov p, [p]` (x86_64) or `ldr p, [p]` (aarch64)
//! followed by one decrement and branch — so the compiler can neither vectorise, reorder nor
//! drop a load. [`chase_overhead`] is the same loop with the loads taken out, so the cost of
//! the loop control per load can be measured and subtracted (it is one `dec`+`jnz` per 16
//! loads and executes in the shadow of the load chain, so it is tiny either way).
//!
//! How the loop was checked: `cargo rustc --release -p sysmeter-sys -- --emit asm` and
//! reading `target/release/deps/sysmeter_sys-*.s` around `ChaseBuffer::chase`. On x86_64 the
//! hot block is 16 consecutive `movq (%rax), %rax` (AT&T syntax; the same register is the
//! address and the destination, so each load waits for the previous one) followed by
//! `decq %rdx; jne`, then the remainder loop `movq (%rax), %rax; decq %rsi; jne`; between
//! `#APP` and `#NO_APP` there is no vector instruction, no spill and no other memory access;
//! outside them there is only the cursor load, the base/offset arithmetic and the cursor
//! store. The twin `chase_overhead` compiles to the same two loops as bare `decq; jne`.
//!
//! Memory is an anonymous private mapping with transparent huge pages refused
//! (`MADV_NOHUGEPAGE`, best effort), so TLB behaviour is that of 4 KiB base pages whatever the
//! system's THP mode; it is unmapped on drop.

use std::cell::Cell;
use std::io;
use std::ptr::NonNull;

/// Loads per turn of the unrolled loop.
pub const UNROLL: u64 = 16;

/// Why a chain could not be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkError {
    /// The visiting order is empty.
    Empty,
    /// An offset is outside the buffer or not 8-byte aligned.
    BadOffset {
        /// The offending byte offset.
        offset: usize,
        /// Buffer size in bytes.
        bytes: usize,
    },
}

impl std::fmt::Display for LinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkError::Empty => write!(f, "cannot build a pointer chain from no elements"),
            LinkError::BadOffset { offset, bytes } => write!(
                f,
                "chain element at byte offset {offset} is not an 8-byte aligned slot inside \
                 the {bytes}-byte buffer"
            ),
        }
    }
}

impl std::error::Error for LinkError {}

/// A page-aligned buffer that holds one closed pointer chain.
///
/// Invariant: every slot reachable from `head` holds the absolute address of another slot
/// of this buffer written by [`ChaseBuffer::link`], so chasing never leaves the buffer; the
/// cursor is always `head` or an offset the chain itself led to.
pub struct ChaseBuffer {
    ptr: NonNull<u8>,
    bytes: usize,
    /// Byte offset of the chain's first element; `None` until a chain is linked.
    head: Option<usize>,
    /// Byte offset where the next [`ChaseBuffer::chase`] starts.
    cursor: Cell<usize>,
}

impl ChaseBuffer {
    /// Map `bytes` (rounded up to whole pages) of zeroed anonymous memory, asking the kernel
    /// for base pages only. Pages are faulted in by [`ChaseBuffer::link`].
    pub fn new(bytes: usize) -> io::Result<ChaseBuffer> {
        let page = 4096usize;
        let bytes = bytes.max(1).div_ceil(page) * page;
        // SAFETY: anonymous private mapping at a kernel-chosen address; no existing memory
        // is affected. The result is checked against MAP_FAILED before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(crate::last_error());
        }
        // SAFETY: `p` is the mapping just created, `bytes` long. Failure (no THP support) is
        // harmless: the memory then simply uses whatever pages the kernel gives.
        unsafe { libc::madvise(p, bytes, libc::MADV_NOHUGEPAGE) };
        let ptr = NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap gave NULL"))?;
        Ok(ChaseBuffer {
            ptr,
            bytes,
            head: None,
            cursor: Cell::new(0),
        })
    }

    /// Size of the mapping in bytes (a multiple of 4096).
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Byte offset of the chain's first element, once linked.
    pub fn head(&self) -> Option<usize> {
        self.head
    }

    /// Build a closed chain visiting the 8-byte slots at byte offsets `order[0]`,
    /// `order[1]`, …, then back to `order[0]`: slot `order[i]` receives the absolute address
    /// of slot `order[i + 1]`. Slots not named in `order` are left as they are and are
    /// never reached. Replaces any previous chain and rewinds to its head.
    pub fn link(&mut self, order: &[usize]) -> Result<(), LinkError> {
        let (&first, _) = order.split_first().ok_or(LinkError::Empty)?;
        let bytes = self.bytes;
        if let Some(&offset) = order.iter().find(|&&o| o % 8 != 0 || o + 8 > bytes) {
            return Err(LinkError::BadOffset { offset, bytes });
        }
        let base = self.ptr.as_ptr() as usize;
        let words = self.words_mut();
        for pair in order.windows(2) {
            words[pair[0] / 8] = base + pair[1];
        }
        if let Some(&last) = order.last() {
            words[last / 8] = base + first;
        }
        self.head = Some(first);
        self.cursor.set(first);
        Ok(())
    }

    /// Make the next [`ChaseBuffer::chase`] start at the head of the chain again.
    pub fn rewind(&self) {
        if let Some(h) = self.head {
            self.cursor.set(h);
        }
    }

    fn words_mut(&mut self) -> &mut [usize] {
        // SAFETY: the mapping is `bytes` long, page aligned (so usize aligned), zero-filled
        // or written by us (every bit pattern is a valid usize), and `&mut self` guarantees
        // no other reference to it exists while the slice lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().cast::<usize>(), self.bytes / 8) }
    }

    /// Follow the chain for `loads` dependent loads and return the byte offset of the slot
    /// reached (so the work is observable). Each call continues where the previous one
    /// stopped — right after [`ChaseBuffer::link`] or [`ChaseBuffer::rewind`] that is the
    /// head — so successive timed calls walk the whole chain instead of re-reading (and
    /// caching) its first elements. Without a linked chain it does nothing and returns 0.
    #[inline(never)]
    pub fn chase(&self, loads: u64) -> usize {
        if self.head.is_none() {
            return 0;
        }
        let base = self.ptr.as_ptr() as usize;
        let blocks = loads / UNROLL;
        let rest = loads % UNROLL;
        let mut p = base + self.cursor.get();
        // SAFETY: `p` starts at the head slot and, by the struct invariant, every slot
        // reachable from it holds the address of another in-bounds, 8-byte aligned slot of
        // the live mapping; the asm only reads memory and touches no stack.
        unsafe {
            p = chase_blocks(p, blocks);
            p = chase_single(p, rest);
        }
        self.cursor.set(p - base);
        p - base
    }
}

impl Drop for ChaseBuffer {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping created in `new`; no reference into it outlives
        // `self`.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.bytes) };
    }
}

/// `blocks` × 16 dependent loads starting at address `p`; returns the last address loaded.
///
/// # Safety
/// Every address reachable from `p` within that many steps must be a readable, aligned
/// slot holding the next address.
#[inline(always)]
unsafe fn chase_blocks(mut p: usize, blocks: u64) -> usize {
    if blocks == 0 {
        return p;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller guarantees every slot on the chain is readable; read-only asm.
    unsafe {
        std::arch::asm!("2:", ".rept 16", "mov {p}, qword ptr [{p}]", ".endr",
            "dec {n}", "jnz 2b", p = inout(reg) p, n = inout(reg) blocks => _,
            options(readonly, nostack))
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: the caller guarantees every slot on the chain is readable; read-only asm.
    unsafe {
        std::arch::asm!("2:", ".rept 16", "ldr {p}, [{p}]", ".endr",
            "subs {n}, {n}, #1", "b.ne 2b", p = inout(reg) p, n = inout(reg) blocks => _,
            options(readonly, nostack))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..blocks * UNROLL {
        // SAFETY: the caller guarantees `p` is a readable slot holding the next address.
        p = unsafe { std::ptr::read_volatile(p as *const usize) };
    }
    p
}

/// `n` dependent loads, one per loop turn (the remainder after the unrolled blocks).
///
/// # Safety
/// As for [`chase_blocks`].
#[inline(always)]
unsafe fn chase_single(mut p: usize, n: u64) -> usize {
    if n == 0 {
        return p;
    }
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller guarantees every slot on the chain is readable; read-only asm.
    unsafe {
        std::arch::asm!("2:", "mov {p}, qword ptr [{p}]", "dec {n}", "jnz 2b",
            p = inout(reg) p, n = inout(reg) n => _, options(readonly, nostack))
    };
    #[cfg(target_arch = "aarch64")]
    // SAFETY: the caller guarantees every slot on the chain is readable; read-only asm.
    unsafe {
        std::arch::asm!("2:", "ldr {p}, [{p}]", "subs {n}, {n}, #1", "b.ne 2b",
            p = inout(reg) p, n = inout(reg) n => _, options(readonly, nostack))
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    for _ in 0..n {
        // SAFETY: the caller guarantees `p` is a readable slot holding the next address.
        p = unsafe { std::ptr::read_volatile(p as *const usize) };
    }
    p
}

/// The empty twin of [`ChaseBuffer::chase`]: the same loop structure (one decrement and
/// branch per 16 loads, then one per remaining load) with the loads removed. Its time
/// divided by `loads` is the loop overhead per load.
#[inline(never)]
pub fn chase_overhead(loads: u64) {
    for n in [loads / UNROLL, loads % UNROLL] {
        if n == 0 {
            continue;
        }
        #[cfg(target_arch = "x86_64")]
        // SAFETY: register-only loop on a local counter.
        unsafe {
            std::arch::asm!("2:", "dec {n}", "jnz 2b", n = inout(reg) n => _,
                options(nomem, nostack))
        };
        #[cfg(target_arch = "aarch64")]
        // SAFETY: register-only loop on a local counter.
        unsafe {
            std::arch::asm!("2:", "subs {n}, {n}, #1", "b.ne 2b", n = inout(reg) n => _,
                options(nomem, nostack))
        };
        #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
        for i in 0..n {
            std::hint::black_box(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A seeded Fisher-Yates shuffle (xorshift64*), so the test needs no RNG crate.
    fn shuffled(n: usize, mut seed: u64) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            seed ^= seed >> 12;
            seed ^= seed << 25;
            seed ^= seed >> 27;
            let r = seed.wrapping_mul(0x2545_f491_4f6c_dd1d);
            v.swap(i, (r % (i as u64 + 1)) as usize);
        }
        v
    }

    #[test]
    fn chase_visits_every_element_and_returns_to_the_head() {
        for n in [1usize, 2, 15, 16, 17, 100, 1000] {
            // One element per 64-byte line, in a random order.
            let order: Vec<usize> = shuffled(n, 42 + n as u64).iter().map(|i| i * 64).collect();
            let mut buf = ChaseBuffer::new(n * 64).expect("mmap");
            buf.link(&order).expect("link");
            assert_eq!(buf.head(), Some(order[0]));
            let seen: Vec<usize> = (0..n as u64)
                .map(|k| {
                    buf.rewind();
                    buf.chase(k)
                })
                .collect();
            assert_eq!(
                seen, order,
                "chase(k) from the head reaches the k-th element, n = {n}"
            );
            buf.rewind();
            assert_eq!(buf.chase(n as u64), order[0], "closed cycle, n = {n}");
            assert_eq!(buf.chase(3 * n as u64 + 1), order[1 % n]);
            // Successive calls continue along the chain.
            buf.rewind();
            let stepwise: Vec<usize> = (0..n).map(|_| buf.chase(1)).collect();
            assert_eq!(stepwise[n - 1], order[0]);
            assert_eq!(&stepwise[..n - 1], &order[1..]);
            let mut seen = seen;
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), n, "every element visited once");
        }
    }

    #[test]
    fn relinking_replaces_the_chain() {
        let mut buf = ChaseBuffer::new(8192).expect("mmap");
        buf.link(&[0, 4096]).expect("link");
        assert_eq!(buf.chase(1), 4096);
        buf.link(&[64, 128, 192]).expect("relink");
        assert_eq!(buf.chase(0), 64);
        assert_eq!(buf.chase(2), 192);
        assert_eq!(buf.chase(3), 192);
        assert_eq!(buf.chase(1), 64);
    }

    #[test]
    fn bad_orders_are_refused_and_unlinked_chase_is_harmless() {
        let mut buf = ChaseBuffer::new(100).expect("mmap");
        assert_eq!(buf.bytes(), 4096);
        assert_eq!(buf.chase(1000), 0);
        assert_eq!(buf.link(&[]), Err(LinkError::Empty));
        assert!(matches!(
            buf.link(&[0, 4]),
            Err(LinkError::BadOffset { offset: 4, .. })
        ));
        assert!(matches!(
            buf.link(&[0, 4096]),
            Err(LinkError::BadOffset { offset: 4096, .. })
        ));
        assert_eq!(buf.head(), None);
    }

    #[test]
    fn overhead_twin_runs_every_count() {
        for n in [0, 1, 15, 16, 17, 1 << 20] {
            chase_overhead(n);
        }
    }
}
