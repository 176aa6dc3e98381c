//! Ground truth for the bandwidth kernels: each must do exactly what its name says, for
//! lengths that are and are not whole iterations and for unaligned starts.

use super::*;

/// Lengths covering: empty, shorter than a word, one SSE iteration, one AVX2 iteration,
/// several iterations, and odd tails after the bulk.
const LENS: [usize; 8] = [0, 5, 64, 256, 4096, 4096 + 77, 3 * 256 + 8, 65_536 + 1];

fn pattern(len: usize) -> Vec<u8> {
    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng as u8
        })
        .collect()
}

fn expected_sum(buf: &[u8]) -> u64 {
    let words = buf.chunks_exact(8);
    let rest: u64 = words.remainder().iter().map(|&b| b as u64).sum();
    words
        .map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")))
        .fold(rest, u64::wrapping_add)
}

#[test]
fn read_returns_the_sum_of_the_words() {
    for len in LENS {
        let data = pattern(len + 3);
        for start in [0, 1, 3] {
            let buf = &data[start..start + len];
            assert_eq!(read(buf), expected_sum(buf), "len {len} start {start}");
        }
    }
    // A known value: 512 words of 1 sum to 512.
    let ones: Vec<u8> = (0..512u64).flat_map(|_| 1u64.to_le_bytes()).collect();
    assert_eq!(read(&ones), 512);
}

#[test]
fn write_fills_every_byte_and_nothing_else() {
    for len in LENS {
        let mut buf = vec![0u8; len + 2];
        write(&mut buf[1..=len], 0xa5);
        assert_eq!(buf[0], 0, "len {len}: wrote before the slice");
        assert_eq!(buf[len + 1], 0, "len {len}: wrote past the slice");
        assert!(buf[1..=len].iter().all(|&b| b == 0xa5), "len {len}");
    }
}

#[test]
fn copy_copies_exactly() {
    for len in LENS {
        let src = pattern(len + 1);
        let mut dst = vec![0u8; len + 2];
        copy(&mut dst[1..=len], &src[1..]);
        assert_eq!(&dst[1..=len], &src[1..], "len {len}");
        assert_eq!(
            (dst[0], dst[len + 1]),
            (0, 0),
            "len {len}: wrote outside the slice"
        );
    }
}

#[test]
fn nt_write_writes_the_pattern() {
    if !nt_write_supported() {
        crate::skip::skip(
            "ntstore",
            "no non-temporal store kernel on this architecture",
        );
        return;
    }
    for len in LENS {
        for start in [0, 1, 31] {
            let mut buf = vec![0u8; len + 64];
            nt_write(&mut buf[start..start + len], 0x3c).expect("supported");
            let (before, rest) = buf.split_at(start);
            let (mid, after) = rest.split_at(len);
            assert!(before.iter().all(|&b| b == 0), "len {len} start {start}");
            assert!(mid.iter().all(|&b| b == 0x3c), "len {len} start {start}");
            assert!(after.iter().all(|&b| b == 0), "len {len} start {start}");
        }
    }
}

#[test]
fn isa_is_named() {
    assert!(!vector_isa().is_empty());
    assert!(vector_bytes() >= 8);
}
