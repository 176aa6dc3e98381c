//! Memory-hierarchy detection from a latency curve (working-set size → load latency), and
//! the cross-check of the detected levels against the cache sizes the kernel reports.
//!
//! The rule, in log2(size) × ln(latency) space, after a median-of-3 filter that removes
//! single-point spikes:
//! 1. Split the curve greedily from the left into *runs*: a point joins the current run
//!    while its latency is within `tolerance` (±15%) of the run's median. A run spanning at
//!    least `min_octaves` (0.75 octave) of sizes is a *plateau*; shorter runs are
//!    transitions.
//! 2. Neighbouring plateaus whose latencies differ by less than `min_step` (1.5×) are the
//!    same level: they are merged and the rise between them is reported as a *minor step*
//!    — the signature of a TLB running out of reach, or of a few over-full cache sets, not of
//!    a new cache (real cache levels differ by 2.5–5× on current CPUs; TLB misses on a
//!    page-friendly chain add well under 1.5×). A rise too short to be a plateau that
//!    comes right before a real step is simply part of that step's transition.
//! 3. When the curve ends in a rise of at least `min_step` that never flattens (the largest
//!    working set is too small for a DRAM plateau), that rise is a final, non-flat level whose
//!    latency is the median of the last three points.
//! 4. A level ends at the last size before the curve first crosses the geometric mean of its
//!    latency and the next level's: the middle of the transition, which is robust to noise
//!    and to the gradual miss-rate ramp of physically indexed caches.
//!
//! The boundaries found this way are candidates: [`confirm`](fn@confirm::confirm) turns each into a range (last
//! size clearly inside, first clearly beyond) and accepts it only when a finer, repeated
//! measurement around it shows the step again.
//!
//! Pure: depends on nothing but the standard library.

pub mod confirm;

pub use confirm::{
    Boundary, ConfirmConfig, CurvePoint, Unconfirmed, confirm, latencies_on, range_agrees, windows,
};

/// Knobs of [`detect`]; [`Default`] gives the documented rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// A point joins a run while within ± this fraction of the run's median (0.15 = 15%).
    pub tolerance: f64,
    /// Smallest latency ratio between neighbouring plateaus that counts as a new level.
    pub min_step: f64,
    /// Smallest span of sizes, in octaves, for a run to be a plateau.
    pub min_octaves: f64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            tolerance: 0.15,
            min_step: 1.5,
            min_octaves: 0.75,
        }
    }
}

/// One detected level of the hierarchy.
#[derive(Debug, Clone, PartialEq)]
pub struct Level {
    /// Typical latency, in the unit of the curve (ns, or core cycles when the curve is in
    /// cycles): the median over the plateau (last level: over its last 3 points).
    pub latency_ns: f64,
    /// Largest working set still served by this level (middle of the transition to the next
    /// level); `None` for the last level (memory, or whatever the curve ended in).
    pub ends_at_bytes: Option<u64>,
    /// Smallest working set assigned to this level.
    pub first_size: u64,
    /// Largest working set on the level's flat part (the last level: the largest measured).
    pub last_size: u64,
    /// `false` for a final rise that never flattened out (see the module rule 3).
    pub flat: bool,
}

/// A rise inside a level that is too small to be a cache level (module rule 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinorStep {
    /// Last working set before the rise.
    pub at_bytes: u64,
    /// Latency after ÷ before.
    pub ratio: f64,
}

/// The detected hierarchy.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Hierarchy {
    /// Levels by increasing size (and latency).
    pub levels: Vec<Level>,
    /// Small rises merged into a level.
    pub minor_steps: Vec<MinorStep>,
}

/// Index range (inclusive) of a plateau and its level in ln(ns).
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    level: f64,
}

/// Segment a latency curve: `points` are (working-set bytes, latency ns) in ascending size.
/// Points with a non-positive size or a non-finite or non-positive latency are ignored.
pub fn detect(points: &[(u64, f64)], cfg: &Config) -> Hierarchy {
    let pts: Vec<(u64, f64)> = points
        .iter()
        .copied()
        .filter(|&(s, l)| s > 0 && l.is_finite() && l > 0.0)
        .collect();
    if pts.is_empty() {
        return Hierarchy::default();
    }
    let xs: Vec<f64> = pts.iter().map(|p| (p.0 as f64).log2()).collect();
    let ys = median3(&pts.iter().map(|p| p.1.ln()).collect::<Vec<_>>());
    let mut minor_steps = Vec::new();
    let mut spans = plateaus(&xs, &ys, cfg);
    spans = merge_small_steps(spans, &ys, cfg, &pts, &mut minor_steps);
    if spans.is_empty() {
        // No flat stretch at all: report the curve as one non-flat level.
        spans.push(Span {
            start: 0,
            end: pts.len() - 1,
            level: median(&ys),
        });
    }
    spans[0].start = 0;
    Hierarchy {
        levels: levels_of(&pts, &ys, &spans, cfg),
        minor_steps,
    }
}

/// Rules 3 and 4: latencies and ends of the plateaus, plus a final rising level if any.
fn levels_of(pts: &[(u64, f64)], ys: &[f64], spans: &[Span], cfg: &Config) -> Vec<Level> {
    let last = pts.len() - 1;
    let tail_from = spans.last().map_or(last, |s| s.end + 1);
    let raw: Vec<f64> = pts.iter().map(|p| p.1).collect();
    let tail_latency = median(&raw[last.saturating_sub(2)..]);
    let tail_level = tail_latency.ln();
    let top = spans.last().map_or(tail_level, |s| s.level);
    let rising_tail = tail_from <= last && tail_level - top >= cfg.min_step.ln();
    let mut levels = Vec::new();
    for (k, span) in spans.iter().enumerate() {
        let next_level = match spans.get(k + 1) {
            Some(n) => Some(n.level),
            None if rising_tail => Some(tail_level),
            None => None,
        };
        let latency = if next_level.is_none() && !rising_tail {
            tail_latency
        } else {
            median(&raw[span.start..=span.end])
        };
        let ends = next_level.map(|n| crossing(ys, span.start, (span.level + n) / 2.0));
        levels.push(Level {
            latency_ns: latency,
            ends_at_bytes: ends.map(|i| pts[i].0),
            first_size: pts[span.start].0,
            last_size: pts[if next_level.is_none() { last } else { span.end }].0,
            flat: true,
        });
    }
    if rising_tail && let Some(prev) = levels.last() {
        let first = prev.ends_at_bytes.map_or(tail_from, |b| {
            pts.iter().position(|p| p.0 > b).unwrap_or(last)
        });
        levels.push(Level {
            latency_ns: tail_latency,
            ends_at_bytes: None,
            first_size: pts[first].0,
            last_size: pts[last].0,
            flat: false,
        });
    }
    levels
}

/// Median-of-3 filter (end points kept): one outlying point cannot split a plateau.
fn median3(ys: &[f64]) -> Vec<f64> {
    (0..ys.len())
        .map(|i| {
            if i == 0 || i + 1 == ys.len() {
                ys[i]
            } else {
                median(&ys[i - 1..=i + 1])
            }
        })
        .collect()
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Rule 1: greedy runs of points within the tolerance of the run's median, kept when they
/// span enough octaves. (Against the median, not the run's range: a plateau with ±10%
/// noise stays one run, while a ramp leaves the run as soon as it rises past the tolerance.)
fn plateaus(xs: &[f64], ys: &[f64], cfg: &Config) -> Vec<Span> {
    let tol = (1.0 + cfg.tolerance).ln();
    let mut spans = Vec::new();
    let mut start = 0;
    while start < ys.len() {
        let mut end = start;
        while end + 1 < ys.len() && (ys[end + 1] - median(&ys[start..=end])).abs() <= tol {
            end += 1;
        }
        if xs[end] - xs[start] >= cfg.min_octaves - 1e-9 {
            spans.push(Span {
                start,
                end,
                level: median(&ys[start..=end]),
            });
        }
        start = end + 1;
    }
    spans
}

/// Rule 2: merge neighbouring plateaus closer than `min_step`, recording the minor steps.
fn merge_small_steps(
    spans: Vec<Span>,
    ys: &[f64],
    cfg: &Config,
    pts: &[(u64, f64)],
    minor: &mut Vec<MinorStep>,
) -> Vec<Span> {
    let step = cfg.min_step.ln();
    let mut out: Vec<Span> = Vec::new();
    for s in spans {
        match out.last_mut() {
            Some(prev) if s.level - prev.level < step => {
                if s.level > prev.level {
                    minor.push(MinorStep {
                        at_bytes: pts[prev.end].0,
                        ratio: (s.level - prev.level).exp(),
                    });
                }
                prev.end = s.end;
                prev.level = median(&ys[prev.start..=prev.end]);
            }
            _ => out.push(s),
        }
    }
    out
}

/// Index of the last point before `ys` first rises above `mid`, searching from `start`.
fn crossing(ys: &[f64], start: usize, mid: f64) -> usize {
    match ys[start..].iter().position(|&y| y > mid) {
        Some(0) | None => start,
        Some(i) => start + i - 1,
    }
}

/// One row of the comparison of detected level ends with the kernel's cache sizes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheMatch {
    /// Index into the detected ends, `None` when this sysfs cache has no detected boundary.
    pub detected: Option<usize>,
    /// Index into the sysfs sizes, `None` for a detected boundary no cache explains.
    pub sysfs: Option<usize>,
    /// Detected end ÷ sysfs size, when both exist.
    pub ratio: Option<f64>,
    /// Both exist and agree within a factor of 2.
    pub agree: bool,
}

/// Order-preserving alignment of detected level ends with sysfs data/unified cache sizes
/// (both ascending), minimising the total |log2(detected ÷ sysfs)|. Leaving an entry
/// unmatched costs 2.5 octaves, so a pair up to a factor 32 apart is still matched (and
/// reported as disagreeing) rather than counted as one missing and one extra level: a
/// level found between L2 and DRAM is the L3 even when a VM gets only a slice of it.
pub fn match_caches(detected: &[u64], sysfs: &[u64]) -> Vec<CacheMatch> {
    const SKIP: f64 = 2.5;
    let (n, m) = (detected.len(), sysfs.len());
    let dist = |i: usize, j: usize| ((detected[i] as f64) / (sysfs[j] as f64)).log2().abs();
    // cost[i][j]: best alignment of detected[i..] with sysfs[j..].
    let mut cost = vec![vec![0.0f64; m + 1]; n + 1];
    for i in (0..=n).rev() {
        for j in (0..=m).rev() {
            cost[i][j] = match (i < n, j < m) {
                (false, false) => 0.0,
                (true, false) => SKIP + cost[i + 1][j],
                (false, true) => SKIP + cost[i][j + 1],
                (true, true) => (dist(i, j) + cost[i + 1][j + 1])
                    .min(SKIP + cost[i + 1][j])
                    .min(SKIP + cost[i][j + 1]),
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < n || j < m {
        let take_pair = i < n && j < m && cost[i][j] == dist(i, j) + cost[i + 1][j + 1];
        if take_pair {
            let ratio = detected[i] as f64 / sysfs[j] as f64;
            out.push(CacheMatch {
                detected: Some(i),
                sysfs: Some(j),
                ratio: Some(ratio),
                agree: (0.5..=2.0).contains(&ratio),
            });
            (i, j) = (i + 1, j + 1);
        } else if i < n && (j == m || cost[i][j] == SKIP + cost[i + 1][j]) {
            out.push(CacheMatch {
                detected: Some(i),
                sysfs: None,
                ratio: None,
                agree: false,
            });
            i += 1;
        } else {
            out.push(CacheMatch {
                detected: None,
                sysfs: Some(j),
                ratio: None,
                agree: false,
            });
            j += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests;
