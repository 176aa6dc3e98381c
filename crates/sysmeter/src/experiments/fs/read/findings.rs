//! Findings of `fs.read` (and `fs.remote_read`): the device behind the directory, how
//! uncached reads bypassed the page cache (and whether that worked), random ÷ sequential and
//! uncached ÷ cached at the largest file size, and the cached read against the system-call
//! cost measured earlier in the run.

use super::{Cache, DirResult, metric_name};
use crate::experiments::fs::blocks::Order;
use crate::experiments::fs::files::Bypass;
use crate::harness::Ctx;
use crate::model::units;
use crate::stats;

/// One finding: its key, its text and its value.
type Found = (&'static str, String, Option<f64>);

/// Add the findings to `r` (measured up to file size `largest`).
pub fn add(ctx: &Ctx<'_>, mut r: DirResult, largest: u64) -> DirResult {
    let median = |c, o| r.measured.median(&metric_name(c, o, largest));
    let useq = median(Cache::Uncached, Order::Sequential);
    let urand = median(Cache::Uncached, Order::Random);
    let crand = median(Cache::Cached, Order::Random);
    let mut found = Vec::new();
    let rotational = r.storage.rotational.map(|x| if x { 1.0 } else { 0.0 });
    found.push((
        "device",
        format!("The files were on {}.", r.storage.describe()),
        rotational,
    ));
    if r.bypass.evicts() {
        found.push(fallback(&r));
    }
    found.extend(random_vs_sequential(useq, urand, largest));
    found.extend(uncached_vs_cached(urand, crand));
    found.extend(cached_vs_syscall(ctx, crand));
    for (key, text, value) in found {
        r.measured.find(key, text, value);
    }
    r
}

/// Uncached random ÷ sequential reads of the `largest` file, when both were measured.
fn random_vs_sequential(useq: Option<f64>, urand: Option<f64>, largest: u64) -> Option<Found> {
    let size = units::size(largest);
    let (s, q) = (useq?, urand?);
    let x = stats::ratio(q, s)?;
    Some((
        "random_vs_sequential",
        format!(
            "Uncached random 4 KiB reads of the {size} file take {} per block, {x:.2}x \
             sequential ones ({}): {}.",
            units::duration_ns(q),
            units::duration_ns(s),
            if x < 1.3 {
                "position hardly matters here"
            } else {
                "sequential reads gain from device or readahead locality"
            }
        ),
        Some(x),
    ))
}

/// Uncached ÷ cached random reads, when both were measured.
fn uncached_vs_cached(urand: Option<f64>, crand: Option<f64>) -> Option<Found> {
    let (u, c) = (urand?, crand?);
    let x = stats::ratio(u, c)?;
    Some((
        "uncached_vs_cached",
        format!(
            "An uncached random 4 KiB read ({}) costs {x:.1}x a page-cache hit ({}).",
            units::duration_ns(u),
            units::duration_ns(c)
        ),
        Some(x),
    ))
}

/// The cached read against the null system call measured earlier in the run, if it was.
fn cached_vs_syscall(ctx: &Ctx<'_>, crand: Option<f64>) -> Option<Found> {
    let c = crand?;
    let sys = ctx.previous_median("os.syscall", "null (getppid)")?;
    Some((
        "cached_vs_syscall",
        format!(
            "A cached 4 KiB read ({}) is {:.0}x a null system call ({}): the rest is the \
             page-cache lookup and the 4 KiB copy to user space.",
            units::duration_ns(c),
            c / sys.max(1e-9),
            units::duration_ns(sys)
        ),
        Some(c / sys.max(1e-9)),
    ))
}

fn fallback(r: &DirResult) -> Found {
    let pct = r.resident_after_evict * 100.0;
    let fs = &r.storage.fs_type;
    let tail = if r.storage.in_memory || pct > 50.0 {
        format!(
            " but mincore found {pct:.0}% of the file still resident, so the \"uncached\" \
             reads here are memory reads too; choose a disk-backed --dir to measure a device"
        )
    } else {
        format!(", and mincore confirmed the eviction ({pct:.0}% resident at most)")
    };
    let why = if r.bypass == Bypass::EvictRefused {
        format!("The {fs} file system refused O_DIRECT")
    } else {
        format!("{fs} keeps file data in memory, so O_DIRECT cannot reach a device")
    };
    (
        "uncached_fallback",
        format!(
            "{why}; uncached reads fell back to posix_fadvise(DONTNEED) eviction before each \
             pass{tail}."
        ),
        Some(r.resident_after_evict),
    )
}
