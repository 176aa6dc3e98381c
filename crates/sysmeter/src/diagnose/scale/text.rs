//! Numbers in `scale`'s findings and metric notes: durations, sizes and fitted formulas,
//! three significant digits. (`diagnose` may not depend on `report`, whose formatter the
//! tables use; these match it closely.)
//!
//! Pure.

use crate::stats::fit::{Class, ClassFit};

/// Three significant digits; exponent form below 0.001.
pub fn sig3(x: f64) -> String {
    let a = x.abs();
    if !x.is_finite() {
        return format!("{x}");
    }
    if a == 0.0 {
        return "0".into();
    }
    if a < 1e-3 {
        return format!("{x:.2e}");
    }
    let digits = (2 - a.log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

/// A duration: `412 ns`, `1.24 µs`, `3.51 ms`, `2.00 s`.
pub fn duration(ns: f64) -> String {
    let (v, unit) = match ns.abs() {
        a if a >= 1e9 => (ns / 1e9, "s"),
        a if a >= 1e6 => (ns / 1e6, "ms"),
        a if a >= 1e3 => (ns / 1e3, "µs"),
        _ => (ns, "ns"),
    };
    format!("{} {unit}", sig3(v))
}

/// A size or ratio: whole numbers below 10 000 as they are, else `12.3k`, `4.19M`, `1.07G`.
pub fn count(x: f64) -> String {
    let a = x.abs();
    if a < 10_000.0 {
        return if x.fract() == 0.0 {
            format!("{x:.0}")
        } else {
            sig3(x)
        };
    }
    let (v, unit) = match a {
        a if a >= 1e12 => (x / 1e12, "T"),
        a if a >= 1e9 => (x / 1e9, "G"),
        a if a >= 1e6 => (x / 1e6, "M"),
        _ => (x / 1e3, "k"),
    };
    format!("{}{unit}", sig3(v))
}

/// A fraction as a percentage: `1.4%`, `23%`.
pub fn percent(f: f64) -> String {
    let p = f * 100.0;
    if p.abs() >= 10.0 {
        format!("{p:.0}%")
    } else {
        format!("{p:.1}%")
    }
}

/// The fitted formula: `12.3 ns·N log N + 1.20 ms`, `5.00 ms` for O(1).
pub fn formula(f: &ClassFit) -> String {
    if f.class == Class::Constant {
        return duration(f.a);
    }
    let growth = format!("{}·{}", duration(f.a), f.class.term());
    if f.b > 0.0 {
        format!("{growth} + {}", duration(f.b))
    } else {
        growth
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_naturally() {
        assert_eq!(duration(412.0), "412 ns");
        assert_eq!(duration(1240.0), "1.24 µs");
        assert_eq!(duration(3.51e6), "3.51 ms");
        assert_eq!(duration(0.000123), "1.23e-4 ns");
        assert_eq!(count(4096.0), "4096");
        assert_eq!(count(4_194_304.0), "4.19M");
        assert_eq!(count(4.56789), "4.57");
        assert_eq!(percent(0.0142), "1.4%");
        let f = ClassFit {
            class: Class::NLogN,
            a: 12.3,
            b: 1.2e6,
            nrms: 0.01,
        };
        assert_eq!(formula(&f), "12.3 ns·N log N + 1.20 ms");
        let c = ClassFit {
            class: Class::Constant,
            a: 5e6,
            b: 0.0,
            nrms: 0.01,
        };
        assert_eq!(formula(&c), "5.00 ms");
    }
}
