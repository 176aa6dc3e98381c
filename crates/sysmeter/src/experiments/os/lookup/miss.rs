//! The dentry-cache miss of `os.lookup`: before each pass the dentry and inode caches are
//! dropped (`/proc/sys/vm/drop_caches` = 2, root only; the block device's cache of directory
//! and inode-table blocks stays, so the miss is the file system's lookup from memory, not
//! the disk), then the same 8-component path is resolved twice, each call timed on its own: the
//! first is the miss, the second the hit.
//!
//! The eviction is verified by the timing (the first lookup must be the slower in most
//! passes, and at the median) and /proc/sys/fs/dentry-state's count before and after each
//! drop is reported beside it. When it cannot be done (not root, /proc/sys read-only in a
//! container) or not verified, the part is skipped with the reason.

use std::ffi::CStr;
use std::hint::black_box;
use std::time::Instant;

use sysmeter_sys::syscall as sys;

use crate::harness::{Ctx, ExperimentError};
use crate::host::procfs::{self, DentryState};
use crate::model::Metric;
use crate::model::Unit;

const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";
const DENTRY_STATE: &str = "/proc/sys/fs/dentry-state";

/// Metric names.
pub const MISS: &str = "dentry-cache miss: stat, 8 components";
/// See [`MISS`].
pub const HIT: &str = "dentry-cache hit: stat, 8 components (same pass)";

/// What the miss part produced.
#[derive(Debug)]
pub enum Outcome {
    /// Both metrics, the median number of dentries one drop freed, and in how many passes
    /// the miss was slower than the hit.
    Measured {
        /// The miss and hit metrics.
        metrics: Box<[Metric; 2]>,
        /// Median dentries freed per drop (dentry-state before − after; 0 when the cache
        /// was already small or other processes refilled it).
        freed: u64,
        /// Passes where the first lookup was the slower one.
        slower: usize,
        /// Passes.
        passes: usize,
    },
    /// Why not.
    Skipped(String),
}

fn dentries() -> Option<DentryState> {
    procfs::parse_dentry_state(&std::fs::read_to_string(DENTRY_STATE).ok()?)
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|t| procfs::parse_status(&t).is_root())
}

fn timed(fd: i32, path: &CStr, timer_ns: f64) -> f64 {
    let t0 = Instant::now();
    black_box(sys::stat_at(fd, path));
    (t0.elapsed().as_nanos() as f64 - timer_ns).max(0.0)
}

/// One pass: drop, then the miss, the hit and the dentries freed; `Err` (why) when the drop
/// was refused.
fn pass(fd: i32, path: &CStr, timer_ns: f64) -> Result<(f64, f64, i64), String> {
    black_box(sys::stat_at(fd, path));
    let before = dentries().map_or(0, |d| d.total as i64);
    std::fs::write(DROP_CACHES, b"2").map_err(|e| {
        format!("writing 2 to {DROP_CACHES} failed ({e}): /proc/sys is read-only or not ours here")
    })?;
    let after = dentries().map_or(0, |d| d.total as i64);
    let miss = timed(fd, path, timer_ns);
    let hit = timed(fd, path, timer_ns);
    Ok((miss, hit, before - after))
}

/// Passes to take: the profile's minimum sample count, at least 7 and at most 25 (each
/// drop walks the whole dentry cache of the machine).
fn passes(ctx: &Ctx<'_>) -> usize {
    ctx.profile.min_samples.clamp(7, 25)
}

/// Measures a miss and a hit of `path` (relative to `fd`) over several dropped passes.
pub fn measure(ctx: &mut Ctx<'_>, fd: i32, path: &CStr) -> Result<Outcome, ExperimentError> {
    if !is_root() {
        return Ok(Outcome::Skipped(
            "dropping the dentry cache needs root (it writes /proc/sys/vm/drop_caches); run \
             sysmeter as root to measure a miss"
                .into(),
        ));
    }
    ctx.progress(MISS);
    let n = passes(ctx);
    let (mut miss, mut hit, mut freed) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..n {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        match pass(fd, path, ctx.calib.timer_overhead_ns) {
            Ok((m, h, f)) => {
                miss.push(m);
                hit.push(h);
                freed.push(f);
            }
            Err(why) => return Ok(Outcome::Skipped(why)),
        }
    }
    let slower = miss.iter().zip(&hit).filter(|(m, h)| m > h).count();
    freed.sort_unstable();
    let median_freed = freed[freed.len() / 2].max(0) as u64;
    let m = ctx.metric(MISS, Unit::Ns, miss)?;
    let h = ctx.metric(HIT, Unit::Ns, hit)?;
    if let Some(why) = unverified(&m, &h, slower, n) {
        return Ok(Outcome::Skipped(why));
    }
    Ok(Outcome::Measured {
        metrics: Box::new([m, h]),
        freed: median_freed,
        slower,
        passes: n,
    })
}

/// Why the eviction is not verified, if it is not: the first lookup after a drop must be
/// the slower of the two in at least three passes of four, and slower at the median.
/// (dentry-state's total is reported but not required to fall: other processes create and
/// free dentries at the same time, and a cache dropped by the previous pass has little left
/// to free.)
fn unverified(miss: &Metric, hit: &Metric, slower: usize, passes: usize) -> Option<String> {
    if slower * 4 < passes * 3 || miss.summary.median <= hit.summary.median {
        return Some(format!(
            "drop_caches=2 was written but the first lookup after it was slower than the \
             second in only {slower} of {passes} passes (medians {:.0} ns and {:.0} ns), so \
             the eviction is not verified",
            miss.summary.median, hit.summary.median
        ));
    }
    None
}
