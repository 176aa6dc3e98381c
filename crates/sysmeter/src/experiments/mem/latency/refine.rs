//! The windowed curve of `mem.latency` and the cache levels read from it, in two stages:
//! a coarse curve over all sizes, then a fine, repeated re-measurement around each
//! candidate boundary, and the detection and confirmation (`stats::hierarchy`) on core
//! cycles per load, so a change of the core clock between points cannot make or move a
//! boundary. The latency a level is reported with is its metric, in ns (`findings`).

use sysmeter_sys::chase::ChaseBuffer;

use crate::harness::{Ctx, ExperimentError};
use crate::model::{Metric, Series};
use crate::stats::hierarchy::{self, Boundary, CurvePoint, Hierarchy};

use super::Plan;
use super::points::{Chain, Take, measure_takes, series_of, sizes, thinned};

/// The windowed series and what was read from it.
pub struct Windowed {
    /// All points, coarse and fine, one per size.
    pub series: Series,
    /// The per-point metrics of `series`.
    pub metrics: Vec<Metric>,
    /// The levels, read on core cycles per load (their `latency_ns` is in cycles: the
    /// latency a page shows is the level's metric, `findings::levels`); a confirmed level's
    /// end is the middle of its range.
    pub found: Hierarchy,
    /// Range and confirmation of each level's end.
    pub boundaries: Vec<Boundary>,
    /// Sizes re-measured in the fine stage.
    pub fine_sizes: usize,
}

/// Coarse curve, fine re-measurement around the candidates, detection and confirmation.
pub fn windowed(
    ctx: &Ctx<'_>,
    buf: &mut ChaseBuffer,
    plan: &Plan,
    chain: &Chain<'_>,
) -> Result<Windowed, ExperimentError> {
    let coarse_sizes = thinned(
        sizes(4 * super::KIB, plan.max, plan.windowed_per_octave),
        plan.thin_beyond,
    );
    let mut takes = measure_takes(ctx, buf, chain, &coarse_sizes, 2, false)?;
    // Up to two fine rounds: the second only for sizes that the first did not cover, when
    // the candidates moved after the first.
    let mut fine = 0;
    for _ in 0..2 {
        let curve = curves(&takes);
        let h = hierarchy::detect(&pairs(&curve), &hierarchy::Config::default());
        let new: Vec<u64> = fine_sizes(&hierarchy::windows(&h, &curve), plan)
            .into_iter()
            .filter(|s| !curve.iter().any(|p| p.bytes == *s && p.refined))
            .take(plan.max_fine)
            .collect();
        // The fine stage spends what the coarse curve left of the time budget.
        let new = plan.affordable(&new, 2);
        if new.is_empty() {
            break;
        }
        fine += new.len();
        takes.extend(measure_takes(ctx, buf, chain, &new, 2, true)?);
    }
    fine += last_edge(ctx, buf, plan, chain, &mut takes)?;
    let cycles = curves(&takes);
    let mut found = hierarchy::detect(&pairs(&cycles), &hierarchy::Config::default());
    let boundaries = hierarchy::confirm(&found, &cycles, &hierarchy::ConfirmConfig::default());
    for b in boundaries.iter().filter(|b| b.unconfirmed.is_none()) {
        found.levels[b.level].ends_at_bytes = b.middle();
    }
    // Minor steps were found on cycles; their ratios are unit-free.
    let (series, metrics) = series_of(ctx, chain, &takes)?;
    Ok(Windowed {
        series,
        metrics,
        found,
        boundaries,
        fine_sizes: fine,
    })
}

/// The last level's end (the last-level cache, shared with the other CPUs of this machine
/// and, in a VM, with other guests) wanders most: another tenant's burst evicts our lines
/// and lifts whole takes to DRAM latency, which moves the edge down. Interference only ever
/// adds latency, so the best take per size is the undisturbed curve, and more takes spread
/// over time find it. Re-measure the fine grid from a quarter-octave below the candidate
/// range to an octave beyond it, `plan.edge_passes` more times; returns the takes added.
fn last_edge(
    ctx: &Ctx<'_>,
    buf: &mut ChaseBuffer,
    plan: &Plan,
    chain: &Chain<'_>,
    takes: &mut Vec<Take>,
) -> Result<usize, ExperimentError> {
    let curve = curves(takes);
    let h = hierarchy::detect(&pairs(&curve), &hierarchy::Config::default());
    let bounds = hierarchy::confirm(&h, &curve, &hierarchy::ConfirmConfig::default());
    let Some(last) = bounds.last() else {
        return Ok(0);
    };
    let Some(end) = h.levels[last.level].ends_at_bytes else {
        return Ok(0);
    };
    let lo = last.lo_bytes.unwrap_or(end).min(end) * 4 / 5;
    let hi = (last.hi_bytes.unwrap_or(end).max(end) * 2).min(plan.max);
    let grid = plan.affordable(&fine_sizes(&[(lo, hi)], plan), plan.edge_passes);
    let added = measure_takes(ctx, buf, chain, &grid, plan.edge_passes, true)?;
    let n = added.len();
    takes.extend(added);
    Ok(n)
}

fn pairs(c: &[CurvePoint]) -> Vec<(u64, f64)> {
    c.iter().map(|p| (p.bytes, p.value)).collect()
}

/// The 5th percentile of one take's samples (with 8 samples: the lowest).
fn p5(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    s.get(((s.len().max(1) - 1) as f64 * 0.05).round() as usize)
        .copied()
        .unwrap_or(f64::NAN)
}

/// Per size, ascending: the best take in core cycles per load (its p5 × the probe's GHz
/// before it). A take without a usable probe uses the median clock of the others (all
/// without: 1 GHz, so the cycles curve is the ns curve).
fn curves(takes: &[Take]) -> Vec<CurvePoint> {
    let mut clocks: Vec<f64> = takes
        .iter()
        .map(|t| t.ghz)
        .filter(|g| g.is_finite() && *g > 0.0)
        .collect();
    clocks.sort_by(f64::total_cmp);
    let fallback = clocks.get(clocks.len() / 2).copied().unwrap_or(1.0);
    let mut cycles: Vec<CurvePoint> = Vec::new();
    let mut order: Vec<&Take> = takes.iter().collect();
    order.sort_by_key(|t| t.size);
    for t in order {
        let ghz = if t.ghz.is_finite() && t.ghz > 0.0 {
            t.ghz
        } else {
            fallback
        };
        let c = p5(&t.ns) * ghz;
        match cycles.last_mut() {
            Some(p) if p.bytes == t.size => {
                p.value = p.value.min(c);
                p.refined |= t.fine;
            }
            _ => {
                cycles.push(CurvePoint {
                    bytes: t.size,
                    value: c,
                    refined: t.fine,
                });
            }
        }
    }
    cycles
}

/// Fine sizes inside the windows: `plan.fine_per_octave` per octave on the grid from powers
/// of two (8 per octave includes the coarse 4, so those are measured again), at most
/// `plan.max_fine` in all (thinned evenly beyond that).
fn fine_sizes(windows: &[(u64, u64)], plan: &Plan) -> Vec<u64> {
    let mut v: Vec<u64> = windows
        .iter()
        .flat_map(|&(lo, hi)| {
            let octave = 1u64 << (63 - lo.max(1).leading_zeros());
            sizes(octave, hi, plan.fine_per_octave)
                .into_iter()
                .filter(move |&s| s >= lo && s <= hi)
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    if v.len() > plan.max_fine && plan.max_fine > 0 {
        let step = v.len() as f64 / plan.max_fine as f64;
        v = (0..plan.max_fine)
            .map(|i| v[(i as f64 * step) as usize])
            .collect();
    }
    v
}
