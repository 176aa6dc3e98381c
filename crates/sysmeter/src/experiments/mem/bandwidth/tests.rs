//! Unit tests of the size plan and naming of mem.bandwidth.

use super::*;
use crate::model::MemoryInfo;

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
    let p = plan(&host(&THIS_VM), None);
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
    assert_eq!(
        p.levels[0].metric(Kernel::Read, 1),
        "read, L1 (16 KiB), 1 thread"
    );
    assert_eq!(
        p.levels[0].metric(Kernel::Copy, 2),
        "copy, L1 (16 KiB each), 2 threads"
    );
    assert_eq!(
        p.levels[3].metric(Kernel::NtWrite, 2),
        "nt-write, DRAM (128 MiB each), 2 threads"
    );
}

#[test]
fn max_size_caps_dram_and_drops_levels_above_it() {
    let p = plan(&host(&THIS_VM), Some(4 << 20));
    let labels: Vec<&str> = p.levels.iter().map(|l| l.label).collect();
    assert_eq!(labels, ["L1", "L2"], "4 MiB is inside L3: no DRAM point");
    assert!(p.notes.iter().any(|(k, _)| *k == "dram_size_capped"));
    let p = plan(&host(&[]), None);
    assert_eq!(
        p.levels,
        [Level {
            label: "DRAM",
            size: DRAM_FALLBACK,
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
