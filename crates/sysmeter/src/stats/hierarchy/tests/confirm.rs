//! Tests of the confirmation stage: ranges, re-measurement around candidates, a clock step
//! that must not make a boundary when cycles are given, and bumps that must not confirm.

use super::*;

/// Fine sizes at `per` points per octave inside `[lo, hi]`: 2^k·(1 + i/per).
fn fine(lo: u64, hi: u64, per: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut p = 4 * KIB;
    while p <= hi {
        v.extend(
            (0..per)
                .map(|i| p + p * i / per)
                .filter(|&s| s >= lo && s <= hi),
        );
        p *= 2;
    }
    v
}

fn points(pts: &[(u64, f64)], refined: bool) -> Vec<CurvePoint> {
    pts.iter()
        .map(|&(bytes, value)| CurvePoint {
            bytes,
            value,
            refined,
        })
        .collect()
}

/// The two stages as `mem.latency` runs them: detect on the coarse curve, re-measure the
/// windows at 8 points per octave (`f(size, true)`), keep the best value per size, detect
/// again and confirm. `f(size, false)` gives the coarse value.
fn pipeline(max: u64, mut f: impl FnMut(u64, bool) -> f64) -> (Hierarchy, Vec<Boundary>) {
    let coarse = points(&curve(max, |s| f(s, false)), false);
    let pairs = |c: &[CurvePoint]| c.iter().map(|p| (p.bytes, p.value)).collect::<Vec<_>>();
    let first = detect(&pairs(&coarse), &Config::default());
    let mut merged = coarse.clone();
    for (lo, hi) in windows(&first, &coarse) {
        for s in fine(lo, hi, 8) {
            let v = f(s, true);
            match merged.iter_mut().find(|p| p.bytes == s) {
                Some(p) => (p.value, p.refined) = (p.value.min(v), true),
                None => merged.push(CurvePoint {
                    bytes: s,
                    value: v,
                    refined: true,
                }),
            }
        }
    }
    merged.sort_by_key(|p| p.bytes);
    let h = detect(&pairs(&merged), &Config::default());
    let b = confirm(&h, &merged, &ConfirmConfig::default());
    (h, b)
}

fn confirmed(b: &[Boundary]) -> Vec<(u64, u64)> {
    b.iter()
        .filter(|b| b.unconfirmed.is_none())
        .filter_map(|b| Some((b.lo_bytes?, b.hi_bytes?)))
        .collect()
}

#[test]
fn noisy_ramped_steps_are_confirmed_as_ranges_around_the_capacities() {
    for seed in 1..=20 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let (h, b) = pipeline(512 * MIB, |s, _| ramped(s) * (0.95 + 0.1 * rng.f64()));
        assert_eq!(h.levels.len(), 4, "seed {seed}: {h:?}");
        let r = confirmed(&b);
        assert_eq!(r.len(), 3, "seed {seed}: {b:?}");
        for ((lo, hi), cap) in r.into_iter().zip([L1, L2, L3]) {
            assert!(lo < hi && hi as f64 / lo as f64 <= 4.0, "seed {seed}");
            assert!(
                range_agrees(lo, hi, cap, 1.25),
                "seed {seed}: {lo}..{hi} vs {cap}"
            );
        }
        assert!(b.iter().all(|b| b.jump >= 1.5), "seed {seed}: {b:?}");
    }
}

#[test]
fn a_clock_step_makes_a_level_in_ns_but_not_in_cycles() {
    // Cycles per load are what the caches fix; the host slows the core from 4.6 to 2.8 GHz
    // while the upper half of L2 is measured, so those ns are 1.64x longer.
    let ghz = |s: u64| if s > 128 * KIB && s <= L2 { 2.8 } else { 4.6 };
    let cycles = |s: u64| 4.6 * clean(s);
    let ns = curve(512 * MIB, |s| cycles(s) / ghz(s));
    assert_eq!(
        detect(&ns, &Config::default()).levels.len(),
        5,
        "the step has teeth"
    );
    // What mem.latency detects on: each point's ns times the probe's GHz for that point.
    let (h, b) = pipeline(512 * MIB, |s, _| cycles(s) / ghz(s) * ghz(s));
    assert_eq!(h.levels.len(), 4, "{h:?}");
    let r = confirmed(&b);
    assert_eq!(r.len(), 3, "{b:?}");
    for ((lo, hi), cap) in r.into_iter().zip([L1, L2, L3]) {
        assert!(lo <= cap && hi > cap, "{lo}..{hi} vs {cap}");
    }
}

#[test]
fn a_one_point_bump_is_not_confirmed_and_does_not_move_a_boundary() {
    // Re-measured L3 plateau at 40 cycles with one point at DRAM latency (4 MiB), DRAM
    // (300) from 32 MiB on.
    let bump = |s: u64| match s {
        s if s == 4 * MIB => 300.0,
        s if s < L3 => 40.0,
        _ => 300.0,
    };
    let pts = points(&curve(512 * MIB, bump), true);
    let level = |latency_ns, first_size, last_size, ends_at_bytes| Level {
        latency_ns,
        ends_at_bytes,
        first_size,
        last_size,
        flat: true,
    };
    // The claimed levels' first boundary (the bump's) is not confirmed.
    let bump_not_confirmed = |levels: Vec<Level>| {
        let claim = Hierarchy {
            levels,
            minor_steps: Vec::new(),
        };
        let b = confirm(&claim, &pts, &ConfirmConfig::default());
        assert_eq!(
            b[0].unconfirmed,
            Some(Unconfirmed::NoPersistentStep),
            "{b:?}"
        );
        b
    };
    // Claimed: a level ending just before the bump, the bump as the next level.
    let b = bump_not_confirmed(vec![
        level(40.0, MIB, 3 * MIB + MIB / 2, Some(3 * MIB + MIB / 2)),
        level(40.0, 5 * MIB, 28 * MIB, Some(28 * MIB)),
        level(300.0, L3, 512 * MIB, None),
    ]);
    assert_eq!(b[1].unconfirmed, None, "{b:?}");
    assert_eq!((b[1].lo_bytes, b[1].hi_bytes), (Some(28 * MIB), Some(L3)));
    // The bump as the level after a plateau: it does not persist, so no step.
    bump_not_confirmed(vec![
        level(40.0, MIB, 3 * MIB + MIB / 2, Some(3 * MIB + MIB / 2)),
        level(300.0, 4 * MIB, 7 * MIB, None),
    ]);
}

#[test]
fn a_burst_in_the_coarse_pass_is_not_confirmed_after_re_measuring() {
    // Both coarse passes at 2–3.5 MiB were disturbed (a neighbour filled the L3): the coarse
    // curve has a fake level there; the fine passes see the true L3.
    let burst = |s: u64, refined: bool| {
        if !refined && (2 * MIB..=3 * MIB + MIB / 2).contains(&s) {
            100.0
        } else {
            clean(s)
        }
    };
    let coarse = curve(512 * MIB, |s| burst(s, false));
    let first = detect(&coarse, &Config::default());
    assert!(first.levels.len() > 4, "the burst has teeth: {first:?}");
    let (h, b) = pipeline(512 * MIB, burst);
    let r = confirmed(&b);
    assert!(
        r.iter().all(|&(lo, hi)| !(lo < 4 * MIB && hi > MIB)),
        "{h:?} {b:?}"
    );
    assert!(r.iter().any(|&(lo, hi)| lo <= L3 && hi > L3), "{b:?}");
}

#[test]
fn the_last_level_ends_where_its_undisturbed_measurement_does() {
    // A neighbour evicts our lines while the fine pass re-measures the upper half of L3:
    // those measurements are at DRAM latency, the coarse ones were undisturbed. The best
    // measurement decides (interference only adds latency), so the range still brackets
    // the capacity instead of ending at half of it.
    let disturbed = |s: u64, refined: bool| {
        if refined && (L3 / 2..=L3).contains(&s) {
            100.0
        } else {
            clean(s)
        }
    };
    let (_, b) = pipeline(512 * MIB, disturbed);
    let r = confirmed(&b);
    assert_eq!(r.len(), 3, "{b:?}");
    let (lo, hi) = r[2];
    assert!(lo <= L3 && hi > L3 && hi / lo <= 2, "{lo}..{hi}: {b:?}");
}

#[test]
fn an_unmeasured_range_or_a_wide_one_is_not_confirmed() {
    let steps = points(&curve(512 * MIB, clean), false);
    let h = detect(&curve(512 * MIB, clean), &Config::default());
    let b = confirm(&h, &steps, &ConfirmConfig::default());
    assert_eq!(b.len(), 3);
    assert!(
        b.iter()
            .all(|b| b.unconfirmed == Some(Unconfirmed::NotRemeasured))
    );
    assert_eq!(
        (b[0].lo_bytes, b[0].hi_bytes),
        (Some(L1), Some(L1 + L1 / 4))
    );
    assert_eq!(b[0].middle(), Some(36_636));
    let tight = ConfirmConfig {
        max_width: 1.1,
        ..ConfirmConfig::default()
    };
    let refined = points(&curve(512 * MIB, clean), true);
    let b = confirm(&h, &refined, &tight);
    assert!(matches!(b[0].unconfirmed, Some(Unconfirmed::TooWide(w)) if w > 1.2));
}

#[test]
fn windows_ranges_agreement_and_latencies_on_another_curve() {
    let c = curve(512 * MIB, clean);
    let h = detect(&c, &Config::default());
    let w = windows(&h, &points(&c, false));
    assert_eq!(
        w,
        [
            (L1 - L1 / 8, L1 + L1 / 2),
            (L2 - L2 / 8, L2 + L2 / 2),
            (L3 - L3 / 8, L3 + L3 / 2)
        ]
    );
    assert!(range_agrees(4 * MIB, 6 * MIB, 7 * MIB, 1.25));
    assert!(range_agrees(4 * MIB, 6 * MIB, 5 * MIB, 1.25));
    assert!(!range_agrees(4 * MIB, 6 * MIB, 32 * MIB, 1.25));
    assert!(!range_agrees(4 * MIB, 6 * MIB, 3 * MIB, 1.25));
    let doubled: Vec<(u64, f64)> = c.iter().map(|&(s, v)| (s, 2.0 * v)).collect();
    assert_eq!(latencies_on(&h, &doubled), [3.0, 9.0, 30.0, 200.0]);
}
