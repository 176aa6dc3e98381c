//! Timed 4 KiB block reads, shared by `fs.read`, `fs.remote_read`, `fs.cache_size` and
//! `fs.contention`: each `pread` of one block is timed on its own (two clock reads around
//! the system call; the calibrated timer-pair cost is subtracted), so every block is a
//! sample and the distribution (median, p99) is the per-block latency an application sees.
//! Block orders: sequential from the start, or distinct random blocks (a partial
//! Fisher–Yates shuffle, so no block is read twice within a pass and a page-cache fallback
//! never serves a block the pass itself brought in).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Instant;

use super::files::{AlignedBlock, BLOCK};
use crate::harness::ExperimentError;
use crate::stats::fit::knee::{self, KneeRule, KneeScan};
use crate::stats::fit::{self, Class};

/// Blocks per throughput sample: throughput is bytes over the summed time of this many
/// consecutive blocks of a pass.
pub const THROUGHPUT_GROUP: usize = 32;

/// The order blocks are read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Block 0, 1, 2, …
    Sequential,
    /// Distinct blocks in random order.
    Random,
}

impl Order {
    /// `sequential` / `random`.
    pub fn name(self) -> &'static str {
        match self {
            Order::Sequential => "sequential",
            Order::Random => "random",
        }
    }
}

/// The first `n` block indices of a pass over a file of `blocks` blocks in `order`.
pub fn block_order(order: Order, blocks: u64, n: usize, seed: u64) -> Vec<u64> {
    let n = n.min(blocks as usize);
    match order {
        Order::Sequential => (0..n as u64).collect(),
        Order::Random => {
            let mut rng = fastrand::Rng::with_seed(seed);
            let mut all: Vec<u64> = (0..blocks).collect();
            for i in 0..n {
                let j = rng.usize(i..all.len());
                all.swap(i, j);
            }
            all.truncate(n);
            all
        }
    }
}

/// `n` random block indices over a file of `blocks` blocks: whole random permutations one
/// after another, so every block is read once before any is read again.
pub fn cycled_order(blocks: u64, n: usize, seed: u64) -> Vec<u64> {
    let mut out = Vec::with_capacity(n);
    let mut round = 0u64;
    while out.len() < n && blocks > 0 {
        let left = n - out.len();
        out.extend(block_order(Order::Random, blocks, left, seed ^ round));
        round += 1;
    }
    out
}

/// Read the blocks `order` of `file` one `pread` at a time, timing each, until all are read
/// or `deadline` passes (at least `min` blocks are read whatever the deadline). Returns ns
/// per block with `timer_ns` subtracted. Polls Ctrl-C every 64 blocks.
pub fn time_blocks(
    file: &File,
    path: &Path,
    order: &[u64],
    deadline: Instant,
    min: usize,
    timer_ns: f64,
) -> Result<Vec<f64>, ExperimentError> {
    let t = Timing {
        deadline,
        min,
        timer_ns,
        origin: None,
    };
    Ok(read_timed(file, path, order, &t)?.0)
}

/// When a timed pass stops and what it subtracts; `origin` asks for completion stamps.
pub struct Timing {
    /// Stop after this (checked every 64 blocks)…
    pub deadline: Instant,
    /// … but only once this many blocks are read.
    pub min: usize,
    /// Calibrated cost of the timer pair, subtracted from each block.
    pub timer_ns: f64,
    /// Also return each block's completion time, ns after this instant.
    pub origin: Option<Instant>,
}

/// [`time_blocks`] with completion stamps (ns after `timing.origin`; empty without one).
pub fn read_timed(
    file: &File,
    path: &Path,
    order: &[u64],
    timing: &Timing,
) -> Result<(Vec<f64>, Vec<f64>), ExperimentError> {
    let mut block = AlignedBlock::new();
    let mut out = Vec::with_capacity(order.len());
    let mut stamps = Vec::new();
    for (i, &b) in order.iter().enumerate() {
        if i % 64 == 0 {
            if sysmeter_sys::signal::interrupted() {
                return Err(ExperimentError::Interrupted);
            }
            if i >= timing.min && Instant::now() >= timing.deadline {
                break;
            }
        }
        let buf = block.as_mut();
        let t0 = Instant::now();
        let got = file.read_at(buf, b * BLOCK as u64);
        let ns = t0.elapsed().as_nanos() as f64;
        match got {
            Ok(n) if n == BLOCK => out.push((ns - timing.timer_ns).max(0.0)),
            Ok(n) => {
                return Err(ExperimentError::Failed(format!(
                    "reading block {b} of {} returned {n} bytes, not {BLOCK}; the file changed \
                     while it was measured",
                    path.display()
                )));
            }
            Err(e) => {
                return Err(ExperimentError::Failed(format!(
                    "reading block {b} of {} failed: {e}",
                    path.display()
                )));
            }
        }
        if let Some(o) = timing.origin {
            stamps.push(t0.duration_since(o).as_nanos() as f64 + ns);
        }
    }
    Ok((out, stamps))
}

/// Throughput samples (bytes/s) from per-block times: one per group of
/// [`THROUGHPUT_GROUP`] consecutive blocks (a shorter tail group is dropped unless it is
/// the only one).
pub fn throughput(per_block_ns: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = per_block_ns
        .chunks_exact(THROUGHPUT_GROUP)
        .map(group_rate)
        .collect();
    if v.is_empty() && !per_block_ns.is_empty() {
        v.push(group_rate(per_block_ns));
    }
    v
}

fn group_rate(c: &[f64]) -> f64 {
    let ns: f64 = c.iter().sum::<f64>().max(1.0);
    (c.len() * BLOCK) as f64 / ns * 1e9
}

/// Read the whole of `file` through the page cache (untimed), so that a cached pass finds
/// every block in memory. Polls Ctrl-C.
pub fn warm(file: &File, path: &Path, len: u64) -> Result<(), ExperimentError> {
    let mut buf = vec![0u8; 1 << 20];
    let mut off = 0u64;
    while off < len {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        let n = file
            .read_at(&mut buf, off)
            .map_err(super::files::io("read", path))?;
        if n == 0 {
            break;
        }
        off += n as u64;
    }
    Ok(())
}

/// The knee of a curve that should be flat (per-block time against file size or thread
/// count): `stats`' two-segment knee rule on y itself (unit 1), judged against the best
/// constant, so a step or a climb after a flat stretch is a knee and a flat curve is not.
pub fn step_knee(xs: &[f64], ys: &[f64]) -> KneeScan {
    let flat = fit::fit_class(Class::Constant, xs, ys).ok();
    let baseline: Vec<f64> = xs
        .iter()
        .map(|&x| flat.and_then(|f| f.predict(x)).unwrap_or(f64::NAN))
        .collect();
    knee::detect(xs, ys, |_| 1.0, &baseline, 0.0, KneeRule::default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_are_distinct_blocks() {
        assert_eq!(block_order(Order::Sequential, 10, 4, 1), [0, 1, 2, 3]);
        let mut r = block_order(Order::Random, 1000, 1000, 3);
        assert_ne!(r[..10], (0..10).collect::<Vec<u64>>()[..]);
        r.sort_unstable();
        assert_eq!(r, (0..1000).collect::<Vec<u64>>());
        assert_eq!(block_order(Order::Random, 5, 50, 3).len(), 5);
        let c = cycled_order(5, 12, 3);
        assert_eq!(c.len(), 12);
        let mut first: Vec<u64> = c[..5].to_vec();
        first.sort_unstable();
        assert_eq!(first, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn a_step_is_a_knee_and_a_flat_line_is_not() {
        let xs: Vec<f64> = (0..10).map(|i| f64::from(1u32 << i)).collect();
        let step: Vec<f64> = (0..10)
            .map(|i| if i < 6 { 1000.0 } else { 9000.0 })
            .collect();
        match step_knee(&xs, &step) {
            KneeScan::Knee(s) => assert_eq!(s.at, 32.0),
            other => panic!("{other:?}"),
        }
        let flat: Vec<f64> = (0..10).map(|i| 1000.0 + f64::from(i % 2) * 10.0).collect();
        assert!(!matches!(step_knee(&xs, &flat), KneeScan::Knee(_)));
    }

    #[test]
    fn throughput_groups_blocks() {
        let t = throughput(&[1000.0; 64]);
        assert_eq!(t.len(), 2);
        assert!((t[0] - 4096.0 / 1000.0 * 1e9).abs() < 1.0);
        assert_eq!(throughput(&[2000.0; 3]).len(), 1);
        assert!(throughput(&[]).is_empty());
    }

    #[test]
    fn times_every_block_of_a_file() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 16 * BLOCK]).expect("write");
        let f = File::open(&path).expect("open");
        let order = block_order(Order::Random, 16, 16, 9);
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let t = time_blocks(&f, &path, &order, far, 0, 0.0).expect("read");
        assert_eq!(t.len(), 16);
        assert!(t.iter().all(|&x| x > 0.0));
        // Past the end: a short read is an error naming the file.
        let e = time_blocks(&f, &path, &[16], far, 0, 0.0).expect_err("short");
        assert!(e.to_string().contains("returned 0 bytes"), "{e}");
    }
}
