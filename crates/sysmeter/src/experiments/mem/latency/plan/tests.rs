//! The plan of `mem.latency` against its time budget, on machine descriptions rather than
//! machines: the 2-vCPU AMD EPYC guest (32 MiB L3) and the Intel Xeon guest that reports a
//! 480 MiB L3. Behaviour, not speed: the work planned (chain elements built, takes sampled)
//! at a given cost per element, never a time measured here.

use std::time::{Duration, Instant};

use super::*;
use crate::experiments::mem::latency::MemLatency;
use crate::harness::Experiment;
use crate::model::{CacheInfo, MemoryInfo};

fn host(l2: u64, l3: u64) -> HostInfo {
    let cache = |level, size_bytes| CacheInfo {
        level,
        kind: "Unified".into(),
        size_bytes,
        line_bytes: Some(64),
        ..CacheInfo::default()
    };
    HostInfo {
        caches: vec![cache(1, 32 * KIB), cache(2, l2), cache(3, l3)],
        memory: MemoryInfo {
            available_bytes: 16 << 30,
            ..MemoryInfo::default()
        },
        ..HostInfo::default()
    }
}

const AMD_GUEST: (u64, u64) = (512 * KIB, 32 * MIB);
const INTEL_GUEST: (u64, u64) = (2 * MIB, 480 * MIB);

fn sampler(profile: &Profile) -> Sampler {
    let share = if profile.name == "default" { 0.5 } else { 1.0 };
    Sampler {
        samples: samples(profile).0,
        sample_ns: profile.sample_target.as_nanos() as f64 * share,
        warm_ns: profile.warmup.as_nanos() as f64 * share,
        timer_ns: 20.0,
        loop_ns: 0.3,
    }
}

/// The experiment's budget in one round of `profile` (its share of the run budget).
fn budget(profile: &Profile) -> Duration {
    profile
        .run_budget
        .mul_f64(MemLatency.time_share() / profile.rounds as f64)
}

fn plan_on((l2, l3): (u64, u64), profile: &Profile, budget: Duration, link_ns: f64) -> Plan {
    let h = host(l2, l3);
    plan_for(
        profile,
        &h,
        None,
        sampler(profile),
        (budget, Instant::now()),
        link_ns,
    )
}

#[test]
fn a_reported_480_mib_l3_plans_no_more_work_than_the_budget_allows() {
    for profile in [Profile::quick(), Profile::default_profile()] {
        for link_ns in [30.0, 150.0] {
            let p = plan_on(INTEL_GUEST, &profile, budget(&profile), link_ns);
            let floor = if profile.name == "quick" {
                32 * MIB
            } else {
                64 * MIB
            };
            assert!(
                p.planned() <= budget(&profile).mul_f64(PLANNED_SHARE) || p.max == floor,
                "{} at {link_ns} ns: {:?} planned for a {:?} budget, max {}",
                profile.name,
                p.planned(),
                budget(&profile),
                p.max
            );
            // Sysfs alone asks for 2 GiB (quick) or 7.5 GiB (default), capped at 512 MiB;
            // where chains are dear the budget cuts that, and says from what.
            if link_ns >= 150.0 {
                assert!(p.max < DEFAULT_CAP, "{}: {}", profile.name, p.max);
                assert_eq!(p.cut_from, Some(DEFAULT_CAP), "{}", profile.name);
            }
            let w = p.work();
            assert!(
                w.elements as f64 * link_ns <= budget(&profile).as_nanos() as f64 || p.max == floor,
                "{}: {w:?}",
                profile.name
            );
        }
    }
}

#[test]
fn the_planned_work_grows_with_the_largest_working_set() {
    let profile = Profile::default_profile();
    let small = plan_on(AMD_GUEST, &profile, Duration::from_millis(1), 60.0);
    let large = plan_on(AMD_GUEST, &profile, Duration::from_secs(3600), 60.0);
    assert_eq!(small.max, 64 * MIB, "never below the floor");
    assert_eq!(large.max, DEFAULT_CAP, "16 x 32 MiB, within the cap");
    assert_eq!(large.cut_from, None);
    let (a, b) = (small.work(), large.work());
    assert!(a.elements < b.elements && a.takes < b.takes && a.bytes < b.bytes);
    assert!(small.planned() < large.planned());
}

#[test]
fn more_budget_never_plans_a_smaller_curve() {
    let profile = Profile::default_profile();
    let mut last = 0;
    for secs in [1, 2, 4, 8, 16, 32, 64] {
        let p = plan_on(INTEL_GUEST, &profile, Duration::from_secs(secs), 100.0);
        assert!(p.max >= last, "{secs} s: {} < {last}", p.max);
        last = p.max;
    }
    assert_eq!(last, DEFAULT_CAP);
}

#[test]
fn an_explicit_max_size_is_taken_as_given() {
    let profile = Profile::quick();
    let h = host(INTEL_GUEST.0, INTEL_GUEST.1);
    let p = plan_for(
        &profile,
        &h,
        Some(1 << 30),
        sampler(&profile),
        (Duration::from_millis(1), Instant::now()),
        100.0,
    );
    assert_eq!((p.max, p.cut_from), (1 << 30, None));
}

#[test]
fn the_fine_stage_stops_where_the_budget_ends() {
    let profile = Profile::default_profile();
    let roomy = plan_on(AMD_GUEST, &profile, Duration::from_secs(3600), 60.0);
    let fine = [8 * MIB, 12 * MIB, 16 * MIB, 24 * MIB];
    assert_eq!(roomy.affordable(&fine, 2), fine);
    let spent = plan_on(AMD_GUEST, &profile, Duration::ZERO, 60.0);
    assert!(spent.affordable(&fine, 2).is_empty());
    // The side series come after the fine stages: their planned time is set aside (at the
    // floor's working set, which a budget this small plans for).
    let floor = plan_on(AMD_GUEST, &profile, Duration::ZERO, 60.0);
    assert_eq!(floor.max, 64 * MIB);
    let side = floor.duration_of(&floor.side_work());
    let reserved = plan_on(AMD_GUEST, &profile, side, 60.0);
    assert!(
        reserved.affordable(&fine, 1).is_empty(),
        "the side series' time is not the fine stage's"
    );
    // Room for about one take beyond them: the first size only.
    let one = plan_on(AMD_GUEST, &profile, side + Duration::from_millis(40), 60.0);
    assert_eq!(one.affordable(&fine, 1), [8 * MIB]);
}
