//! `fs.contention`: per-block latency of uncached random 4 KiB reads as 1, 2, 3, 4, 6, …
//! up to 32 threads each read their own file at once, the aggregate throughput, and the
//! knee where latency starts to climb (the device's parallelism is used up and requests
//! queue).

use crate::model::units;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::blocks::{self, Order};
use super::files::{self, BLOCK, TestDir};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::host::storage::storage_of;
use crate::model::{Series, SeriesPoint, Unit};
use crate::stats::fit::knee::KneeScan;

mod windows;

use windows::{ThreadRun, Windows, windows};

/// The experiment.
pub struct FsContention;

impl Experiment for FsContention {
    fn page(&self) -> &'static str {
        include_str!("contention.md")
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let (counts, file_size): (&[usize], u64) = match ctx.profile.name {
            "quick" => (&[1, 2, 4], 1 << 20),
            _ => (&[1, 2, 3, 4, 6, 8, 12, 16, 24, 32], 8 << 20),
        };
        let max = counts.iter().copied().max().unwrap_or(1);
        let base = files::local_base(ctx);
        let dir = TestDir::create(&base, max as u64 * file_size, "--dir")?;
        let in_memory = storage_of(dir.path()).in_memory;
        let mut paths = Vec::new();
        for i in 0..max {
            ctx.progress(&format!("writing file {} of {max}", i + 1));
            paths.push(dir.random_file(&format!("c-{i}"), file_size, ctx.seed() ^ i as u64)?);
        }
        let mut rounds = Vec::new();
        for &n in counts {
            ctx.progress(&format!("{n} threads"));
            // Each thread count is a point of a long series: probe between them.
            ctx.probe_between_points();
            rounds.push(round(ctx, &paths[..n], file_size, in_memory)?);
        }
        report(ctx, counts, rounds)
    }
}

/// What one thread count measured.
struct Round {
    /// Samples per window ([`windows`](mod@windows)).
    windows: Windows,
    /// Mean latency over every block (the knee is found on it).
    block_mean: f64,
    evicting: bool,
}

/// Share of the profile's per-metric budget one thread count (a round) lasts.
const ROUND_SHARE: f64 = 0.6;

/// What every reader of one round shares.
struct Plan<'a> {
    /// The CPUs the readers may run on (all of the process's).
    cpus: &'a [usize],
    /// Size of each reader's file.
    size: u64,
    in_memory: bool,
    /// How many block reads to plan per reader.
    want: usize,
    seed: u64,
    timer_ns: f64,
    start: Instant,
    deadline: Instant,
}

fn round(
    ctx: &Ctx<'_>,
    paths: &[PathBuf],
    size: u64,
    in_memory: bool,
) -> Result<Round, ExperimentError> {
    // Ten thread counts: 0.6 of the profile's budget per round still gives every window
    // hundreds of reads at queue depth 1, and keeps the experiment near 1.5 s.
    let budget = ctx.profile.budget.mul_f64(ROUND_SHARE);
    let start = Instant::now();
    let plan = Plan {
        cpus: ctx.cpus,
        size,
        in_memory,
        // Enough reads for the whole budget at 10 µs each: O_DIRECT rounds may revisit
        // blocks (no cache is involved); evicting rounds keep them distinct.
        want: (budget.as_nanos() / 10_000) as usize + 64,
        seed: ctx.seed(),
        timer_ns: ctx.calib.timer_overhead_ns,
        start,
        deadline: start + budget,
    };
    let mut per_thread = Vec::new();
    let mut evicting = false;
    for r in read_all(&plan, paths) {
        let (t, e) = r?;
        evicting |= e;
        per_thread.push(t);
    }
    let span = start.elapsed().max(budget);
    let blocks: Vec<f64> = per_thread
        .iter()
        .flat_map(|t| t.samples.iter().copied())
        .collect();
    Ok(Round {
        windows: windows(&per_thread, span),
        block_mean: blocks.iter().sum::<f64>() / blocks.len().max(1) as f64,
        evicting,
    })
}

/// One reader thread per path, all at once; each thread's blocks and whether it evicted.
fn read_all(plan: &Plan<'_>, paths: &[PathBuf]) -> Vec<Result<(ThreadRun, bool), ExperimentError>> {
    std::thread::scope(|s| {
        let handles: Vec<_> = paths
            .iter()
            .enumerate()
            .map(|(i, path)| s.spawn(move || read_one(plan, i, path)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(ExperimentError::Failed("a reader thread panicked".into()))
                })
            })
            .collect()
    })
}

/// Reader `i`: its file opened uncached (or evicted), its blocks read one at a time until
/// the deadline. Returns the timed blocks and whether the file was evicted instead.
fn read_one(plan: &Plan<'_>, i: usize, path: &Path) -> Result<(ThreadRun, bool), ExperimentError> {
    let _ = sysmeter_sys::sched::set_current_thread_cpus(plan.cpus);
    let (file, bypass) = files::open_uncached(path, plan.in_memory)?;
    if bypass.evicts() {
        files::evict(&file, plan.size, path)?;
        sysmeter_sys::files::fadvise(&file, sysmeter_sys::files::Pattern::Random)
            .map_err(files::io("posix_fadvise", path))?;
    }
    let seed = plan.seed ^ (i as u64) << 32;
    let count = plan.size / BLOCK as u64;
    let order = if bypass.evicts() {
        blocks::block_order(Order::Random, count, plan.want, seed)
    } else {
        blocks::cycled_order(count, plan.want, seed)
    };
    let timing = blocks::Timing {
        deadline: plan.deadline,
        min: 8,
        timer_ns: plan.timer_ns,
        origin: Some(plan.start),
    };
    let (samples, done_ns) = blocks::read_timed(&file, path, &order, &timing)?;
    let run = ThreadRun { samples, done_ns };
    Ok((run, bypass.evicts()))
}

fn report(
    ctx: &Ctx<'_>,
    counts: &[usize],
    rounds: Vec<Round>,
) -> Result<Measured, ExperimentError> {
    let mut out = Measured::default();
    let (mut lat, mut tail, mut thr) = (Vec::new(), Vec::new(), Vec::new());
    let evicting = rounds.iter().any(|r| r.evicting);
    let means: Vec<f64> = rounds.iter().map(|r| r.block_mean).collect();
    for (&n, r) in counts.iter().zip(rounds) {
        let w = r.windows;
        // Per thread count: the median latency, the tail and the throughput, each noted.
        let [m, p, t] = [
            (
                format!("{n} threads: 4 KiB read"),
                Unit::Ns,
                w.median,
                format!("median per tenth of the blocks, {n} readers at once"),
            ),
            (
                format!("{n} threads: 4 KiB read, slowest 1%"),
                Unit::Ns,
                w.tail,
                "mean of the slowest 1% of blocks, per interleaved tenth".to_string(),
            ),
            (
                format!("{n} threads: aggregate throughput"),
                Unit::BytesPerSec,
                w.throughput,
                format!("all {n} threads, per tenth of the blocks"),
            ),
        ]
        .map(|(name, unit, samples, note)| ctx.noted_metric(&name, unit, samples, note));
        let (m, p, t) = (m?, p?, t?);
        lat.push(point(n, &m));
        tail.push(point(n, &p));
        thr.push(point(n, &t));
        out.metrics.extend([m, p, t]);
    }
    out.series.push(series("per-block latency", Unit::Ns, lat));
    out.series
        .push(series("aggregate throughput", Unit::BytesPerSec, thr));
    out.series
        .push(series("per-block latency, slowest 1%", Unit::Ns, tail));
    findings(&mut out, counts, &means, evicting);
    Ok(out)
}

fn point(n: usize, m: &crate::model::Metric) -> SeriesPoint {
    SeriesPoint {
        x: n as f64,
        summary: m.summary,
        cycles: m.cycles,
    }
}

fn series(name: &str, y: Unit, points: Vec<SeriesPoint>) -> Series {
    Series {
        name: name.into(),
        x_label: "threads".into(),
        x_unit: Unit::Count,
        y_unit: y,
        points,
    }
}

fn findings(out: &mut Measured, counts: &[usize], means: &[f64], evicting: bool) {
    latency_finding(out, counts, means);
    peak_throughput_finding(out);
    if evicting {
        out.find(
            "uncached_fallback",
            "O_DIRECT was not used here (refused, or a memory file system): files were evicted \
             with posix_fadvise(DONTNEED) before each round instead."
                .into(),
            None,
        );
    }
}

/// The knee of the mean latency (over every block) against the thread count, or that there
/// is none.
fn latency_finding(out: &mut Measured, counts: &[usize], means: &[f64]) {
    let xs: Vec<f64> = counts.iter().map(|&n| n as f64).collect();
    let (first, last) = (means.first().copied(), means.last().copied());
    let max_n = counts.last().copied().unwrap_or(1);
    match blocks::step_knee(&xs, means) {
        KneeScan::Knee(k) => {
            let nearest = (0..xs.len())
                .min_by(|&a, &b| (xs[a] - k.at).abs().total_cmp(&(xs[b] - k.at).abs()));
            let at = nearest.map_or(0.0, |i| means[i]);
            out.find(
                "knee",
                format!(
                    "Mean per-block latency is {} with one reader and {} with {:.0}; past that \
                     it climbs faster ({} with {max_n}): the device's parallelism is used up \
                     and requests queue.",
                    units::duration_ns(first.unwrap_or(0.0)),
                    units::duration_ns(at),
                    k.at,
                    units::duration_ns(last.unwrap_or(0.0))
                ),
                Some(k.at),
            )
        }
        _ => {
            if let (Some(a), Some(b)) = (first, last) {
                out.find(
                    "no_knee",
                    format!(
                        "No knee up to {max_n} threads: mean per-block latency goes from {} \
                         with one reader to {} with {max_n} ({:.1}x).",
                        units::duration_ns(a),
                        units::duration_ns(b),
                        b / a.max(1.0)
                    ),
                    None,
                );
            }
        }
    }
}

/// The thread count with the highest median aggregate throughput.
fn peak_throughput_finding(out: &mut Measured) {
    let best = out.series[1]
        .points
        .iter()
        .max_by(|a, b| a.summary.median.total_cmp(&b.summary.median));
    if let Some(p) = best {
        out.find(
            "peak_throughput",
            format!(
                "Aggregate uncached 4 KiB random-read throughput peaks at {} with {:.0} \
                 threads ({:.0} reads per second).",
                units::rate(p.summary.median),
                p.x,
                p.summary.median / BLOCK as f64
            ),
            Some(p.summary.median),
        );
    }
}
