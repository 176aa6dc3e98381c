//! Parser of `/proc/meminfo` (MemTotal, MemAvailable, SwapTotal, SwapFree).
//!
//! Pure: text in, [`MemoryInfo`] out. No file access; depends only on the host data types.

use crate::model::MemoryInfo;

/// Value of one `Key:   123 kB` line, in bytes. The kernel always prints kB (KiB) for
/// sizes; a line without a unit is taken as a plain count and returned unscaled.
pub fn meminfo_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (k, rest) = line.split_once(':')?;
        if k.trim() != key {
            return None;
        }
        let mut words = rest.split_whitespace();
        let value = words.next()?.parse::<u64>().ok()?;
        match words.next() {
            Some(unit) if unit.eq_ignore_ascii_case("kB") => Some(value.saturating_mul(1024)),
            Some(_) => None,
            None => Some(value),
        }
    })
}

/// Parses the text of /proc/meminfo. Missing keys read as 0; `speed_mts` is left unknown
/// (meminfo does not carry it). Swap used is SwapTotal − SwapFree.
pub fn parse_meminfo(text: &str) -> MemoryInfo {
    let value = |key| meminfo_value(text, key).unwrap_or(0);
    let swap_total = value("SwapTotal");
    MemoryInfo {
        total_bytes: value("MemTotal"),
        available_bytes: value("MemAvailable"),
        swap_total_bytes: swap_total,
        swap_used_bytes: swap_total.saturating_sub(value("SwapFree")),
        speed_mts: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KVM: &str = include_str!("../../tests/fixtures/host/x86_64-kvm/meminfo");
    const METAL: &str = include_str!("../../tests/fixtures/host/x86_64-metal/meminfo");

    #[test]
    fn this_kvm_guest() {
        let m = parse_meminfo(KVM);
        assert_eq!(m.total_bytes, 24_683_656 * 1024);
        assert_eq!(m.available_bytes, 24_334_892 * 1024);
        assert_eq!((m.swap_total_bytes, m.swap_used_bytes), (0, 0));
        assert_eq!(m.speed_mts, None);
    }

    #[test]
    fn swap_in_use() {
        let m = parse_meminfo(METAL);
        assert_eq!(m.total_bytes, 32_765_604 * 1024);
        assert_eq!(m.swap_total_bytes, 2_097_148 * 1024);
        assert_eq!(m.swap_used_bytes, 512 * 1024 * 1024);
    }

    #[test]
    fn malformed_lines_are_ignored() {
        let m = parse_meminfo("MemTotal: lots kB\nSwapFree: 10 kB\nMemAvailable 5 kB\n");
        assert_eq!(m, MemoryInfo::default());
        assert_eq!(parse_meminfo(""), MemoryInfo::default());
        assert_eq!(
            meminfo_value("HugePages_Total:       4\n", "HugePages_Total"),
            Some(4)
        );
        assert_eq!(meminfo_value("X: 4 MB\n", "X"), None);
    }
}
