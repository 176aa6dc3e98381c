//! `fs.cache_size`: how much file data the page cache holds for this process. A file grows
//! step by step (4 sizes per octave up to `--max-size`); at each size it is read twice and
//! the second pass is timed per block. While the file fits, the second pass comes from
//! memory; once it does not, sequential reading evicts the start of the file before it is
//! needed again and every block comes from the device — the per-block time jumps. mincore
//! after the second pass confirms how much stayed resident. The estimate is checked against
//! MemAvailable and the memory cgroup limit of the process (host/cgroup parses v1 and v2).

use crate::model::units;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

mod findings;

use super::blocks;
use super::files::{self, BLOCK, TestDir, io};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::model::{Estimate, HostInfo, Series, SeriesPoint, Unit};

/// The experiment.
pub struct FsCacheSize;

/// Blocks per timed group of the second pass (one sample = mean per block of a group).
const GROUP: usize = 64;

const MIB: u64 = 1 << 20;

impl Experiment for FsCacheSize {
    fn page(&self) -> &'static str {
        include_str!("../cache_size.md")
    }

    fn estimate(&self, host: &HostInfo, _tsc_ghz: Option<f64>) -> Vec<Estimate> {
        let avail = host.memory.available_bytes;
        let limit = host.cgroup.memory_max_bytes;
        let (value, basis) = match limit {
            Some(l) if l < avail || avail == 0 => (l, "the memory cgroup limit of this process"),
            _ => (
                avail,
                "MemAvailable: free memory plus reclaimable page cache",
            ),
        };
        if value == 0 {
            return Vec::new();
        }
        vec![Estimate {
            metric: "file cache size".into(),
            value: value as f64,
            unit: Unit::Bytes,
            basis: basis.into(),
        }]
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let max = max_size(ctx);
        let sizes = sizes(
            if ctx.profile.name == "quick" {
                4 * MIB
            } else {
                16 * MIB
            },
            max,
        );
        let base = files::local_base(ctx);
        let dir = TestDir::create(&base, max, "--dir")?;
        let path = dir.path().join("cache");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(io("create", &path))?;
        let mut rng = fastrand::Rng::with_seed(ctx.seed());
        let mut points = Vec::new();
        for &size in &sizes {
            ctx.progress(&format!("{} file", units::size(size)));
            grow(&mut file, &path, size, &mut rng)?;
            points.push(measure(ctx, &file, &path, size)?);
        }
        findings::report(ctx, &points, max)
    }
}

/// The largest file: `--max-size`, else by profile.
fn max_size(ctx: &Ctx<'_>) -> u64 {
    if let Some(m) = ctx.params.max_size {
        return m.max(8 * MIB);
    }
    match ctx.profile.name {
        // Quick: each size is written, read whole and read again in 4 KiB blocks in both
        // rounds; 64 MiB took 0.9 s of a 10 s run, where its share is 0.2 s.
        "quick" => 32 * MIB,
        "thorough" => (ctx.host.memory.total_bytes / 4 * 5).max(1024 * MIB),
        // Enough to find a container's memory limit; a file past a larger cache only
        // says "at least" after writing and reading it all (half the default run's disk time).
        _ => 256 * MIB,
    }
}

/// Sizes from `from` to `max`, 4 per octave, whole MiB, plus `max` itself.
pub fn sizes(from: u64, max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut k = 0;
    loop {
        let s = ((from as f64) * 2f64.powf(k as f64 / 4.0) / MIB as f64).round() as u64 * MIB;
        if s >= max {
            break;
        }
        if v.last() != Some(&s) {
            v.push(s);
        }
        k += 1;
    }
    v.push(max.next_multiple_of(BLOCK as u64));
    v
}

/// Append random bytes until the file is `size` long, then fsync (clean, evictable pages).
fn grow(
    file: &mut File,
    path: &Path,
    size: u64,
    rng: &mut fastrand::Rng,
) -> Result<(), ExperimentError> {
    let mut len = file.metadata().map_err(io("stat", path))?.len();
    let mut chunk = vec![0u8; MIB as usize];
    while len < size {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        let n = (size - len).min(MIB) as usize;
        rng.fill(&mut chunk[..n]);
        file.write_all(&chunk[..n]).map_err(io("write", path))?;
        len += n as u64;
    }
    file.sync_all().map_err(io("fsync", path))
}

/// One size: per-block samples of the second pass and the resident share after it.
pub struct Point {
    /// File size.
    pub size: u64,
    /// ns per block, one per group of blocks.
    pub samples: Vec<f64>,
    /// Share of the file resident after the second pass (mincore).
    pub resident: f64,
}

fn measure(ctx: &Ctx<'_>, file: &File, path: &Path, size: u64) -> Result<Point, ExperimentError> {
    use sysmeter_sys::files::{Pattern, fadvise};
    fadvise(file, Pattern::Normal).map_err(io("posix_fadvise", path))?;
    blocks::warm(file, path, size)?;
    // No readahead in the timed pass: a block that is not cached costs one device read, so
    // misses stand out instead of hiding behind readahead of their neighbours.
    fadvise(file, Pattern::Random).map_err(io("posix_fadvise", path))?;
    let stop = Instant::now() + ctx.profile.budget * 4;
    let timer = ctx.calib.timer_overhead_ns;
    let mut buf = vec![0u8; BLOCK];
    let blocks = size / BLOCK as u64;
    let mut samples = Vec::with_capacity(blocks as usize / GROUP + 1);
    let mut b = 0u64;
    while b < blocks {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        let n = (blocks - b).min(GROUP as u64);
        let t0 = Instant::now();
        for i in b..b + n {
            read_block(file, path, &mut buf, i)?;
        }
        let ns = t0.elapsed().as_nanos() as f64;
        samples.push(((ns - timer) / n as f64).max(0.0));
        b += n;
        // Past the cache every block is a device read: a budget's worth tells that much.
        if samples.len() >= 64 && Instant::now() >= stop {
            break;
        }
    }
    let resident = files::resident_share(file, size, path)?;
    Ok(Point {
        size,
        samples,
        resident,
    })
}

fn read_block(file: &File, path: &Path, buf: &mut [u8], i: u64) -> Result<(), ExperimentError> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, i * BLOCK as u64)
        .map_err(io("read", path))
}

/// The curve of per-block time and of residency.
pub fn series(ctx: &Ctx<'_>, points: &[Point]) -> Result<Vec<Series>, ExperimentError> {
    let (mut time, mut res) = (Vec::new(), Vec::new());
    for p in points {
        let m = ctx.metric("point", Unit::Ns, p.samples.clone())?;
        time.push(SeriesPoint {
            x: p.size as f64,
            summary: m.summary,
            cycles: m.cycles,
        });
        let r = ctx.metric("resident", Unit::Count, vec![p.resident * 100.0])?;
        res.push(SeriesPoint {
            x: p.size as f64,
            summary: r.summary,
            cycles: None,
        });
    }
    let mk = |name: &str, y, points| Series {
        name: name.into(),
        x_label: "file size".into(),
        x_unit: Unit::Bytes,
        y_unit: y,
        points,
    };
    Ok(vec![
        mk("second-pass 4 KiB read", Unit::Ns, time),
        mk("resident after second pass (%)", Unit::Count, res),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_grow_four_per_octave_up_to_the_cap() {
        let s = sizes(16 * MIB, 64 * MIB);
        assert_eq!(s.first(), Some(&(16 * MIB)));
        assert_eq!(s.last(), Some(&(64 * MIB)));
        assert_eq!(s.len(), 9, "{s:?}");
        assert!(s.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sizes(16 * MIB, 10 * MIB), [10 * MIB]);
    }
}
