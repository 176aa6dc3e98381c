//! `fs.read`: per-block latency and throughput of 4 KiB reads from files of several sizes,
//! sequential and random, uncached (O_DIRECT, or evicted with posix_fadvise where O_DIRECT
//! is refused) and cached (from the page cache). [`measure_dir`] is the whole measurement
//! for one directory, reused by `fs.remote_read`; the findings live in `findings.rs`.

use crate::model::units;
use std::fs::File;
use std::path::Path;
use std::time::Instant;

use sysmeter_sys::files::{Pattern, fadvise};

mod findings;

use super::blocks::{self, Order};
use super::files::{self, BLOCK, Bypass, TestDir, io};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Profile};
use crate::host::storage::{Storage, storage_of};
use crate::model::{Series, SeriesPoint, Unit};

/// The experiment.
pub struct FsRead;

impl Experiment for FsRead {
    fn page(&self) -> &'static str {
        include_str!("../read.md")
    }

    // No estimate: the machine description has no device latency to predict from (a virtual
    // disk's flags describe nothing real); the findings compare the cached read with the
    // system-call and memory-copy costs measured earlier in the run instead.

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let base = files::local_base(ctx);
        let sizes = sizes(ctx.profile);
        Ok(measure_dir(ctx, &base, "--dir", &sizes)?.measured)
    }
}

/// File sizes per profile: larger files need more writing, so the default stops at 128
/// MiB; `--thorough` adds 1 and 4 GiB.
pub fn sizes(profile: &Profile) -> Vec<u64> {
    const MIB: u64 = 1 << 20;
    match profile.name {
        "quick" => vec![MIB, 4 * MIB],
        "thorough" => vec![MIB, 16 * MIB, 128 * MIB, 1024 * MIB, 4096 * MIB],
        _ => vec![MIB, 16 * MIB, 128 * MIB],
    }
}

/// Cached or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    /// From the device (O_DIRECT or evicted).
    Uncached,
    /// From the page cache.
    Cached,
}

impl Cache {
    /// `uncached` / `cached`.
    pub fn name(self) -> &'static str {
        match self {
            Cache::Uncached => "uncached",
            Cache::Cached => "cached",
        }
    }
}

/// The metric name of one pass.
pub fn metric_name(cache: Cache, order: Order, size: u64) -> String {
    format!(
        "{} {} 4 KiB read, {} file",
        cache.name(),
        order.name(),
        units::size(size)
    )
}

/// Everything measured in one directory.
pub struct DirResult {
    /// Metrics, series and findings.
    pub measured: Measured,
    /// What stores the directory.
    pub storage: Storage,
    /// How uncached reads bypassed the cache.
    pub bypass: Bypass,
    /// Largest share of a file still resident after an eviction (0 with O_DIRECT).
    pub resident_after_evict: f64,
}

/// Measure every size of `sizes` in a temporary directory under `base` (`what` names the
/// option that chose it, for errors).
pub fn measure_dir(
    ctx: &mut Ctx<'_>,
    base: &Path,
    what: &str,
    sizes: &[u64],
) -> Result<DirResult, ExperimentError> {
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let dir = TestDir::create(base, largest, what)?;
    let storage = storage_of(dir.path());
    let mut acc = Acc::default();
    for (i, &size) in sizes.iter().enumerate() {
        let path = dir.random_file(&format!("read-{i}"), size, ctx_seed(ctx, i))?;
        // Each file size is a point of a long series: probe between them.
        ctx.probe_between_points();
        measure_file(ctx, &path, size, storage.in_memory, &mut acc)?;
        // Free the space before the next (larger) file.
        std::fs::remove_file(&path).map_err(io("remove", &path))?;
    }
    let mut measured = Measured::default();
    for (cache, order) in PASSES {
        measured.series.push(acc.series(ctx, cache, order)?);
    }
    measured.metrics = acc.metrics;
    let bypass = acc.bypass.unwrap_or(Bypass::Direct);
    let result = DirResult {
        measured,
        storage,
        bypass,
        resident_after_evict: acc.resident,
    };
    Ok(findings::add(ctx, result, largest))
}

const PASSES: [(Cache, Order); 4] = [
    (Cache::Uncached, Order::Sequential),
    (Cache::Uncached, Order::Random),
    (Cache::Cached, Order::Sequential),
    (Cache::Cached, Order::Random),
];

fn ctx_seed(ctx: &Ctx<'_>, i: usize) -> u64 {
    ctx.seed() ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Per-block samples of every pass, by (cache, order, size).
#[derive(Default)]
struct Acc {
    metrics: Vec<crate::model::Metric>,
    points: Vec<(Cache, Order, u64, Vec<f64>)>,
    bypass: Option<Bypass>,
    resident: f64,
}

impl Acc {
    fn series(&self, ctx: &Ctx<'_>, cache: Cache, order: Order) -> Result<Series, ExperimentError> {
        let mut points = Vec::new();
        for (_, _, size, samples) in self.points.iter().filter(|p| p.0 == cache && p.1 == order) {
            let m = ctx.metric("point", Unit::Ns, samples.clone())?;
            points.push(SeriesPoint {
                x: *size as f64,
                summary: m.summary,
                cycles: m.cycles,
            });
        }
        Ok(Series {
            name: format!("{} {} 4 KiB read", cache.name(), order.name()),
            x_label: "file size".into(),
            x_unit: Unit::Bytes,
            y_unit: Unit::Ns,
            points,
        })
    }
}

fn measure_file(
    ctx: &mut Ctx<'_>,
    path: &Path,
    size: u64,
    in_memory: bool,
    acc: &mut Acc,
) -> Result<(), ExperimentError> {
    let blocks = size / BLOCK as u64;
    let (file, bypass) = files::open_uncached(path, in_memory)?;
    acc.bypass = Some(bypass);
    for order in [Order::Sequential, Order::Random] {
        let note = match bypass {
            Bypass::Direct => "O_DIRECT".to_string(),
            Bypass::EvictRefused | Bypass::EvictInMemory => {
                let r = files::evict(&file, size, path)?;
                acc.resident = acc.resident.max(r);
                let why = if bypass == Bypass::EvictRefused {
                    "O_DIRECT refused"
                } else {
                    "memory file system"
                };
                format!(
                    "{why}: posix_fadvise(DONTNEED) eviction, {:.0}% resident after it (mincore)",
                    r * 100.0
                )
            }
        };
        hint(&file, order, path)?;
        let samples = pass(ctx, &file, path, blocks, order, Cache::Uncached)?;
        record(ctx, acc, (Cache::Uncached, order, size), samples, &note)?;
    }
    let cached = File::open(path).map_err(io("open", path))?;
    fadvise(&cached, Pattern::Normal).map_err(io("posix_fadvise", path))?;
    blocks::warm(&cached, path, size)?;
    let resident = files::resident_share(&cached, size, path)?;
    let note = format!("page cache; {:.0}% resident (mincore)", resident * 100.0);
    for order in [Order::Sequential, Order::Random] {
        let samples = pass(ctx, &cached, path, blocks, order, Cache::Cached)?;
        record(ctx, acc, (Cache::Cached, order, size), samples, &note)?;
    }
    Ok(())
}

fn hint(file: &File, order: Order, path: &Path) -> Result<(), ExperimentError> {
    let p = match order {
        Order::Sequential => Pattern::Normal,
        Order::Random => Pattern::Random,
    };
    fadvise(file, p).map_err(io("posix_fadvise", path))
}

/// One timed pass: uncached passes are capped at the profile's sample cap and budget,
/// cached ones (a few µs per block) at four times the cap.
fn pass(
    ctx: &mut Ctx<'_>,
    file: &File,
    path: &Path,
    blocks: u64,
    order: Order,
    cache: Cache,
) -> Result<Vec<f64>, ExperimentError> {
    ctx.progress(&format!("{} {} reads", cache.name(), order.name()));
    let p = ctx.profile;
    let cap = match cache {
        Cache::Uncached => p.max_samples,
        Cache::Cached => 4 * p.max_samples,
    };
    let seed = ctx.seed() ^ blocks ^ (order as u64) << 40;
    let list = blocks::block_order(order, blocks, cap, seed);
    let deadline = Instant::now() + p.budget;
    let min = (4 * p.min_samples).min(list.len());
    blocks::time_blocks(
        file,
        path,
        &list,
        deadline,
        min,
        ctx.calib.timer_overhead_ns,
    )
}

fn record(
    ctx: &Ctx<'_>,
    acc: &mut Acc,
    (cache, order, size): (Cache, Order, u64),
    samples: Vec<f64>,
    note: &str,
) -> Result<(), ExperimentError> {
    let rate = blocks::throughput(&samples);
    let m = ctx.noted_metric(
        &metric_name(cache, order, size),
        Unit::Ns,
        samples.clone(),
        note,
    )?;
    let mut t = ctx.metric(
        &format!(
            "{} {} throughput, {} file",
            cache.name(),
            order.name(),
            units::size(size)
        ),
        Unit::BytesPerSec,
        rate,
    )?;
    t.ops_per_sample = blocks::THROUGHPUT_GROUP as u64;
    t.note = Some(format!(
        "4 KiB × {} blocks per sample",
        blocks::THROUGHPUT_GROUP
    ));
    acc.metrics.extend([m, t]);
    acc.points.push((cache, order, size, samples));
    Ok(())
}
