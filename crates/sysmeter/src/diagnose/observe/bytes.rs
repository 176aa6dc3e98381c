//! Reading the structs that code on this machine wrote into shared memory — the BPF
//! programs' maps, the preload library's regions (`calls`, `alloc`, `locks`' table): native
//! byte order, because the writer runs here, and 0 (or an empty string) past the end, so a
//! short or damaged region reads as nothing rather than failing. The zero-defaulting face of
//! the perf records' readers (`observe::records`), which say `None` instead. Also the one
//! reading of what the preload library's tables of processes and threads have in common:
//! which records are claimed, and by whom (`claimed`). Pure.

use std::ops::Range;

use super::records;

/// A fresh region header for the preload library: `len` zero bytes but for `magic` in the
/// first eight (little-endian), the mark the library checks before it writes.
pub fn header_with_magic(len: usize, magic: u64) -> Vec<u8> {
    let mut h = vec![0u8; len];
    h[0..8].copy_from_slice(&magic.to_le_bytes());
    h
}

/// The `u32` at byte `at` of `bytes` (0 past the end).
pub fn u32_at(bytes: &[u8], at: usize) -> u32 {
    records::u32_at(bytes, at).unwrap_or(0)
}

/// The `u64` at byte `at` of `bytes` (0 past the end).
pub fn u64_at(bytes: &[u8], at: usize) -> u64 {
    records::u64_at(bytes, at).unwrap_or(0)
}

/// The NUL-terminated text in the `len` bytes at `at` (lossy UTF-8; empty past the end).
pub fn text_at(bytes: &[u8], at: usize, len: usize) -> String {
    let s = bytes.get(at..at + len).unwrap_or_default();
    let end = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..end]).into_owned()
}

/// Who claimed a record of one of the preload library's tables: the head each such record
/// starts with, `uint32_t claimed, pid, tid, image` (`struct sm_slot` and `struct sm_fthread`
/// of crates/sysmeter-sys/preload/layout.h; alloc.h's process record has the parent's id in
/// the place of the thread's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Claim {
    /// Process id.
    pub pid: u32,
    /// Thread id (in `alloc`'s process records, the parent's process id).
    pub tid: u32,
    /// The process image: which load of the library (1, 2, … in load order; an exec'd
    /// image loads it again, a forked child keeps its parent's).
    pub image: u32,
}

/// The claimed records of a table in `b`: of the records `indexes`, `size` bytes each from
/// byte `start`, those whose first word (`claimed`) is 1, each with its index, its offset in
/// `b` and its head. The library sets the word once the record is taken and filled in.
pub fn claimed(
    b: &[u8],
    start: usize,
    size: usize,
    indexes: Range<usize>,
) -> impl Iterator<Item = (usize, usize, Claim)> + '_ {
    indexes
        .map(move |i| (i, start + i * size))
        .filter(move |&(_, at)| u32_at(b, at) == 1)
        .map(move |(i, at)| {
            let claim = Claim {
                pid: u32_at(b, at + 4),
                tid: u32_at(b, at + 8),
                image: u32_at(b, at + 12),
            };
            (i, at, claim)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_past_the_end_read_as_nothing() {
        let mut b = 7u32.to_ne_bytes().to_vec();
        b.extend(9u64.to_ne_bytes());
        b.extend(b"name\0junk");
        assert_eq!((u32_at(&b, 0), u64_at(&b, 4)), (7, 9));
        assert_eq!(text_at(&b, 12, 9), "name");
        assert_eq!(
            (u32_at(&b, 20), u64_at(&b, 16), text_at(&b, 40, 4)),
            (0, 0, String::new())
        );
    }

    #[test]
    fn only_claimed_records_are_read_with_their_heads() {
        // Three records of 20 bytes after a 4-byte header; the second is not claimed.
        let mut b = vec![0u8; 4 + 3 * 20];
        for (k, claimed, pid) in [(0usize, 1u32, 10u32), (1, 0, 11), (2, 1, 12)] {
            let at = 4 + k * 20;
            for (i, v) in [claimed, pid, pid + 100, k as u32 + 1]
                .into_iter()
                .enumerate()
            {
                b[at + 4 * i..at + 4 * i + 4].copy_from_slice(&v.to_ne_bytes());
            }
        }
        let got: Vec<_> = claimed(&b, 4, 20, 0..3).collect();
        let head = |pid, image| Claim {
            pid,
            tid: pid + 100,
            image,
        };
        assert_eq!(got, vec![(0, 4, head(10, 1)), (2, 44, head(12, 3))]);
        assert_eq!(claimed(&b, 4, 20, 1..3).count(), 1);
    }
}
