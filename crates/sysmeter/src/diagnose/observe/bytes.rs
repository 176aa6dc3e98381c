//! Reading the structs that code on this machine wrote into shared memory — the BPF
//! programs' maps, the preload library's regions (`calls`, `alloc`, `locks`' table): native
//! byte order, because the writer runs here, and 0 (or an empty string) past the end, so a
//! short or damaged region reads as nothing rather than failing. The zero-defaulting face of
//! the perf records' readers (`observe::records`), which say `None` instead. Pure.

use super::records;

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
}
