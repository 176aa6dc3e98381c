//! The sampling units of `fs.contention`: a round's blocks, from every reader, in completion
//! order, cut into [`WINDOWS`] runs of equal count (a *window*), or dealt into [`WINDOWS`]
//! interleaved tenths (block i goes to tenth i mod 10). Each window gives one sample of the
//! aggregate throughput (its bytes over the time it took) and of the median block latency;
//! each tenth gives one sample of the tail: the mean latency of its slowest 1% of blocks.
//!
//! Why not blocks: per-block latencies under queueing are heavy-tailed (a device stall makes a
//! few blocks wait milliseconds), so with every block as a sample the CV was 63–528%
//! while the CI of the median was ±0.1–5%: the spread was the distribution's shape, not
//! uncertainty. A window's median is stable, and consecutive windows still show drift over
//! the round. The tail is kept as its own metric rather than averaged away; it is taken over
//! interleaved tenths because a stall's slow blocks complete together — in consecutive
//! windows one window got them all (a p99 per window gave CVs up to 275% and CIs over a
//! decade) — while dealt out they reach every tenth. Its statistic is the mean of the
//! slowest 1% (the expected shortfall), not the p99, whose value jumps when a tenth holds
//! one slow block more or less. Windows of equal *time* could hold no completion during a
//! stall (0 B/s samples); windows of equal *count* always hold blocks.
//!
//! Pure: completion times and latencies come from the caller.

use std::time::Duration;

use super::BLOCK;
use crate::stats::quantile_sorted;

/// Windows per round.
pub const WINDOWS: usize = 10;

/// One reader's blocks and when each completed.
pub struct ThreadRun {
    /// Latency of each block, ns.
    pub samples: Vec<f64>,
    /// Completion of each block, ns after the round's start.
    pub done_ns: Vec<f64>,
}

/// One sample per window of each metric.
#[derive(Debug, Default, PartialEq)]
pub struct Windows {
    /// Bytes per second.
    pub throughput: Vec<f64>,
    /// Median block latency, ns.
    pub median: Vec<f64>,
    /// Mean latency of the slowest 1% of blocks, per interleaved tenth, ns.
    pub tail: Vec<f64>,
}

/// Every block of the round in completion order, cut into up to [`WINDOWS`] runs of equal
/// count (the first completion opens the first window). A window's throughput is its bytes
/// over the time from the completion before it to its last; its median latency that of its
/// blocks. The tail samples deal the same blocks into as many interleaved tenths. A round
/// with a single completion gives one sample of each: its bytes over the round, and its
/// latency.
pub fn windows(per_thread: &[ThreadRun], span: Duration) -> Windows {
    let mut blocks: Vec<(f64, f64)> = per_thread
        .iter()
        .flat_map(|t| t.done_ns.iter().copied().zip(t.samples.iter().copied()))
        .collect();
    blocks.sort_by(|a, b| a.0.total_cmp(&b.0));
    let count = WINDOWS.min(blocks.len().saturating_sub(1));
    if count == 0 {
        let bytes = (blocks.len() * BLOCK) as f64;
        return Windows {
            throughput: vec![bytes / span.as_secs_f64().max(f64::MIN_POSITIVE)],
            median: blocks.iter().map(|b| b.1).collect(),
            tail: blocks.iter().map(|b| b.1).collect(),
        };
    }
    let per = (blocks.len() - 1) / count;
    let mut out = Windows::default();
    for w in 0..count {
        let elapsed_ns = blocks[(w + 1) * per].0 - blocks[w * per].0;
        if elapsed_ns > 0.0 {
            out.throughput.push((per * BLOCK) as f64 / elapsed_ns * 1e9);
        }
        let mut lat: Vec<f64> = blocks[w * per + 1..=(w + 1) * per]
            .iter()
            .map(|b| b.1)
            .collect();
        lat.sort_by(f64::total_cmp);
        out.median.push(quantile_sorted(&lat, 0.5));
        let tenth: Vec<f64> = blocks.iter().skip(w).step_by(count).map(|b| b.1).collect();
        out.tail.push(slowest_mean(tenth));
    }
    out
}

/// Mean of the slowest 1% of `lat` (at least one value).
fn slowest_mean(mut lat: Vec<f64>) -> f64 {
    lat.sort_by(|a, b| b.total_cmp(a));
    let n = lat.len().div_ceil(100).max(1).min(lat.len());
    lat[..n].iter().sum::<f64>() / n.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stall_longer_than_a_tenth_gives_no_zero_throughput_sample() {
        // One reader: a block every 50 µs, then a 600 ms stall, then blocks again. Windows of
        // equal time (a tenth of 1 s) held no completion during the stall.
        let mut done: Vec<f64> = (1..=200).map(|i| f64::from(i) * 50e3).collect();
        done.extend((1..=200).map(|i| 610e6 + f64::from(i) * 50e3));
        let run = ThreadRun {
            samples: vec![50e3; done.len()],
            done_ns: done,
        };
        let w = windows(&[run], Duration::from_secs(1));
        assert_eq!(w.throughput.len(), WINDOWS);
        assert!(w.throughput.iter().all(|&s| s > 0.0), "{w:?}");
        // Away from the stall, a window's rate is one block per 50 µs.
        assert!(
            (w.throughput[0] - BLOCK as f64 / 50e-6).abs() < 1.0,
            "{w:?}"
        );
    }

    #[test]
    fn a_round_with_one_completion_gives_one_sample() {
        let run = ThreadRun {
            samples: vec![1e6],
            done_ns: vec![1e6],
        };
        let w = windows(&[run], Duration::from_secs(1));
        assert_eq!(w.throughput, vec![BLOCK as f64]);
        assert_eq!((w.median, w.tail), (vec![1e6], vec![1e6]));
    }

    #[test]
    fn windows_keep_the_tail_apart_from_the_median() {
        // Two readers, 1000 blocks each at 100 µs, except one stall: 40 blocks in a row
        // (20 per reader) at 5 ms. The window medians are all 100 µs; consecutive windows
        // would give the stall to one of them, the interleaved tenths give it to all.
        let runs: Vec<ThreadRun> = (0..2)
            .map(|r| {
                let samples: Vec<f64> = (0..1000)
                    .map(|i| if (500..520).contains(&i) { 5e6 } else { 100e3 })
                    .collect();
                let done_ns = (0..1000).map(|i| f64::from(i * 2 + r) * 1e5).collect();
                ThreadRun { samples, done_ns }
            })
            .collect();
        let w = windows(&runs, Duration::from_secs(1));
        assert_eq!((w.median.len(), w.tail.len()), (WINDOWS, WINDOWS));
        assert!(w.median.iter().all(|&m| m == 100e3), "{:?}", w.median);
        assert!(w.tail.iter().all(|&t| t == 5e6), "{:?}", w.tail);
    }
}
