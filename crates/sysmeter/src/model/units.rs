//! The one set of number formatters for people: times with 3 significant digits in
//! ns/µs/ms/s, rates in decimal MB/s-style units, sizes in binary KiB-style units, counts,
//! cycles as `~123 cyc`, percentages. Every renderer, finding and diagnosis uses these, so a
//! number reads the same everywhere.
//!
//! Pure: strings from numbers; depends only on [`Unit`]. The machine-readable formats (JSON,
//! CSV) never use these: they carry the raw numbers.

use super::run::Unit;

/// `x` with 3 significant digits (more integer digits are kept, never replaced by zeros):
/// `0.412`, `51.3`, `1.24`, `999`, `1234`; below 0.001 in exponent form (`1.23e-4`), so a
/// tiny fitted coefficient keeps its digits.
pub fn sig3(x: f64) -> String {
    if !x.is_finite() {
        return non_finite(x);
    }
    if x != 0.0 && x.abs() < 1e-3 {
        return format!("{x:.2e}");
    }
    let decimals = sig3_decimals(x.abs());
    let rounded = round_to(x, decimals);
    // Rounding can carry into the next decade (9.996 → 10.00); re-derive the decimals from
    // the rounded value so the result keeps 3 significant digits (10.0).
    let decimals = decimals.min(sig3_decimals(rounded.abs()));
    if rounded == 0.0 {
        return "0".to_string();
    }
    format!("{rounded:.decimals$}")
}

/// Decimals that give 3 significant digits for a magnitude `a`.
fn sig3_decimals(a: f64) -> usize {
    if a == 0.0 || a >= 100.0 {
        return 0;
    }
    (2 - a.log10().floor() as i32).clamp(0, 6) as usize
}

fn round_to(x: f64, decimals: usize) -> f64 {
    let scale = 10f64.powi(decimals as i32);
    (x * scale).round() / scale
}

fn non_finite(x: f64) -> String {
    if x.is_nan() {
        "n/a".to_string()
    } else if x > 0.0 {
        "∞".to_string()
    } else {
        "−∞".to_string()
    }
}

/// Formats `x` in the largest of `units` (each `base` times the previous) that keeps the
/// number ≥ 1, with 3 significant digits, moving up a unit when rounding reaches `base`
/// (999.7 ns is `1.00 µs`, not `1000 ns`).
fn scaled(x: f64, base: f64, units: &[&str], integers_exact: bool) -> String {
    if !x.is_finite() {
        return non_finite(x);
    }
    let mut value = x;
    let mut index = 0;
    while index + 1 < units.len() && value.abs() >= base {
        value /= base;
        index += 1;
    }
    if index + 1 < units.len() && round_to(value.abs(), sig3_decimals(value.abs())) >= base {
        value /= base;
        index += 1;
    }
    let number = if integers_exact && value.fract() == 0.0 {
        format!("{value:.0}")
    } else {
        sig3(value)
    };
    match units[index] {
        "" => number,
        unit => format!("{number} {unit}"),
    }
}

/// A duration in nanoseconds: `0.412 ns`, `51.3 ns`, `1.24 µs`, `3.51 ms`, `2.00 s`.
pub fn duration_ns(ns: f64) -> String {
    scaled(ns, 1000.0, &["ns", "µs", "ms", "s"], false)
}

/// A rate in bytes per second, decimal units as disks and networks are quoted: `812 MB/s`,
/// `12.4 GB/s`.
pub fn rate(bytes_per_sec: f64) -> String {
    scaled(
        bytes_per_sec,
        1000.0,
        &["B/s", "kB/s", "MB/s", "GB/s", "TB/s"],
        false,
    )
}

/// A size in bytes, binary units as memory and caches are quoted: `48 KiB`, `1.50 MiB`.
pub fn bytes(b: f64) -> String {
    scaled(b, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB", "PiB"], true)
}

/// A whole number of bytes (a file, cache or memory size): [`bytes`] of it.
pub fn size(b: u64) -> String {
    bytes(b as f64)
}

/// A plain count or ratio: `9.12`, `512`, `12.3k`, `4.00M` (whole numbers below 10 000 are
/// printed as they are).
pub fn count(x: f64) -> String {
    if x.abs() < 10_000.0 && x.fract() == 0.0 {
        return format!("{x:.0}");
    }
    if x.abs() < 10_000.0 {
        return sig3(x);
    }
    scaled(x, 1000.0, &["", "k", "M", "G", "T"], false).replace(' ', "")
}

/// A value in `unit`.
pub fn value(x: f64, unit: Unit) -> String {
    match unit {
        Unit::Ns => duration_ns(x),
        Unit::BytesPerSec => rate(x),
        Unit::Bytes => bytes(x),
        Unit::Count => count(x),
    }
}

/// An interval in `unit`, naming the unit once when both ends share it: `50.1–52.3 ns`,
/// `998 ns–1.01 µs`.
///
/// An interval narrower than the last digit shown gets the digits that tell its ends apart
/// (`1.213–1.214 ns`, not `1.21–1.21 ns`, which reads as one value). An interval whose ends
/// are one value (every round gave the same median) is that value: `3.69 ns`, never
/// `3.69–3.69 ns`.
pub fn range(lo: f64, hi: f64, unit: Unit) -> String {
    let (a, b) = (value(lo, unit), value(hi, unit));
    if lo == hi {
        return b;
    }
    if a == b
        && lo != hi
        && let Some(fine) = fine_range(lo, hi, &b)
    {
        return fine;
    }
    match (a.rsplit_once(' '), b.rsplit_once(' ')) {
        (Some((a_num, a_unit)), Some((_, b_unit))) if a_unit == b_unit => format!("{a_num}–{b}"),
        _ => format!("{a}–{b}"),
    }
}

/// `lo–hi` in the display unit of `shown` (how `hi` reads), with one decimal more than it
/// until the ends differ (at most 6); `None` when `shown` is not a plain number and unit.
fn fine_range(lo: f64, hi: f64, shown: &str) -> Option<String> {
    let (number, suffix) = shown.rsplit_once(' ').unwrap_or((shown, ""));
    let n: f64 = number.parse().ok().filter(|n: &f64| *n != 0.0)?;
    let base: f64 = if suffix.ends_with("iB") {
        1024.0
    } else {
        1000.0
    };
    let scale = base.powi((hi / n).log(base).round() as i32);
    let shown_decimals = number.split('.').nth(1).map_or(0, str::len);
    (shown_decimals + 1..=6).find_map(|d| {
        let (a, b) = (format!("{:.d$}", lo / scale), format!("{:.d$}", hi / scale));
        (a != b).then(|| format!("{a}–{b} {suffix}").trim_end().to_string())
    })
}

/// Cycles rounded to 3 significant digits: `~0.412 cyc`, `~51.3 cyc`, `~1230 cyc`.
pub fn cycles(c: f64) -> String {
    if !c.is_finite() {
        return format!("~{} cyc", non_finite(c));
    }
    if c.abs() < 1000.0 {
        return format!("~{} cyc", sig3(c));
    }
    let step = 10f64.powi(c.abs().log10().floor() as i32 - 2);
    format!("~{:.0} cyc", (c / step).round() * step)
}

/// A fraction as a percentage: `12%`, `3.4%`.
pub fn percent(fraction: f64) -> String {
    let p = fraction * 100.0;
    if !p.is_finite() {
        return format!("{}%", non_finite(p));
    }
    if p.abs() >= 10.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::assert_cases;

    #[test]
    fn durations_have_three_significant_digits() {
        assert_cases(
            duration_ns,
            &[
                (0.4121, "0.412 ns"),
                (51.34, "51.3 ns"),
                (1240.0, "1.24 µs"),
                (3_512_000.0, "3.51 ms"),
                (2.0e9, "2.00 s"),
                (999.7, "1.00 µs"),
                (9.996, "10.0 ns"),
                (0.0, "0 ns"),
                (-3.0, "-3.00 ns"),
                (f64::NAN, "n/a"),
                (0.000123, "1.23e-4 ns"),
            ],
        );
    }

    #[test]
    fn rates_sizes_counts_cycles_percent() {
        assert_cases(rate, &[(812.4e6, "812 MB/s"), (12.44e9, "12.4 GB/s")]);
        assert_cases(
            bytes,
            &[
                (49152.0, "48 KiB"),
                (1.5 * 1024.0 * 1024.0, "1.50 MiB"),
                (512.0, "512 B"),
            ],
        );
        assert_cases(count, &[(9.123, "9.12"), (12_345.0, "12.3k")]);
        assert_cases(
            cycles,
            &[
                (123.4, "~123 cyc"),
                (1234.0, "~1230 cyc"),
                (0.4121, "~0.412 cyc"),
            ],
        );
        assert_cases(percent, &[(0.123, "12%"), (0.034, "3.4%")]);
    }

    #[test]
    fn a_range_of_one_value_is_that_value() {
        assert_eq!(range(3.69, 3.69, Unit::Ns), "3.69 ns");
    }

    #[test]
    fn ranges_name_the_unit_once() {
        assert_eq!(range(50.12, 52.34, Unit::Ns), "50.1–52.3 ns");
        assert_eq!(range(998.0, 1012.0, Unit::Ns), "998 ns–1.01 µs");
        assert_eq!(range(1.0, 2.0, Unit::Count), "1–2");
        assert_eq!(count(512.0), "512");
        // Narrower than the last digit: the digits that tell the ends apart.
        assert_eq!(range(1.2131, 1.2142, Unit::Ns), "1.213–1.214 ns");
        assert_eq!(range(2.0e6, 2.0004e6, Unit::Bytes), "1.907–1.908 MiB");
        assert_eq!(range(5.0, 5.0, Unit::Ns), "5.00 ns");
    }

    #[test]
    fn whole_sizes() {
        assert_cases(
            size,
            &[
                (0, "0 B"),
                (512, "512 B"),
                (32 << 10, "32 KiB"),
                (32 << 20, "32 MiB"),
                (24_683_656 * 1024, "23.5 GiB"),
                (256 << 30, "256 GiB"),
                (u64::MAX, "16384 PiB"),
            ],
        );
    }
}
