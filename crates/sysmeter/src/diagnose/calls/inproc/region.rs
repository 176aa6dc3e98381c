//! The shared region the preload library writes (its C layout is
//! `crates/sysmeter-sys/preload/layout.h`; keep both in step): a header with the run's
//! function names, then one slot per thread of every process of the run with, per function,
//! the exact count, the timed calls, their tick sum and a histogram of their ticks.
//!
//! Pure bytes in, slots out: no I/O here. Depends on nothing but std.

use crate::diagnose::observe::bytes::{
    Claim, claimed as claimed_records, header_with_magic, text_at, u32_at, u64_at,
};

/// Identifies an initialised region.
pub const MAGIC: u64 = 0x3153_4c4c_4143_534d;
/// Functions per run; index 0 is the calibration (an empty function through the hook).
pub const MAX_FUNCS: usize = 64;
const NAME: usize = 48;
/// Histogram buckets (exact below 16 ticks, then 8 per octave).
pub const BUCKETS: usize = 320;
/// Thread slots of a run.
pub const MAX_SLOTS: usize = 512;
const HEADER: usize = 4096;
const FN_SIZE: usize = 32 + 4 * BUCKETS;
const SLOT_SIZE: usize = 24 + NAME + MAX_FUNCS * FN_SIZE;
/// Bytes of the whole region.
pub const SIZE: usize = HEADER + MAX_SLOTS * SLOT_SIZE;
/// The name of function 0.
pub const CALIBRATION: &str = "(calibration)";

/// One function in one thread.
#[derive(Debug, Clone, Default)]
pub struct FnCounts {
    /// Every call.
    pub count: u64,
    /// Calls whose time was taken.
    pub timed: u64,
    /// Ticks of the timed calls.
    pub sum: u64,
    /// Timed calls per bucket.
    pub hist: Vec<u32>,
}

/// One thread of one process image.
#[derive(Debug, Clone)]
pub struct Slot {
    /// Its process, thread and process image.
    pub claim: Claim,
    /// The program's short name.
    pub exe: String,
    /// Per function index.
    pub fns: Vec<FnCounts>,
}

/// What the region holds at the end of a run.
#[derive(Debug, Clone, Default)]
pub struct Region {
    /// Function names by index.
    pub names: Vec<String>,
    /// Claimed thread slots.
    pub slots: Vec<Slot>,
    /// Threads that found no free slot (not counted).
    pub lost: u32,
    /// Process images that loaded the library.
    pub images: u32,
    /// The smallest step of the time-stamp counter seen by the library, ticks.
    pub step: u32,
}

/// The initial header: magic, sizes, function 0 named.
pub fn header() -> Vec<u8> {
    let mut h = header_with_magic(HEADER, MAGIC);
    h[8..12].copy_from_slice(&(MAX_FUNCS as u32).to_le_bytes());
    h[12..16].copy_from_slice(&(MAX_SLOTS as u32).to_le_bytes());
    h[16..20].copy_from_slice(&1u32.to_le_bytes());
    h[64..64 + CALIBRATION.len()].copy_from_slice(CALIBRATION.as_bytes());
    h
}

fn function(b: &[u8], at: usize) -> FnCounts {
    FnCounts {
        count: u64_at(b, at),
        timed: u64_at(b, at + 8),
        sum: u64_at(b, at + 16),
        hist: (0..BUCKETS).map(|i| u32_at(b, at + 32 + 4 * i)).collect(),
    }
}

fn slot(b: &[u8], at: usize, claim: Claim, funcs: usize) -> Slot {
    Slot {
        claim,
        exe: text_at(b, at + 24, NAME),
        fns: (0..funcs)
            .map(|i| function(b, at + 24 + NAME + i * FN_SIZE))
            .collect(),
    }
}

/// Reads a region (`b` may be cut short after the last claimed slot).
pub fn parse(b: &[u8]) -> Option<Region> {
    if u64_at(b, 0) != MAGIC {
        return None;
    }
    let funcs = (u32_at(b, 16) as usize).min(MAX_FUNCS);
    let claimed = (u32_at(b, 20) as usize).min(MAX_SLOTS);
    let names = (0..funcs)
        .map(|i| text_at(b, 64 + i * NAME, NAME))
        .collect();
    let slots = claimed_records(b, HEADER, SLOT_SIZE, 0..claimed)
        .map(|(_, at, claim)| slot(b, at, claim, funcs))
        .collect();
    Some(Region {
        names,
        slots,
        lost: u32_at(b, 28),
        images: u32_at(b, 32),
        step: u32_at(b, 36),
    })
}

/// Bytes to read for `claimed` slots.
pub fn used_len(claimed: usize) -> usize {
    HEADER + claimed.min(MAX_SLOTS) * SLOT_SIZE
}

/// The claimed slots as the header says.
pub fn claimed(header: &[u8]) -> usize {
    u32_at(header, 20) as usize
}

/// The lower edge of `bucket`, in ticks (the inverse of the library's `sm_bucket`).
pub fn bucket_low(bucket: usize) -> f64 {
    if bucket < 16 {
        return bucket as f64;
    }
    let e = 4 + (bucket - 16) / 8;
    let sub = (bucket - 16) % 8;
    ((8 + sub) as f64) * 2f64.powi(e as i32 - 3)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_invert_the_library_rule() {
        // sm_bucket(16) = 16, sm_bucket(17) = 16 (8 per octave from 16 on), sm_bucket(32) = 24.
        assert_eq!(bucket_low(15), 15.0);
        assert_eq!(bucket_low(16), 16.0);
        assert_eq!(bucket_low(17), 18.0);
        assert_eq!(bucket_low(24), 32.0);
    }

    #[test]
    fn a_fresh_header_parses_with_the_calibration_alone() {
        let r = parse(&header()).expect("magic");
        assert_eq!(r.names, vec![CALIBRATION.to_string()]);
        assert!(r.slots.is_empty());
    }
}
