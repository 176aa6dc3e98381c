//! Results of `fs.cache_size`: the curves, the detected size (knee of the second-pass time,
//! confirmed by mincore residency), and the cross-check against MemAvailable and the memory
//! cgroup limit.

use super::{Point, series};
use crate::experiments::fs::blocks;
use crate::model::units;

use crate::harness::{Ctx, ExperimentError, Measured};
use crate::model::Unit;
use crate::stats::fit::knee::KneeScan;

/// Residency above which a file counts as cached.
const CACHED: f64 = 0.9;

/// Metrics, series and findings from the measured `points` (capped at `max`).
pub fn report(ctx: &Ctx<'_>, points: &[Point], max: u64) -> Result<Measured, ExperimentError> {
    let mut out = Measured {
        series: series(ctx, points)?,
        ..Measured::default()
    };
    let xs: Vec<f64> = points.iter().map(|p| p.size as f64).collect();
    let means: Vec<f64> = out.series[0]
        .points
        .iter()
        .map(|p| p.summary.mean)
        .collect();
    let resident_fit = points
        .iter()
        .filter(|p| p.resident >= CACHED)
        .map(|p| p.size)
        .max();
    let (size, capped) = match blocks::step_knee(&xs, &means) {
        KneeScan::Knee(k) => {
            knee_finding(&mut out, &xs, &means, k.at, k.next);
            (k.at.round() as u64, false)
        }
        _ if resident_fit.is_some_and(|r| r < max) => {
            let r = resident_fit.unwrap_or(max);
            residency_drop_finding(&mut out, r);
            (r, false)
        }
        _ => {
            at_least_finding(ctx, &mut out, max, means.last().copied().unwrap_or(0.0));
            (max, true)
        }
    };
    let mut m = ctx.noted_metric(
        "file cache size",
        Unit::Bytes,
        vec![size as f64],
        if capped {
            format!("≥ {} (the --max-size cap came first)", units::size(max))
        } else {
            "largest file whose second pass came from memory".into()
        },
    )?;
    m.at_least = capped;
    out.metrics.push(m);
    mincore_finding(&mut out, resident_fit, size, capped);
    cross_check(ctx, &mut out, size, capped);
    Ok(out)
}

fn knee_finding(out: &mut Measured, xs: &[f64], means: &[f64], at: f64, next: f64) {
    let near = |x: f64| {
        (0..xs.len())
            .min_by(|&a, &b| (xs[a] - x).abs().total_cmp(&(xs[b] - x).abs()))
            .map_or(0.0, |i| means[i])
    };
    let (before, after) = (near(at), near(next));
    out.find(
        "knee",
        format!(
            "The second read of a file up to {} came from memory ({} per 4 KiB block); from \
             {} on it came from the device ({} per block, {:.1}x): the file cache holds \
             between {} and {} for this process.",
            units::size(at.round() as u64),
            units::duration_ns(before),
            units::size(next.round() as u64),
            units::duration_ns(after),
            after / before.max(1.0),
            units::size(at.round() as u64),
            units::size(next.round() as u64)
        ),
        Some(at),
    );
}

/// No knee in the times, but mincore shows the files up to `r` stayed cached.
fn residency_drop_finding(out: &mut Measured, r: u64) {
    out.find(
        "residency_drop",
        format!(
            "The per-block times show no clear knee, but mincore does: files up to {} \
             stayed at least 90% resident after their second read and larger ones did \
             not, so the file cache holds about {} for this process.",
            units::size(r),
            units::size(r)
        ),
        Some(r as f64),
    );
}

/// No knee up to the `max` cap: the cache holds at least that (`last_mean` per block at the
/// largest size).
fn at_least_finding(ctx: &Ctx<'_>, out: &mut Measured, max: u64, last_mean: f64) {
    out.find(
        "at_least",
        format!(
            "No knee up to {}: every second pass was served from memory ({} per block \
             at the largest size), so the file cache holds at least {} here; raise \
             --max-size (MemAvailable is {}) to find its end.",
            units::size(max),
            units::duration_ns(last_mean),
            units::size(max),
            units::size(ctx.host.memory.available_bytes)
        ),
        Some(max as f64),
    );
}

fn mincore_finding(out: &mut Measured, resident_fit: Option<u64>, size: u64, capped: bool) {
    let text = match resident_fit {
        Some(r) if capped => format!(
            "mincore agrees: up to {} every file stayed at least 90% resident after its \
             second read.",
            units::size(r)
        ),
        Some(r) => {
            let agree = (r as f64) >= size as f64 * 0.7 && (r as f64) <= size as f64 * 1.3;
            format!(
                "mincore: the largest file still at least 90% resident after its second read \
                 was {}, {} the {} from the timing knee.",
                units::size(r),
                if agree { "confirming" } else { "unlike" },
                units::size(size)
            )
        }
        None => "mincore: no file stayed 90% resident after its second read, not even the \
                 smallest; memory is very tight."
            .to_string(),
    };
    out.find("mincore", text, resident_fit.map(|r| r as f64));
}

fn cross_check(ctx: &Ctx<'_>, out: &mut Measured, size: u64, capped: bool) {
    let avail = ctx.host.memory.available_bytes;
    let limit = ctx.host.cgroup.memory_max_bytes;
    let bound = match limit {
        Some(l) if avail == 0 || l < avail => l,
        _ => avail,
    };
    if bound == 0 {
        return;
    }
    let limit_text = limit.map_or("no memory cgroup limit".to_string(), |l| {
        format!("a memory cgroup limit of {}", units::size(l))
    });
    let share = size as f64 / bound as f64;
    let verdict = if capped {
        format!("the cap was {:.0}% of that", share * 100.0)
    } else {
        format!("the measured size is {:.0}% of that", share * 100.0)
    };
    out.find(
        "memory_bounds",
        format!(
            "At the start MemAvailable was {} and this process had {limit_text}; the smaller, \
             {}, bounds the file cache: {verdict}.",
            units::size(avail),
            units::size(bound)
        ),
        Some(share),
    );
}
