//! Unit tests of the hierarchy detector on synthetic curves with a known answer; the
//! confirmation of boundaries (ranges, re-measurement, clock drift) in `confirm.rs`.

mod confirm;

use super::*;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
const L1: u64 = 32 * KIB;
const L2: u64 = 512 * KIB;
const L3: u64 = 32 * MIB;

/// Sizes 2^k·{1, 1.25, 1.5, 1.75} from 4 KiB up to and including `max`.
fn sizes(max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut p = 4 * KIB;
    while p <= max {
        v.extend(
            [4, 5, 6, 7]
                .map(|q| p * q / 4)
                .into_iter()
                .filter(|&s| s <= max),
        );
        p *= 2;
    }
    v
}

/// Pure steps: 1.5 ns up to L1, 4.5 up to L2, 15 up to L3, 100 beyond.
fn clean(s: u64) -> f64 {
    match s {
        s if s <= L1 => 1.5,
        s if s <= L2 => 4.5,
        s if s <= L3 => 15.0,
        _ => 100.0,
    }
}

/// A realistic shape: beyond each capacity C a random chain still hits the level with
/// probability C / size, so the latency ramps up over an octave or two.
fn ramped(s: u64) -> f64 {
    let lat = [1.5, 4.5, 15.0, 100.0];
    let caps = [L1, L2, L3];
    let mut y = lat[3];
    for k in (0..3).rev() {
        let hit = (caps[k] as f64 / s as f64).min(1.0);
        y = hit * lat[k] + (1.0 - hit) * y;
    }
    y
}

fn curve(max: u64, mut f: impl FnMut(u64) -> f64) -> Vec<(u64, f64)> {
    sizes(max).into_iter().map(|s| (s, f(s))).collect()
}

fn ends(h: &Hierarchy) -> Vec<Option<u64>> {
    h.levels.iter().map(|l| l.ends_at_bytes).collect()
}

fn within(a: u64, b: u64, factor: f64) -> bool {
    let r = a as f64 / b as f64;
    r <= factor && r >= 1.0 / factor
}

#[test]
fn clean_steps_give_four_levels_ending_at_the_capacities() {
    let h = detect(&curve(512 * MIB, clean), &Config::default());
    assert_eq!(ends(&h), [Some(L1), Some(L2), Some(L3), None]);
    let lat: Vec<f64> = h.levels.iter().map(|l| l.latency_ns).collect();
    assert_eq!(lat, [1.5, 4.5, 15.0, 100.0]);
    assert!(h.levels.iter().all(|l| l.flat));
    assert!(h.minor_steps.is_empty());
    assert_eq!(h.levels[0].first_size, 4 * KIB);
    assert_eq!(h.levels[3].last_size, 512 * MIB);
}

#[test]
fn noisy_ramped_steps_are_found_within_a_factor_of_two() {
    for seed in 1..=20 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let pts = curve(512 * MIB, |s| ramped(s) * (0.95 + 0.1 * rng.f64()));
        let h = detect(&pts, &Config::default());
        assert_eq!(h.levels.len(), 4, "seed {seed}: {h:?}");
        for (got, want) in ends(&h).iter().zip([L1, L2, L3]) {
            let got = got.expect("boundary");
            assert!(within(got, want, 2.0), "seed {seed}: {got} vs {want}");
        }
        let dram = h.levels[3].latency_ns;
        assert!((80.0..=105.0).contains(&dram), "seed {seed}: DRAM {dram}");
        assert!((1.4..=1.6).contains(&h.levels[0].latency_ns), "seed {seed}");
    }
}

#[test]
fn a_missing_level_is_reported_by_the_sysfs_match() {
    // No L3 step: L2 latency continues up to DRAM (3 levels where sysfs expects 4).
    let pts = curve(512 * MIB, |s| match s {
        s if s <= L1 => 1.5,
        s if s <= L2 => 4.5,
        _ => 100.0,
    });
    let h = detect(&pts, &Config::default());
    assert_eq!(ends(&h), [Some(L1), Some(L2), None]);
    let detected: Vec<u64> = h.levels.iter().filter_map(|l| l.ends_at_bytes).collect();
    let m = match_caches(&detected, &[L1, L2, L3]);
    assert_eq!(m.len(), 3);
    assert!(m[0].agree && m[1].agree);
    assert_eq!(
        (m[2].detected, m[2].sysfs, m[2].agree),
        (None, Some(2), false)
    );
}

#[test]
fn a_small_tlb_step_is_a_minor_step_not_a_level() {
    // ×1.2 in the last octave of L2 (beyond a 256 KiB L1 TLB reach) and ×1.3 in the last
    // two octaves of L3 (beyond an 8 MiB L2 TLB reach).
    let pts = curve(512 * MIB, |s| {
        let tlb = match s {
            s if s > 256 * KIB && s <= L2 => 1.2,
            s if s > 8 * MIB && s <= L3 => 1.3,
            _ => 1.0,
        };
        clean(s) * tlb
    });
    let h = detect(&pts, &Config::default());
    assert_eq!(ends(&h), [Some(L1), Some(L2), Some(L3), None], "{h:?}");
    // The long rise inside L3 is reported; the short one just before L2 ends is part of the
    // L2 → L3 transition. Neither becomes a level.
    assert_eq!(h.minor_steps.len(), 1, "{h:?}");
    assert_eq!(h.minor_steps[0].at_bytes, 8 * MIB);
    assert!((h.minor_steps[0].ratio - 1.3).abs() < 1e-9);
    assert_eq!(h.levels[2].latency_ns, 15.0);
}

#[test]
fn a_curve_ending_in_a_rise_gets_a_final_non_flat_level() {
    // Capped at 4x the LLC: the DRAM ramp never flattens out.
    let h = detect(&curve(128 * MIB, ramped), &Config::default());
    assert_eq!(h.levels.len(), 4, "{h:?}");
    let last = &h.levels[3];
    assert!(!last.flat && last.ends_at_bytes.is_none());
    assert!(last.latency_ns > 70.0, "{last:?}");
    let l3_end = h.levels[2].ends_at_bytes.expect("L3 end");
    assert!(within(l3_end, L3, 2.0), "{l3_end}");
}

#[test]
fn a_single_spike_does_not_split_a_plateau() {
    let mut pts = curve(512 * MIB, clean);
    pts[4].1 *= 3.0; // one bad sample inside L1
    let h = detect(&pts, &Config::default());
    assert_eq!(ends(&h), [Some(L1), Some(L2), Some(L3), None]);
}

#[test]
fn degenerate_inputs() {
    assert!(detect(&[], &Config::default()).levels.is_empty());
    let h = detect(&[(4096, 1.0)], &Config::default());
    assert_eq!(h.levels.len(), 1);
    assert_eq!(h.levels[0].ends_at_bytes, None);
    let h = detect(
        &[(4096, f64::NAN), (8192, 2.0), (0, 1.0)],
        &Config::default(),
    );
    assert_eq!(h.levels.len(), 1);
    assert_eq!(h.levels[0].latency_ns, 2.0);
}

#[test]
fn matching_flags_disagreement_and_extra_levels() {
    // L2 detected at 3x sysfs: matched (nearest) but disagreeing.
    let m = match_caches(&[L1, 3 * L2, L3], &[L1, L2, L3]);
    assert_eq!(m.len(), 3);
    assert!(m[0].agree && !m[1].agree && m[2].agree);
    assert!((m[1].ratio.expect("ratio") - 3.0).abs() < 1e-9);
    // Far apart but in order: still matched, as a disagreement (a VM's slice of an L3).
    let m = match_caches(&[L1, L2, 2 * MIB + MIB / 2], &[L1, L2, L3]);
    assert_eq!(m.len(), 3);
    assert_eq!(
        (m[2].detected, m[2].sysfs, m[2].agree),
        (Some(2), Some(2), false)
    );
    // Beyond a factor 32 it is an extra level plus a missing one.
    let m = match_caches(&[L1, L2, 512 * KIB + 1], &[L1, L2, L3]);
    assert_eq!(m.len(), 4);
    // An extra boundary (e.g. a TLB step taken for a level) is left unmatched.
    let m = match_caches(&[L1, 256 * KIB, 512 * KIB, L3], &[L1, L2, L3]);
    let extra: Vec<_> = m.iter().filter(|x| x.sysfs.is_none()).collect();
    assert_eq!(extra.len(), 1);
    assert_eq!(extra[0].detected, Some(1));
    assert!(m.iter().filter(|x| x.sysfs.is_some()).all(|x| x.agree));
    // Nothing to compare against.
    assert!(match_caches(&[L1], &[]).iter().all(|x| x.sysfs.is_none()));
}

/// A curve measured by `mem.latency` on a 2-vCPU KVM guest (AMD EPYC, sysfs: 32 KiB L1d,
/// 512 KiB L2, 32 MiB L3 shared with the host's other guests): the usable L3 is a noisy
/// plateau only 1.7 octaves wide, then DRAM.
const KVM_CURVE: [(u64, f64); 69] = [
    (4096, 1.24),
    (5120, 1.28),
    (6144, 1.26),
    (7168, 1.25),
    (8192, 1.23),
    (10240, 1.27),
    (12288, 1.24),
    (14336, 1.27),
    (16384, 1.23),
    (20480, 1.25),
    (24576, 1.49),
    (28672, 1.25),
    (32768, 2.21),
    (40960, 3.78),
    (49152, 3.92),
    (57344, 3.81),
    (65536, 3.92),
    (81920, 3.83),
    (98304, 4.01),
    (114688, 3.83),
    (131072, 3.83),
    (163840, 3.88),
    (196608, 3.84),
    (229376, 4.57),
    (262144, 4.12),
    (327680, 5.48),
    (393216, 6.1),
    (458752, 8.12),
    (524288, 7.38),
    (655360, 11.5),
    (786432, 12.3),
    (917504, 12.5),
    (1048576, 12.6),
    (1310720, 15.2),
    (1572864, 14.0),
    (1835008, 12.8),
    (2097152, 12.4),
    (2621440, 43.5),
    (3145728, 50.8),
    (3670016, 54.0),
    (4194304, 50.7),
    (5242880, 91.1),
    (6291456, 89.7),
    (7340032, 99.9),
    (8388608, 101.0),
    (10485760, 102.0),
    (12582912, 104.0),
    (14680064, 102.0),
    (16777216, 107.0),
    (20971520, 106.0),
    (25165824, 103.0),
    (29360128, 105.0),
    (33554432, 103.0),
    (41943040, 103.0),
    (50331648, 103.0),
    (58720256, 111.0),
    (67108864, 101.0),
    (83886080, 104.0),
    (100663296, 102.0),
    (117440512, 102.0),
    (134217728, 108.0),
    (167772160, 104.0),
    (201326592, 103.0),
    (234881024, 108.0),
    (268435456, 104.0),
    (335544320, 103.0),
    (402653184, 104.0),
    (469762048, 108.0),
    (536870912, 101.0),
];

#[test]
fn a_measured_vm_curve_with_a_narrow_noisy_l3() {
    let h = detect(&KVM_CURVE, &Config::default());
    let e: Vec<u64> = h.levels.iter().filter_map(|l| l.ends_at_bytes).collect();
    assert_eq!(h.levels.len(), 4, "{h:?}");
    assert!(within(e[0], L1, 2.0) && within(e[1], L2, 2.0), "{e:?}");
    assert!((MIB..=4 * MIB).contains(&e[2]), "{e:?}");
    assert!((100.0..=108.0).contains(&h.levels[3].latency_ns));
    // The L3 that this guest can use is a small slice: matched, but disagreeing.
    let m = match_caches(&e, &[L1, L2, L3]);
    assert_eq!(
        m.iter().map(|x| x.agree).collect::<Vec<_>>(),
        [true, true, false]
    );
}
