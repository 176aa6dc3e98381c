//! Where a detected level ends, as a range, and whether a repeated, finer measurement
//! confirms it: the second stage of cache detection after [`super::detect`].
//!
//! The curve here is one value per working-set size, in any unit that does not depend on
//! the core clock's drift (`mem.latency` passes core cycles per load: ns × the probe's GHz
//! taken just before that point), and each value is the *best* (lowest) of the point's
//! repeated measurements: interference from other tenants only ever adds latency.
//!
//! For the boundary between level `a` (latency `A`) and the next level (latency `B`, step
//! `r = B / A`), in log space:
//! - *clearly beyond*: at least the geometric middle `A·√r`; the range's upper end `hi` is the
//!   first size from which **every** larger size up to the end of the next level is clearly
//!   beyond (the step persists; a one-point bump does not);
//! - *clearly inside*: at most `A·r^¼` (a quarter of the step) in the size's best
//!   measurement; the range's lower end `lo` is the last such size below `hi`. One good
//!   measurement is enough: a chain larger than what the cache holds for us cannot be
//!   measured faster than its misses allow, while another tenant evicting our lines (the
//!   last-level cache is shared with the other CPUs and, in a VM, with other guests) only
//!   ever makes it slower — requiring two good measurements moved the L3 end down by up to
//!   2× in runs where a neighbour was busy;
//! - the boundary is **confirmed** when `lo` and `hi` exist, both were re-measured in the
//!   fine pass, the jump — median of up to 3 values from `hi` on ÷ median of up to 3 values
//!   up to `lo` — is at least [`ConfirmConfig::min_jump`] (1.5×, the step that makes a
//!   level), and `hi / lo` is at most [`ConfirmConfig::max_width`] (4×, two octaves).
//!
//! [`windows`] gives, from a coarse curve, the size ranges to re-measure finely: from the
//! coarse neighbour below `lo` to the neighbour above `hi` (or the next level's first size).
//!
//! Pure: depends on nothing but the standard library and [`super`].

use super::{Hierarchy, median};

/// One point of the curve the boundaries are judged on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CurvePoint {
    /// Working-set size.
    pub bytes: u64,
    /// Best (lowest) of the point's measurements, in a clock-independent unit.
    pub value: f64,
    /// Whether the point was measured in the fine, repeated pass around a candidate.
    pub refined: bool,
}

/// Knobs of [`confirm`]; [`Default`] gives the documented rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConfirmConfig {
    /// Smallest jump (beyond ÷ inside) that confirms a boundary.
    pub min_jump: f64,
    /// Widest range (hi ÷ lo) still reported as a boundary.
    pub max_width: f64,
}

impl Default for ConfirmConfig {
    fn default() -> ConfirmConfig {
        ConfirmConfig {
            min_jump: 1.5,
            max_width: 4.0,
        }
    }
}

/// Why a candidate boundary was not confirmed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Unconfirmed {
    /// No size after the candidate stays clearly beyond it up to the next level's end.
    NoPersistentStep,
    /// No size before the step is clearly inside the level.
    NothingInside,
    /// The range's ends were not both re-measured in the fine pass.
    NotRemeasured,
    /// The jump across the range is below the threshold (the jump found).
    SmallJump(f64),
    /// The range is wider than the limit (hi ÷ lo).
    TooWide(f64),
}

/// Where level `level` ends, and whether that is confirmed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Boundary {
    /// Index of the level in [`Hierarchy::levels`].
    pub level: usize,
    /// Last size clearly inside the level.
    pub lo_bytes: Option<u64>,
    /// First size from which the curve stays clearly beyond it.
    pub hi_bytes: Option<u64>,
    /// Beyond ÷ inside (median of up to 3 values each side); 0 when not measurable.
    pub jump: f64,
    /// `None` when confirmed.
    pub unconfirmed: Option<Unconfirmed>,
}

impl Boundary {
    /// Geometric middle of the range, when it has both ends.
    pub fn middle(&self) -> Option<u64> {
        let (lo, hi) = (self.lo_bytes?, self.hi_bytes?);
        Some(((lo as f64) * (hi as f64)).sqrt().round() as u64)
    }
}

/// Index of the first point with `bytes >= size` (or the length).
fn index_of(curve: &[CurvePoint], size: u64) -> usize {
    curve.partition_point(|p| p.bytes < size)
}

/// `(lo, hi)` indices for the step from latency `a` to `b`, searching from index `from` and
/// requiring persistence up to index `until` (inclusive). The step ratio
/// `r` is at least `min_step`: a claimed next level no higher than this one still needs a
/// real step to be placed.
fn range(
    curve: &[CurvePoint],
    (from, until): (usize, usize),
    (a, b): (f64, f64),
    min_step: f64,
) -> (Option<usize>, Option<usize>) {
    let r = (b / a).max(min_step);
    let beyond = a * r.sqrt();
    let inside = a * r.powf(0.25);
    let until = until.min(curve.len().saturating_sub(1));
    let hi = (from..=until).find(|&i| curve[i..=until].iter().all(|p| p.value >= beyond));
    let lo_end = hi.unwrap_or(until + 1);
    let lo = (from..lo_end).rev().find(|&i| curve[i].value <= inside);
    (lo, hi)
}

/// The boundaries of every level but the last, with their ranges and confirmation.
pub fn confirm(h: &Hierarchy, curve: &[CurvePoint], cfg: &ConfirmConfig) -> Vec<Boundary> {
    let n = h.levels.len();
    (0..n.saturating_sub(1))
        .filter(|&k| h.levels[k].ends_at_bytes.is_some())
        .map(|k| {
            let (this, next) = (&h.levels[k], &h.levels[k + 1]);
            let from = index_of(curve, this.first_size);
            let until = index_of(curve, next.last_size);
            let levels = (this.latency_ns, next.latency_ns);
            let (lo, hi) = range(curve, (from, until), levels, cfg.min_jump);
            judge(k, curve, lo, hi, cfg)
        })
        .collect()
}

fn judge(
    level: usize,
    curve: &[CurvePoint],
    lo: Option<usize>,
    hi: Option<usize>,
    cfg: &ConfirmConfig,
) -> Boundary {
    let mut b = Boundary {
        level,
        lo_bytes: lo.map(|i| curve[i].bytes),
        hi_bytes: hi.map(|i| curve[i].bytes),
        jump: 0.0,
        unconfirmed: None,
    };
    let (lo, hi) = match (lo, hi) {
        (_, None) => {
            b.unconfirmed = Some(Unconfirmed::NoPersistentStep);
            return b;
        }
        (None, Some(_)) => {
            b.unconfirmed = Some(Unconfirmed::NothingInside);
            return b;
        }
        (Some(lo), Some(hi)) => (lo, hi),
    };
    let values = |r: &[CurvePoint]| r.iter().map(|p| p.value).collect::<Vec<f64>>();
    let below = values(&curve[lo.saturating_sub(2)..=lo]);
    let above = values(&curve[hi..(hi + 3).min(curve.len())]);
    b.jump = median(&above) / median(&below);
    let width = curve[hi].bytes as f64 / curve[lo].bytes as f64;
    b.unconfirmed = if !(curve[lo].refined && curve[hi].refined) {
        Some(Unconfirmed::NotRemeasured)
    } else if b.jump.is_nan() || b.jump < cfg.min_jump {
        Some(Unconfirmed::SmallJump(b.jump))
    } else if width > cfg.max_width {
        Some(Unconfirmed::TooWide(width))
    } else {
        None
    };
    b
}

/// Size ranges to re-measure finely around each candidate boundary of a coarse curve:
/// from the coarse size below the range's `lo` to the one above its `hi` (without a `hi`,
/// to the next level's first size), merged where they overlap, ascending.
pub fn windows(h: &Hierarchy, curve: &[CurvePoint]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for b in confirm(h, curve, &ConfirmConfig::default()) {
        let Some(end) = h.levels[b.level].ends_at_bytes else {
            continue;
        };
        let lo = b.lo_bytes.unwrap_or(end).min(end);
        let next_first = h.levels[b.level + 1].first_size;
        let hi = b.hi_bytes.unwrap_or(next_first).max(end);
        let below = curve
            .iter()
            .rev()
            .find(|p| p.bytes < lo)
            .map_or(lo, |p| p.bytes);
        let above = curve.iter().find(|p| p.bytes > hi).map_or(hi, |p| p.bytes);
        match out.last_mut() {
            Some(w) if below <= w.1 => w.1 = w.1.max(above),
            _ => out.push((below, above)),
        }
    }
    out
}

/// Whether a cache size agrees with a boundary range: inside it, or adjacent — within a
/// factor `adjacent` (one coarse step, 1.25 for 4 points per octave) outside either end.
pub fn range_agrees(lo: u64, hi: u64, size: u64, adjacent: f64) -> bool {
    let s = size as f64;
    s >= lo as f64 / adjacent && s <= hi as f64 * adjacent
}

/// Latency of each level on another curve of the same sizes (for example ns where the
/// levels were found on cycles): the median over the level's sizes, the last level's over
/// the last 3 points, as [`super::detect`] does.
pub fn latencies_on(h: &Hierarchy, other: &[(u64, f64)]) -> Vec<f64> {
    let n = h.levels.len();
    h.levels
        .iter()
        .enumerate()
        .map(|(k, l)| {
            let v: Vec<f64> = if k + 1 == n {
                let from = other.len().saturating_sub(3);
                other[from..].iter().map(|p| p.1).collect()
            } else {
                other
                    .iter()
                    .filter(|p| p.0 >= l.first_size && p.0 <= l.last_size)
                    .map(|p| p.1)
                    .collect()
            };
            median(&v)
        })
        .collect()
}
