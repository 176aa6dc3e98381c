//! `fs.write`: the price of durability — sequential write throughput into the page cache
//! and with the final fsync that makes it durable, and the latency of one 4 KiB write
//! followed by fsync (and by fdatasync, which skips metadata not needed to read the data).

use crate::model::units;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

use super::files::{self, BLOCK, TestDir, io};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::model::{HostInfo, Unit};

/// The experiment.
pub struct FsWrite;

const CHUNK: usize = 1 << 20;
const SYNC_FILE: u64 = 4 << 20;
/// The small durable write's metric.
const SMALL_SYNC: &str = "4 KiB write + fsync";

impl Experiment for FsWrite {
    fn page(&self) -> &'static str {
        include_str!("write.md")
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let size: u64 = match ctx.profile.name {
            "quick" => 4 << 20,
            "thorough" => 256 << 20,
            _ => 64 << 20,
        };
        let base = files::local_base(ctx);
        let dir = TestDir::create(&base, size + SYNC_FILE, "--dir")?;
        let mut out = Measured::default();
        sequential(ctx, &dir, size, &mut out)?;
        small_sync(ctx, &dir, &mut out)?;
        versus_read(ctx, &mut out);
        Ok(out)
    }

    fn metric_findings(&self, _host: &HostInfo, out: &mut Measured) {
        findings(out);
    }
}

fn sequential(
    ctx: &mut Ctx<'_>,
    dir: &TestDir,
    size: u64,
    out: &mut Measured,
) -> Result<(), ExperimentError> {
    ctx.progress("sequential write + fsync");
    let reps = match ctx.profile.name {
        "quick" => 3,
        "thorough" => 11,
        _ => 5,
    };
    let mut data = vec![0u8; size as usize];
    fastrand::Rng::with_seed(ctx.seed()).fill(&mut data);
    let path = dir.path().join("write-seq");
    let (mut buffered, mut durable, mut sync) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        let mut f = File::create(&path).map_err(io("create", &path))?;
        let t0 = Instant::now();
        for chunk in data.chunks(CHUNK) {
            f.write_all(chunk).map_err(io("write", &path))?;
        }
        let written = t0.elapsed().as_nanos() as f64;
        f.sync_all().map_err(io("fsync", &path))?;
        let total = t0.elapsed().as_nanos() as f64;
        buffered.push(size as f64 / written.max(1.0) * 1e9);
        durable.push(size as f64 / total.max(1.0) * 1e9);
        sync.push(total - written);
    }
    let s = units::size(size);
    for (name, unit, samples, note) in [
        (
            buffered_name(&s),
            Unit::BytesPerSec,
            buffered,
            "1 MiB writes, before fsync",
        ),
        (
            format!("sequential write + fsync, {s}"),
            Unit::BytesPerSec,
            durable,
            "until fsync returned",
        ),
        (
            format!("final fsync of {s}"),
            Unit::Ns,
            sync,
            "writing back the dirty pages",
        ),
    ] {
        out.metrics
            .push(ctx.noted_metric(&name, unit, samples, note)?);
    }
    std::fs::remove_file(&path).map_err(io("remove", &path))
}

fn small_sync(ctx: &mut Ctx<'_>, dir: &TestDir, out: &mut Measured) -> Result<(), ExperimentError> {
    let path = dir.random_file("write-sync", SYNC_FILE, ctx.seed())?;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .map_err(io("open", &path))?;
    let blocks = SYNC_FILE / BLOCK as u64;
    let block = vec![0x5au8; BLOCK];
    let mut rng = fastrand::Rng::with_seed(ctx.seed() ^ 0x51);
    for datasync in [false, true] {
        let name = if datasync {
            "4 KiB write + fdatasync"
        } else {
            SMALL_SYNC
        };
        ctx.progress(name);
        let timer = ctx.calib.timer_overhead_ns;
        let samples = sample(ctx, || {
            let off = rng.u64(0..blocks) * BLOCK as u64;
            let t0 = Instant::now();
            f.write_all_at(&block, off).map_err(io("pwrite", &path))?;
            sync(&f, datasync, &path)?;
            Ok((t0.elapsed().as_nanos() as f64 - timer).max(0.0))
        })?;
        let m = ctx.noted_metric(
            name,
            Unit::Ns,
            samples,
            "overwrite of a random block of a 4 MiB file",
        )?;
        out.metrics.push(m);
    }
    Ok(())
}

fn sync(f: &File, datasync: bool, path: &Path) -> Result<(), ExperimentError> {
    if datasync {
        sysmeter_sys::files::fdatasync(f).map_err(io("fdatasync", path))
    } else {
        f.sync_all().map_err(io("fsync", path))
    }
}

/// The profile's stopping rules for one-operation samples: at least `min_samples`, then
/// until the budget is spent or the cap reached (and never past 4× the budget).
fn sample(
    ctx: &Ctx<'_>,
    mut one: impl FnMut() -> Result<f64, ExperimentError>,
) -> Result<Vec<f64>, ExperimentError> {
    let p = ctx.profile;
    let start = Instant::now();
    let mut v = Vec::new();
    loop {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        v.push(one()?);
        let spent = start.elapsed();
        let n = v.len();
        if n >= p.max_samples || (n >= 3 && spent >= p.budget * 4) {
            return Ok(v);
        }
        if n >= p.min_samples && spent >= p.budget {
            return Ok(v);
        }
    }
}

/// The buffered sequential write's metric name for a file of `s` (a size as shown).
fn buffered_name(s: &str) -> String {
    format!("sequential write, {s} (page cache)")
}

/// The findings of this experiment's own metrics: durability's cost in bandwidth and the
/// latency of one small durable write. The file size is read back from the buffered
/// write's metric name, the one place a run records it.
fn findings(out: &mut Measured) {
    let size = out.metrics.iter().find_map(|m| {
        (m.name
            .strip_prefix("sequential write, ")?
            .strip_suffix(" (page cache)"))
        .map(String::from)
    });
    if let Some(s) = size
        && let (Some(b), Some(d)) = (
            out.median(&buffered_name(&s)),
            out.median(&format!("sequential write + fsync, {s}")),
        )
    {
        out.find(
            "durability_cost",
            format!(
                "Writing {s} into the page cache runs at {}; waiting for fsync brings it to \
                 {} — {:.1}x slower: durability costs the device's write bandwidth.",
                units::rate(b),
                units::rate(d),
                b / d.max(1.0)
            ),
            Some(b / d.max(1.0)),
        );
    }
    if let Some(w) = out.median(SMALL_SYNC) {
        out.find(
            "small_sync_write",
            format!(
                "Making one 4 KiB write durable takes {}; {:.0} such commits per second at \
                 most from one thread.",
                units::duration_ns(w),
                1e9 / w.max(1.0)
            ),
            Some(w),
        );
    }
}

/// The small durable write against `fs.read`'s uncached 4 KiB read, when that ran earlier:
/// it reads the other experiment through `ctx`, so it is drawn here, from this round's write.
fn versus_read(ctx: &Ctx<'_>, out: &mut Measured) {
    let read = (ctx.previous.iter().find(|r| r.id == "fs.read")).and_then(|r| {
        (r.metrics.iter())
            .find(|m| m.name.starts_with("uncached random 4 KiB read"))
            .map(crate::model::Metric::figure)
    });
    if let (Some(w), Some(r)) = (out.median(SMALL_SYNC), read) {
        out.find(
            "small_sync_write_vs_read",
            format!(
                "One durable 4 KiB write takes {:.1}x an uncached 4 KiB read ({}, fs.read).",
                w / r.max(1.0),
                units::duration_ns(r)
            ),
            Some(w / r.max(1.0)),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::pooled::{figure, finding, pooled, round};

    #[test]
    fn the_durability_findings_quote_the_pooled_figures() {
        let (buffered, durable) = (buffered_name("4 MiB"), "sequential write + fsync, 4 MiB");
        let rows = [
            (buffered.as_str(), Unit::BytesPerSec, 2e9),
            (durable, Unit::BytesPerSec, 1e8),
            (SMALL_SYNC, Unit::Ns, 1e6),
        ];
        let mut rounds = [round(&rows, 1.0), round(&rows, 1.0)];
        rounds[1][1..].clone_from_slice(&round(&rows[1..], 3.0));
        let r = pooled(&FsWrite, &HostInfo::default(), &rounds);
        let (b, d) = (figure(&r, &buffered), figure(&r, durable));
        assert_eq!(d, 2e8, "pooled, not the last round's 3e8");
        let (text, value) = finding(&r, "durability_cost");
        assert_eq!(value, Some(b / d));
        assert!(
            text.contains(&units::rate(d)) && text.contains("10.0x"),
            "{text}"
        );
        let w = figure(&r, SMALL_SYNC);
        let (text, value) = finding(&r, "small_sync_write");
        assert_eq!(value, Some(w));
        assert!(text.contains(&units::duration_ns(w)), "{text}");
    }
}
