//! Chart axes: the range, linear or logarithmic mapping, and tick positions and labels.
//!
//! Sizes on a log axis use base 2 (ticks at 4 KiB, 16 KiB, …, as caches are sized), every
//! other unit base 10 (decades, with 2× and 5× ticks when the range is short). Linear axes
//! start at zero for positive data, so bar lengths and bandwidths compare honestly.
//! An axis holds only the values a report can show (`model::showable`: zero, or a magnitude
//! from 1e-300 to 1e300), so both ends, every tick and every label stay finite and few
//! whatever a record holds; the page says what it left out.
//! Pure; depends on `model::Unit`, `model::showable` and `model::units` for labels.

use crate::model::Unit;
use crate::model::showable::showable;
use crate::model::units;

/// Largest/smallest value from which [`ScaleMode::Auto`] chooses a log axis.
pub const AUTO_LOG_SPAN: f64 = 30.0;

/// How to choose the mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScaleMode {
    /// Logarithmic when every value is positive and they span at least [`AUTO_LOG_SPAN`].
    Auto,
    /// Logarithmic (non-positive values are pinned to the low end).
    Log,
    /// Linear.
    Linear,
}

/// A fitted axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    lo: f64,
    hi: f64,
    /// `Some(base)` for a log axis.
    log_base: Option<f64>,
    unit: Unit,
}

impl Axis {
    /// An axis that holds every showable value of `values` (module docs), in `unit`.
    pub fn fit(values: &[f64], unit: Unit, mode: ScaleMode) -> Axis {
        let finite: Vec<f64> = values.iter().copied().filter(|v| showable(*v)).collect();
        let positive: Vec<f64> = finite.iter().copied().filter(|v| *v > 0.0).collect();
        let min = positive.iter().copied().fold(f64::INFINITY, f64::min);
        let max = positive.iter().copied().fold(0.0, f64::max);
        let all_positive = !finite.is_empty() && positive.len() == finite.len();
        let log = match mode {
            ScaleMode::Log => !positive.is_empty(),
            ScaleMode::Linear => false,
            ScaleMode::Auto => all_positive && max / min >= AUTO_LOG_SPAN,
        };
        if log {
            let base = if unit == Unit::Bytes { 2.0 } else { 10.0 };
            // Both ends within the showable range: 1e-300 to 1e300 rounded out by one power
            // (a subnormal minimum once put the axis at 0, a maximum of 1.7e308 at infinity,
            // and either asked for 2^31 ticks).
            let lo_exp = min.log(base).floor();
            let hi_exp = max.log(base).ceil().max(lo_exp + 1.0);
            return Axis {
                lo: base.powf(lo_exp),
                hi: base.powf(hi_exp),
                log_base: Some(base),
                unit,
            };
        }
        linear(&finite, unit)
    }

    /// Whether the axis is logarithmic.
    pub fn is_log(&self) -> bool {
        self.log_base.is_some()
    }

    /// Position of `v` from 0 (low end) to 1 (high end), clamped to the axis.
    pub fn frac(&self, v: f64) -> f64 {
        let f = match self.log_base {
            Some(_) if v <= 0.0 => 0.0,
            Some(_) => (v.ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln()),
            None => (v - self.lo) / (self.hi - self.lo),
        };
        if f.is_finite() {
            f.clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// Tick values, low to high.
    pub fn ticks(&self) -> Vec<f64> {
        match self.log_base {
            Some(base) => log_ticks(self.lo, self.hi, base),
            None => {
                let step = nice_step(self.hi - self.lo);
                // A step the range cannot be divided by (an axis built by hand) gives no
                // ticks rather than billions of them.
                let count = ((self.hi - self.lo) / step).round();
                if !(count.is_finite() && count <= MAX_TICKS) {
                    return Vec::new();
                }
                let count = count as usize;
                (0..=count).map(|i| self.lo + step * i as f64).collect()
            }
        }
    }

    /// A tick label: the value in the axis unit, without trailing zeros (`20 GB/s`).
    pub fn label(&self, v: f64) -> String {
        tick_label(v, self.unit)
    }
}

/// A linear axis from zero (or the negative minimum) to a rounded maximum.
fn linear(values: &[f64], unit: Unit) -> Axis {
    let min = values.iter().copied().fold(0.0, f64::min);
    let mut max = values.iter().copied().fold(0.0, f64::max);
    // An empty or degenerate range (all equal, or so small that its step underflows: a
    // median of 5e-324 in a hostile record) becomes 1 wide.
    if !(max - min).is_normal() || max <= min {
        max = min + 1.0;
    }
    let step = nice_step(max - min);
    Axis {
        lo: (min / step).floor() * step,
        hi: (max / step).ceil() * step,
        log_base: None,
        unit,
    }
}

/// More ticks than any axis of ours has; a count above it means a degenerate axis.
const MAX_TICKS: f64 = 100.0;

/// A 1, 2 or 5 × 10^k step giving about five intervals over `span`.
fn nice_step(span: f64) -> f64 {
    let raw = span / 5.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * magnitude)
}

/// Powers of `base` from `lo` to `hi`, thinned to at most about eight; decades get 2× and
/// 5× ticks in between when there are at most two of them.
fn log_ticks(lo: f64, hi: f64, base: f64) -> Vec<f64> {
    let lo_exp = lo.log(base).round() as i32;
    let hi_exp = hi.log(base).round() as i32;
    let spans = (hi_exp - lo_exp).max(1);
    let stride = (spans + 7) / 8;
    let mut ticks: Vec<f64> = (lo_exp..=hi_exp)
        .filter(|e| (e - lo_exp) % stride == 0)
        .map(|e| base.powi(e))
        .collect();
    if base == 10.0 && spans <= 2 {
        let extra: Vec<f64> = ticks
            .iter()
            .flat_map(|t| [t * 2.0, t * 5.0])
            .filter(|t| *t < hi)
            .collect();
        ticks.extend(extra);
        ticks.sort_by(f64::total_cmp);
    }
    ticks
}

/// The most characters of a tick label's number before it is written as `1.00e300`.
const MAX_LABEL_DIGITS: usize = 12;

/// `units::value` with trailing zeros of the number removed: `20.0 GB/s` → `20 GB/s`.
pub fn tick_label(v: f64, unit: Unit) -> String {
    let text = units::value(v, unit);
    let (number, suffix) = match text.find(' ') {
        Some(i) => text.split_at(i),
        None => (text.as_str(), ""),
    };
    // A number of more digits than a tick has room for (a huge value in a small unit) in
    // scientific notation, so a label stays short whatever the axis holds.
    if number.len() > MAX_LABEL_DIGITS
        && let Ok(x) = number.parse::<f64>()
    {
        return format!("{x:.2e}{suffix}");
    }
    let number = if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    };
    format!("{number}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degenerate_values_give_bounded_axes() {
        for mode in [ScaleMode::Log, ScaleMode::Linear, ScaleMode::Auto] {
            for values in [
                &[5e-324][..],
                &[5e-324, 1e-300],
                &[0.0, 5e-324],
                &[1e300, 5e-324],
                &[1.7e308, 12.0, 15.0],
                &[f64::MAX, -f64::MAX, 3.0],
                &[f64::NAN, f64::INFINITY, 2.0, 40.0],
                &[1e300, 1e-300],
                &[-1e300, 1e300],
            ] {
                let a = Axis::fit(values, Unit::Ns, mode);
                let ticks = a.ticks();
                assert!(
                    ticks.len() <= 100,
                    "{mode:?} {values:?}: {} ticks",
                    ticks.len()
                );
                assert!(a.lo.is_finite() && a.hi.is_finite() && a.hi > a.lo, "{a:?}");
                assert!(
                    a.hi <= 1e301 && a.lo >= -1e301,
                    "{mode:?} {values:?}: {a:?}"
                );
                assert!(values.iter().all(|v| a.frac(*v).is_finite()));
                for t in &ticks {
                    assert!(t.is_finite() && a.label(*t).len() < 40, "{}", a.label(*t));
                }
            }
        }
    }

    #[test]
    fn byte_axes_are_log2_with_size_ticks() {
        let a = Axis::fit(&[4096.0, 134_217_728.0], Unit::Bytes, ScaleMode::Auto);
        assert!(a.is_log());
        assert_eq!((a.lo, a.hi), (4096.0, 134_217_728.0));
        let labels: Vec<String> = a.ticks().iter().map(|t| a.label(*t)).collect();
        assert_eq!(labels.first().map(String::as_str), Some("4 KiB"));
        assert!(labels.contains(&"1 MiB".to_string()), "{labels:?}");
        assert!(labels.len() <= 9, "{labels:?}");
        assert!((a.frac(65536.0) - 4.0 / 15.0).abs() < 1e-9);
    }

    #[test]
    fn short_log_ranges_get_intermediate_ticks() {
        let a = Axis::fit(&[1.3, 130.0], Unit::Ns, ScaleMode::Log);
        assert_eq!((a.lo, a.hi), (1.0, 1000.0));
        let b = Axis::fit(&[2.0, 60.0], Unit::Ns, ScaleMode::Log);
        assert_eq!(b.ticks(), vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]);
    }

    #[test]
    fn auto_is_linear_from_zero_for_narrow_or_non_positive_data() {
        let a = Axis::fit(&[12.0e9, 80.0e9], Unit::BytesPerSec, ScaleMode::Auto);
        assert!(!a.is_log());
        assert_eq!(a.lo, 0.0);
        assert!(a.hi >= 80.0e9 && a.hi <= 100.0e9);
        assert_eq!(a.label(20.0e9), "20 GB/s");
        let z = Axis::fit(&[0.0, 0.0], Unit::Ns, ScaleMode::Auto);
        assert!(!z.is_log() && z.hi > z.lo);
        let mixed = Axis::fit(&[0.0, 1.0, 1000.0], Unit::Ns, ScaleMode::Auto);
        assert!(!mixed.is_log());
    }

    #[test]
    fn positions_clamp_and_log_pins_non_positive_values_low() {
        let a = Axis::fit(&[1.0, 100.0], Unit::Ns, ScaleMode::Log);
        assert_eq!(a.frac(0.0), 0.0);
        assert_eq!(a.frac(1e9), 1.0);
        assert!((a.frac(10.0) - 0.5).abs() < 1e-9);
        let l = Axis::fit(&[0.0, 10.0], Unit::Count, ScaleMode::Linear);
        assert!((l.frac(5.0) - 0.5).abs() < 1e-9);
    }

    #[test]
    fn tick_labels_drop_trailing_zeros_only_after_a_point() {
        assert_eq!(tick_label(2.5e3, Unit::Ns), "2.5 µs");
        assert_eq!(tick_label(100.0, Unit::Ns), "100 ns");
        assert_eq!(tick_label(1000.0, Unit::Count), "1000");
        assert_eq!(tick_label(1e300, Unit::Ns), "1.00e291 s");
    }
}
