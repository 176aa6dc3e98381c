//! The chains and the per-point sampler of `mem.latency`: visiting orders over a working
//! set (random within page windows, random across all pages, fixed stride), and the timed
//! loop that turns one chain into a metric of ns per load.
//!
//! Timing model of one sample: `t0 = now(); chase(loads); t1 = now()` — inside the interval
//! are `loads` dependent loads, one `dec`+`jnz` per 16 loads and one timer read pair. The
//! timer pair (calibrated once per run) and the loop control (measured here with the empty
//! twin `chase_overhead`) are subtracted per load. The machine-state probe a take may run
//! first (≈ 0.2 ms) is outside every sample.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use sysmeter_sys::chase::{ChaseBuffer, chase_overhead};

use crate::harness::{Ctx, ExperimentError};
use crate::model::{Metric, Series, SeriesPoint, Unit};

/// Base page size the chains are laid out for.
pub const PAGE: usize = 4096;
/// Pages per window of the TLB-friendly random chain: fewer than the 64-entry first-level
/// data TLBs of current x86 and Arm cores, so a window's loads hit the TLB.
pub const WINDOW_PAGES: usize = 32;

/// How a chain visits the cache lines (or stride slots) of a working set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Order {
    /// Pages shuffled, then cut into windows of [`WINDOW_PAGES`]; the lines of each window are
    /// visited in random order before the next window. Random to every prefetcher, but only
    /// one TLB miss per window's page: the cache levels without TLB effects.
    Windowed,
    /// One random cycle over all lines: nearly every load touches a different page, so the
    /// TLB misses of a random-access program show.
    Random,
    /// Slots `0, s, 2s, …` in address order: what stride prefetchers are built for.
    Stride(usize),
}

/// Byte offsets of the chain elements of a `bytes`-long working set of `line`-byte lines.
pub fn order(kind: Order, bytes: usize, line: usize, seed: u64) -> Vec<usize> {
    let mut rng = fastrand::Rng::with_seed(seed);
    match kind {
        Order::Stride(s) => (0..(bytes / s).max(1)).map(|i| i * s).collect(),
        Order::Random => {
            let mut v: Vec<usize> = (0..bytes / line).map(|i| i * line).collect();
            rng.shuffle(&mut v);
            v
        }
        Order::Windowed => {
            let mut pages: Vec<usize> = (0..bytes.div_ceil(PAGE)).collect();
            rng.shuffle(&mut pages);
            let mut v = Vec::with_capacity(bytes / line);
            for window in pages.chunks(WINDOW_PAGES) {
                let start = v.len();
                for &p in window {
                    v.extend((p * PAGE..((p + 1) * PAGE).min(bytes)).step_by(line));
                }
                rng.shuffle(&mut v[start..]);
            }
            v
        }
    }
}

/// Sampling budget of one point.
#[derive(Debug, Clone, Copy)]
pub struct Sampler {
    /// Samples per point.
    pub samples: usize,
    /// Target duration of one sample, ns.
    pub sample_ns: f64,
    /// Warm-up budget, ns.
    pub warm_ns: f64,
    /// Timer read pair, ns (subtracted per sample).
    pub timer_ns: f64,
    /// Loop control per load, ns (subtracted per load).
    pub loop_ns: f64,
}

fn timed(buf: &ChaseBuffer, loads: u64) -> f64 {
    let t0 = Instant::now();
    black_box(buf.chase(black_box(loads)));
    t0.elapsed().as_nanos() as f64
}

/// Loop overhead per load of the chase loop: the median of 11 timings of the empty twin.
pub fn loop_overhead_ns(timer_ns: f64) -> f64 {
    const LOADS: u64 = 1 << 20;
    let mut v: Vec<f64> = (0..11)
        .map(|_| {
            let t0 = Instant::now();
            chase_overhead(black_box(LOADS));
            ((t0.elapsed().as_nanos() as f64 - timer_ns) / LOADS as f64).max(0.0)
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Samples (ns per load, overheads subtracted) of the chain linked in `buf` (`elements`
/// long) and the loads per sample: warm up, size the sample, take `s.samples` samples.
fn sample_point(
    buf: &ChaseBuffer,
    elements: usize,
    s: &Sampler,
) -> Result<(Vec<f64>, u64), ExperimentError> {
    if sysmeter_sys::signal::interrupted() {
        return Err(ExperimentError::Interrupted);
    }
    let pilot = elements.clamp(16, 4096) as u64;
    let est = (timed(buf, pilot) / pilot as f64).max(0.1);
    // One full pass brings a chain that fits a cache into it (and its pages into the TLB);
    // a DRAM-sized chain gains nothing from warmth, so it only gets the warm-up budget.
    let full_pass = elements as f64 * est;
    let warm = if full_pass <= 4.0 * s.warm_ns {
        elements as u64
    } else {
        (s.warm_ns / est) as u64
    }
    .max(pilot);
    let per_load = (timed(buf, warm) / warm as f64).max(0.1);
    let loads = ((s.sample_ns / per_load) as u64)
        .max(64)
        .next_multiple_of(16);
    let samples = (0..s.samples)
        .map(|_| ((timed(buf, loads) - s.timer_ns) / loads as f64 - s.loop_ns).max(0.0))
        .collect();
    Ok((samples, loads))
}

/// One chain kind measured with one sampling budget.
#[derive(Debug, Clone, Copy)]
pub struct Chain<'a> {
    /// Visiting order.
    pub kind: Order,
    /// Series name.
    pub name: &'a str,
    /// Cache line size (the chain's element spacing).
    pub line: usize,
    /// Budget of one take.
    pub sampler: Sampler,
    /// Take a machine-state probe just before each take (outside its timed samples).
    pub probe: bool,
}

/// One measurement of one size: its samples, the loads per sample, and the probe's core
/// clock taken just before it (0 without a probe).
#[derive(Debug, Clone)]
pub struct Take {
    /// Working-set size.
    pub size: u64,
    /// ns per load, overheads subtracted.
    pub ns: Vec<f64>,
    /// Loads per sample.
    pub loads: u64,
    /// Effective core clock from the probe before this take, GHz (0 = none).
    pub ghz: f64,
    /// Part of the fine re-measurement around a candidate boundary.
    pub fine: bool,
}

/// Measure `sizes` (ascending) `passes` times, reusing `buf`. With `passes` > 1 each pass
/// visits the sizes in a different random order, so a burst of interference from other
/// tenants lands on scattered sizes and on one pass only, instead of on a run of
/// neighbouring sizes.
pub fn measure_takes(
    ctx: &Ctx<'_>,
    buf: &mut ChaseBuffer,
    c: &Chain<'_>,
    sizes: &[u64],
    passes: usize,
    fine: bool,
) -> Result<Vec<Take>, ExperimentError> {
    let mut takes = Vec::with_capacity(sizes.len() * passes.max(1));
    let mut rng = fastrand::Rng::with_seed(0x7061_7373 ^ sizes.len() as u64);
    for _ in 0..passes.max(1) {
        let mut idx: Vec<usize> = (0..sizes.len()).collect();
        if passes > 1 {
            rng.shuffle(&mut idx);
        }
        for i in idx {
            let o = order(
                c.kind,
                sizes[i] as usize,
                c.line,
                0x6c61_7465_6e63 ^ sizes[i],
            );
            buf.link(&o)
                .map_err(|e| ExperimentError::Failed(format!("build the {} chain: {e}", c.name)))?;
            let ghz = match c.probe {
                true => ctx.probe_between_points().map_or(0.0, |p| p.core_ghz),
                false => 0.0,
            };
            let (ns, loads) = sample_point(buf, o.len(), &c.sampler)?;
            takes.push(Take {
                size: sizes[i],
                ns,
                loads,
                ghz,
                fine,
            });
        }
    }
    Ok(takes)
}

/// The series of `takes`: one point per size (ascending), pooling every take of that size,
/// and the per-point metrics (kept for the level metrics).
pub fn series_of(
    ctx: &Ctx<'_>,
    c: &Chain<'_>,
    takes: &[Take],
) -> Result<(Series, Vec<Metric>), ExperimentError> {
    let mut pooled: BTreeMap<u64, (Vec<f64>, u64)> = BTreeMap::new();
    for t in takes {
        let e = pooled.entry(t.size).or_default();
        e.0.extend(&t.ns);
        e.1 = e.1.max(t.loads);
    }
    let mut points = Vec::new();
    let mut metrics = Vec::new();
    for (size, (samples, loads)) in pooled {
        let mut m = ctx.metric(&format!("{} @ {size} B", c.name), Unit::Ns, samples)?;
        m.subtracted_overhead_ns = c.sampler.timer_ns / loads.max(1) as f64 + c.sampler.loop_ns;
        m.ops_per_sample = loads;
        points.push(SeriesPoint {
            x: size as f64,
            summary: m.summary,
            cycles: m.cycles,
        });
        metrics.push(m);
    }
    let series = Series {
        name: c.name.to_string(),
        x_label: "working set".to_string(),
        x_unit: Unit::Bytes,
        y_unit: Unit::Ns,
        points,
    };
    Ok((series, metrics))
}

/// Measure one chain kind over `sizes` in `passes` and pool them into its series.
pub fn measure_series(
    ctx: &Ctx<'_>,
    buf: &mut ChaseBuffer,
    c: &Chain<'_>,
    sizes: &[u64],
    passes: usize,
) -> Result<(Series, Vec<Metric>), ExperimentError> {
    let takes = measure_takes(ctx, buf, c, sizes, passes, false)?;
    series_of(ctx, c, &takes)
}

/// Working-set sizes from 4 KiB (or `from`) to `max`: `per_octave` points per power of two
/// (2^k·(1 + i/per_octave)), multiples of 64 bytes, plus `max` itself.
pub fn sizes(from: u64, max: u64, per_octave: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut p = from.max(4096);
    while p <= max {
        for i in 0..per_octave {
            let s = (p + p * i / per_octave) / 64 * 64;
            if s <= max {
                v.push(s);
            }
        }
        p *= 2;
    }
    if v.last().is_some_and(|&l| l < max) && max >= from {
        v.push(max / 64 * 64);
    }
    v.dedup();
    v
}

/// `sizes` with one size per octave (the powers of two, and the largest) kept beyond
/// `beyond`, where a plateau needs few points and each chain is costly to build.
pub fn thinned(sizes: Vec<u64>, beyond: u64) -> Vec<u64> {
    let last = sizes.last().copied();
    sizes
        .into_iter()
        .filter(|&s| s <= beyond || s.is_power_of_two() || Some(s) == last)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thinning_keeps_one_size_per_octave_beyond_the_caches_only() {
        let all = sizes(4096, 64 << 20, 4);
        let thin = thinned(all.clone(), 8 << 20);
        assert!(thin.iter().all(|s| all.contains(s)));
        let below: Vec<u64> = all.iter().copied().filter(|&s| s <= 8 << 20).collect();
        assert!(
            below.iter().all(|s| thin.contains(s)),
            "nothing below is dropped"
        );
        let above: Vec<u64> = thin.iter().copied().filter(|&s| s > 8 << 20).collect();
        assert_eq!(above, vec![16 << 20, 32 << 20, 64 << 20]);
        assert_eq!(thinned(all.clone(), u64::MAX), all);
    }

    fn sorted(mut v: Vec<usize>) -> Vec<usize> {
        v.sort_unstable();
        v
    }

    #[test]
    fn random_orders_cover_every_line_once() {
        let all: Vec<usize> = (0..1600).map(|i| i * 64).collect();
        for kind in [Order::Random, Order::Windowed] {
            let o = order(kind, 100 * 1024, 64, 7);
            assert_ne!(o, all, "{kind:?} must be shuffled");
            assert_eq!(sorted(o), all, "{kind:?}");
        }
    }

    #[test]
    fn windowed_order_stays_inside_a_window_of_pages() {
        let o = order(Order::Windowed, 1 << 20, 64, 1);
        let per_window = WINDOW_PAGES * PAGE / 64;
        for w in o.chunks(per_window) {
            let mut pages: Vec<usize> = w.iter().map(|b| b / PAGE).collect();
            pages.sort_unstable();
            pages.dedup();
            assert_eq!(pages.len(), WINDOW_PAGES);
        }
    }

    #[test]
    fn strides_and_sizes() {
        assert_eq!(order(Order::Stride(4096), 4096, 64, 0), [0]);
        assert_eq!(
            order(Order::Stride(1024), 4096, 64, 0),
            [0, 1024, 2048, 3072]
        );
        assert_eq!(sizes(4096, 16384, 2), [4096, 6144, 8192, 12288, 16384]);
        assert_eq!(sizes(4096, 20000, 1), [4096, 8192, 16384, 19968]);
        let s = sizes(4096, 1 << 29, 4);
        assert_eq!(s.len(), 17 * 4 + 1);
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }
}
