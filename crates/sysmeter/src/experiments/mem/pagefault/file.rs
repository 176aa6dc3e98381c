//! File-backed faults of `mem.pagefault`: a temporary file of random bytes mapped read-only,
//! evicted from the page cache before every sample (verified with `mincore`), then touched
//! one byte per page — with readahead off (one storage read per fault), with the default
//! readahead, and with the pages still cached.

use std::fs::File;
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};

use sysmeter_sys::memory::{Advice, FileMap};

use super::{ANON_4K, Tally, io, metric, sample, timed};
use crate::harness::{Ctx, ExperimentError, Measured};
use crate::stats;

const EVICTED: &str = "file-backed fault, evicted, no readahead (major)";
const READAHEAD: &str = "file-backed fault, evicted, default readahead";
const CACHED: &str = "file-backed fault, page cached (minor)";
/// Discarded attempts (pages still resident after eviction) before a metric gives up.
const MAX_DISCARDS: usize = 20;

/// The mapped file; the file is unlinked from the start, so it disappears with the last
/// descriptor even if the process is killed.
struct Mapped {
    file: File,
    map: FileMap,
    dir: PathBuf,
}

impl Mapped {
    /// Evict the whole file; false if pages stayed resident (their count is added to `left`).
    fn evict(&self, left: &mut usize) -> Result<bool, ExperimentError> {
        let n = self.map.evict(&self.file).map_err(io("evict the file"))?;
        *left += n;
        Ok(n == 0)
    }
}

fn create(dir: &Path, len: usize) -> std::io::Result<Mapped> {
    let mut file = tempfile::tempfile_in(dir)?;
    // Random bytes, so no file system can store the file compressed or sparse.
    let mut rng = fastrand::Rng::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(buf.len());
        rng.fill(&mut buf[..n]);
        file.write_all(&buf[..n])?;
        left -= n;
    }
    // Clean pages only: the page cache does not drop dirty ones.
    file.sync_all()?;
    let map = FileMap::map(&file, len, false)?;
    Ok(Mapped {
        file,
        map,
        dir: dir.to_path_buf(),
    })
}

/// A directory where eviction demonstrably works: the temp directory, else the working
/// directory. Returns what went wrong in each when none does.
fn setup(len: usize) -> Result<Mapped, Vec<String>> {
    let mut dirs = vec![std::env::temp_dir()];
    if let Ok(cwd) = std::env::current_dir()
        && !dirs.contains(&cwd)
    {
        dirs.push(cwd);
    }
    let mut tried = Vec::new();
    for dir in dirs {
        let d = dir.display();
        match create(&dir, len) {
            Err(e) => tried.push(format!("{d}: cannot create the file: {e}")),
            Ok(m) => match m.map.evict(&m.file) {
                Ok(0) => return Ok(m),
                Ok(n) => tried.push(format!(
                    "{d}: {n} of {} pages stayed resident after madvise + posix_fadvise \
                     DONTNEED",
                    m.map.pages()
                )),
                Err(e) => tried.push(format!("{d}: eviction failed: {e}")),
            },
        }
    }
    Err(tried)
}

/// Measure the three file-backed faults and add their findings.
pub(super) fn faults(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let (len, per_sample) = match ctx.profile.name {
        "quick" => (2 << 20, 16),
        "thorough" => (32 << 20, 256),
        _ => (8 << 20, 64),
    };
    let m = match setup(len) {
        Ok(m) => m,
        Err(tried) => {
            out.find(
                "file_fault_skipped",
                format!(
                    "File-backed faults not measured: the file could not be evicted from the \
                     page cache ({}). On tmpfs the file is the page cache; set TMPDIR to a \
                     directory on a disk file system.",
                    tried.join("; ")
                ),
                None,
            );
            return Ok(());
        }
    };
    let mut left = 0usize;
    let evicted = evicted_faults(ctx, out, &m, per_sample, &mut left)?;
    readahead_faults(ctx, out, &m, &mut left)?;
    cached_faults(ctx, out, &m)?;
    out.find(
        "eviction_verified",
        format!(
            "Eviction verified: before every timed pass mincore found none of the {} pages of \
             the {} MiB file in {} resident after madvise + posix_fadvise DONTNEED ({left} \
             resident pages seen in discarded attempts).",
            m.map.pages(),
            len >> 20,
            m.dir.display()
        ),
        Some(left as f64),
    );
    if let Some(major) = evicted {
        major_findings(ctx, out, major);
    }
    Ok(())
}

/// Readahead off: each touch of an evicted page is one fault and one storage read.
/// Returns the major faults per page.
fn evicted_faults(
    ctx: &mut Ctx<'_>,
    out: &mut Measured,
    m: &Mapped,
    k: usize,
    left: &mut usize,
) -> Result<Option<f64>, ExperimentError> {
    m.map
        .advise(Advice::Random)
        .map_err(io("madvise(MADV_RANDOM)"))?;
    let (pages, mut cursor) = (m.map.pages(), 0usize);
    let k = k.min(pages);
    let mut tally = Tally::default();
    let (samples, _) = sample(ctx, MAX_DISCARDS, || {
        if !m.evict(left)? {
            return Ok(None);
        }
        cursor = if cursor + k > pages { 0 } else { cursor };
        let first = cursor;
        cursor += k;
        let ns = timed(ctx, &mut tally, k, || {
            black_box(m.map.touch(first, k));
        })?;
        Ok(Some(ns))
    })?;
    if samples.is_empty() {
        return Ok(None);
    }
    out.metrics
        .push(metric(ctx, EVICTED, samples, &tally, "page")?);
    Ok(Some(tally.per_unit().1))
}

fn readahead_faults(
    ctx: &mut Ctx<'_>,
    out: &mut Measured,
    m: &Mapped,
    left: &mut usize,
) -> Result<(), ExperimentError> {
    m.map
        .advise(Advice::Normal)
        .map_err(io("madvise(MADV_NORMAL)"))?;
    whole_map_faults(ctx, out, m, READAHEAD, || m.evict(left))
}

/// Pages in the page cache but not mapped: the fault only maps them (and fault-around maps
/// the cached neighbours too, so there are fewer faults than pages).
fn cached_faults(ctx: &mut Ctx<'_>, out: &mut Measured, m: &Mapped) -> Result<(), ExperimentError> {
    let pages = m.map.pages();
    black_box(m.map.touch(0, pages));
    whole_map_faults(ctx, out, m, CACHED, || {
        m.map
            .advise(Advice::DontNeed)
            .map_err(io("madvise(MADV_DONTNEED)"))?;
        if m.map.resident_pages().map_err(io("mincore"))? < pages {
            black_box(m.map.touch(0, pages));
            return Ok(false);
        }
        Ok(true)
    })
}

/// Time touching every page of the mapping, once per sample after `prepare` has set the
/// page cache up (a sample is discarded when it returns false), as metric `name`.
fn whole_map_faults(
    ctx: &mut Ctx<'_>,
    out: &mut Measured,
    m: &Mapped,
    name: &str,
    mut prepare: impl FnMut() -> Result<bool, ExperimentError>,
) -> Result<(), ExperimentError> {
    let pages = m.map.pages();
    let mut tally = Tally::default();
    let (samples, _) = sample(ctx, MAX_DISCARDS, || {
        if !prepare()? {
            return Ok(None);
        }
        Ok(Some(timed(ctx, &mut tally, pages, || {
            black_box(m.map.touch(0, pages));
        })?))
    })?;
    if !samples.is_empty() {
        out.metrics
            .push(metric(ctx, name, samples, &tally, "page")?);
    }
    Ok(())
}

fn major_findings(ctx: &Ctx<'_>, out: &mut Measured, major: f64) {
    let judged = if major >= 0.9 {
        "one storage read per page, as intended"
    } else {
        "fewer than one: the file system read more than a page per fault (large folios), \
         so part of the pages were served from the page cache"
    };
    out.find(
        "faults_per_page.file_evicted",
        format!(
            "Evicted file, readahead off: {major:.2} major faults per page touched — {judged}."
        ),
        Some(major),
    );
    let (Some(file), Some(anon)) = (out.median(EVICTED), out.median(ANON_4K)) else {
        return;
    };
    let Some(r) = stats::ratio(file, anon) else {
        return;
    };
    let vm = match &ctx.host.virtualization {
        Some(h) => format!(
            " Under a hypervisor ({h}) the virtual disk's reads may come from the host's page \
             cache, so a physical disk would be slower still."
        ),
        None => String::new(),
    };
    out.find(
        "file_vs_minor",
        format!(
            "A fault on an evicted file page ({:.1} µs) costs {r:.0}x a minor fault on \
             anonymous memory ({anon:.0} ns): the storage read dominates.{vm}",
            file / 1000.0
        ),
        Some(r),
    );
    if let (Some(ra), Some(c)) = (out.median(READAHEAD), out.median(CACHED)) {
        out.find(
            "readahead_and_cache",
            format!(
                "With the default readahead the same evicted file costs {ra:.0} ns per page \
                 (one read brings in many pages), and with the pages cached {c:.0} ns per page \
                 (a minor fault, with fault-around mapping cached neighbours at once)."
            ),
            Some(ra),
        );
    }
}
