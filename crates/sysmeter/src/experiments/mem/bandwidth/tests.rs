//! Unit tests of the size plan and naming of mem.bandwidth.

use super::*;
use crate::model::MemoryInfo;
use crate::model::fixture::assert_cases;

fn host(caches: &[(u32, &str, u64, &str)]) -> HostInfo {
    HostInfo {
        caches: caches
            .iter()
            .map(|&(level, kind, size_bytes, shared)| CacheInfo {
                level,
                kind: kind.into(),
                size_bytes,
                shared_cpus: shared.into(),
                ..CacheInfo::default()
            })
            .collect(),
        memory: MemoryInfo {
            available_bytes: 16 << 30,
            ..MemoryInfo::default()
        },
        ..HostInfo::default()
    }
}

const THIS_VM: [(u32, &str, u64, &str); 4] = [
    (1, "Data", 32 << 10, "0"),
    (1, "Instruction", 32 << 10, "0"),
    (2, "Unified", 512 << 10, "0"),
    (3, "Unified", 32 << 20, "0-1"),
];

#[test]
fn sizes_sit_inside_each_level() {
    let p = plan(&host(&THIS_VM), None, &Sizing::unbounded());
    let got: Vec<(&str, usize, bool)> = p
        .levels
        .iter()
        .map(|l| (l.label, l.size, l.shared))
        .collect();
    assert_eq!(
        got,
        [
            ("L1", 16 * KIB, false),
            ("L2", 256 * KIB, false),
            ("L3", 8 * MIB, true),
            ("DRAM", 256 * MIB, true)
        ]
    );
    assert!(p.notes.is_empty());
    // A shared cache is split so the team stays inside it (L3); DRAM is not, so each
    // thread's set is past the caches even where each CPU has a last-level cache of its own.
    assert_cases(
        |(level, kernel, threads)| p.levels[level].metric(kernel, threads),
        &[
            ((0, Kernel::Read, 1), "read, L1 (16 KiB), 1 thread"),
            ((0, Kernel::Copy, 2), "copy, L1 (16 KiB each), 2 threads"),
            ((2, Kernel::Read, 2), "read, L3 (4 MiB each), 2 threads"),
            (
                (3, Kernel::NtWrite, 2),
                "nt-write, DRAM (256 MiB each), 2 threads",
            ),
        ],
    );
}

#[test]
fn max_size_caps_dram_and_drops_levels_above_it() {
    let p = plan(&host(&THIS_VM), Some(4 << 20), &Sizing::unbounded());
    let labels: Vec<&str> = p.levels.iter().map(|l| l.label).collect();
    assert_eq!(labels, ["L1", "L2"], "4 MiB is inside L3: no DRAM point");
    assert!(p.notes.iter().any(|(k, _)| *k == "dram_size_capped"));
    let p = plan(&host(&[]), None, &Sizing::unbounded());
    assert_eq!(
        p.levels,
        [Level {
            label: "DRAM",
            size: sizing::DRAM_FALLBACK,
            shared: true
        }]
    );
}

#[test]
fn kernel_codes_round_trip() {
    for k in Kernel::ALL {
        assert_eq!(Kernel::from_u8(k as u8), k);
    }
}

/// The Intel Xeon guest of issue 43: a 2 MiB L2 and a reported 480 MiB L3.
const INTEL_GUEST: [(u32, &str, u64, &str); 3] = [
    (1, "Data", 48 << 10, "0"),
    (2, "Unified", 2 << 20, "0"),
    (3, "Unified", 480 << 20, "0-1"),
];

/// The experiment's budget in one round of `profile`.
fn budget(profile: &crate::harness::Profile) -> std::time::Duration {
    profile
        .run_budget
        .mul_f64(MemBandwidth.time_share() / profile.rounds as f64)
}

/// Seconds the DRAM buffers of `sizing` take to write, at the assumed rate.
fn dram_touch(p: &Plan, sizing: &Sizing) -> f64 {
    p.levels
        .iter()
        .filter(|l| l.label == "DRAM")
        .map(|l| l.size as f64 * sizing.buffers() / sizing::TOUCH_RATE)
        .sum()
}

#[test]
fn a_reported_480_mib_l3_writes_no_more_than_the_budget_allows() {
    use crate::harness::Profile;
    for profile in [Profile::quick(), Profile::default_profile()] {
        for (dram_from, threads) in [(None, 2), (Some(96 << 20), 2), (Some(1 << 30), 64)] {
            let sizing = Sizing {
                budget: budget(&profile),
                dram_from,
                threads,
            };
            let p = plan(&host(&INTEL_GUEST), None, &sizing);
            let allowed = budget(&profile).as_secs_f64() * sizing::DRAM_SHARE;
            let seconds = dram_touch(&p, &sizing);
            assert!(
                seconds <= allowed,
                "{} {dram_from:?}: {seconds} s to write the DRAM buffers, {allowed} s allowed",
                profile.name
            );
            let dram = p.levels.iter().find(|l| l.label == "DRAM");
            let note = p.notes.iter().find(|(k, _)| *k == "dram_size_capped");
            match dram {
                // Measured where a stream is served by memory, never inside a cache.
                Some(l) => assert!(l.size as u64 > dram_from.unwrap_or(480 << 20) / 2),
                None => assert!(
                    note.is_some_and(|(_, t)| t.starts_with("DRAM not measured: the time budget")),
                    "{} {dram_from:?}: {:?}",
                    profile.name,
                    p.notes
                ),
            }
        }
    }
}

#[test]
fn dram_is_sized_from_where_mem_latency_saw_it_when_the_budget_allows() {
    let roomy = Sizing {
        budget: std::time::Duration::from_secs(3600),
        dram_from: Some(96 << 20),
        threads: 2,
    };
    let p = plan(&host(&INTEL_GUEST), None, &roomy);
    let dram = p.levels.iter().find(|l| l.label == "DRAM").expect("DRAM");
    assert_eq!(
        dram.size,
        4 * 96 * MIB,
        "4 x where mem.latency saw DRAM, not 8 x the reported 480 MiB"
    );
    // Without mem.latency in the run: 8 x the sysfs L3 as before, now cut by the budget.
    let quick = Sizing {
        dram_from: None,
        ..roomy
    };
    let p = plan(&host(&THIS_VM), None, &quick);
    let dram = p.levels.iter().find(|l| l.label == "DRAM").expect("DRAM");
    assert_eq!(dram.size, 256 * MIB);
}
