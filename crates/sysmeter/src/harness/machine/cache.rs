//! The shared-cache probe: how much of the last-level cache, which this CPU shares with the
//! other CPUs of the guest and — in a virtual machine — with other guests of the host, is
//! left to the measuring CPU right now.
//!
//! **Why.** On the development machine (2-vCPU KVM guest on an AMD EPYC whose 32 MiB L3 is
//! shared with the host's other tenants), an independent C pointer chase pinned to one CPU,
//! with the guest otherwise idle, took 13–120 ns per load over a 2 MiB working set and
//! 37–162 ns over 4 MiB from one second to the next (80 rounds in 2 minutes,
//! `scripts/l3-share.c`): the L3 left to us swung between "4 MiB fits" and "2 MiB does not".
//! `mem.latency`'s L3 end follows it, so two runs minutes apart report ends a factor of 4
//! apart though nothing about the machine changed. The core-clock and throughput probes do
//! not see it; this probe does, so that `bench` can say so and `compare` can refuse to call
//! the difference a regression.
//!
//! **What.** A random cyclic chase over [`CACHE_PROBE_BYTES`] (4 MiB: 4× the private L2 of
//! current x86 server cores, ⅛ of a 32 MiB L3), one element per 64-byte line, through the
//! same assembly loop as `mem.latency` ([`sysmeter_sys::chase::ChaseBuffer`]). One untimed
//! pass over every line brings the set into whatever cache will hold it; then half the ring
//! is timed: ns per load ≈ L3 latency (≈ 12 ns here) when 4 MiB of L3 is ours, ≈ DRAM
//! latency (≈ 100–180 ns) when it is not, in between when part of it is.
//!
//! **Timed interval**: eight chunks, each one `Instant::now()`, 4 096 dependent loads, one
//! `Instant::now()`; the median chunk is the reading, so a preemption inside one does not
//! count (measured under load: a single timed pass read 256–531 ns, above DRAM, when the
//! thread was preempted 59% of the time).
//! Cost: ≈ 1.2 ms when the set fits the L3, up to ≈ 15 ms when it falls to DRAM; taken only
//! for experiments that declare `Experiment::shares_caches_with_other_cpus`, at the start,
//! at most every [`BETWEEN_GAP`] between series points, and at the end.
//!
//! Depends on `sysmeter-sys` (the chase kernel) and `model`.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use sysmeter_sys::chase::ChaseBuffer;

use crate::model::{CacheShare, Unit, units};

/// Working set of the chase, bytes.
pub const CACHE_PROBE_BYTES: usize = 4 << 20;
/// Cache line the chain is laid out for (one element per line).
const LINE: usize = 64;
/// Shortest time between two readings taken between series points.
pub const BETWEEN_GAP: Duration = Duration::from_millis(500);
pub use crate::stats::compare::CACHE_SPREAD;

thread_local! {
    static RING: RefCell<Option<ChaseBuffer>> = const { RefCell::new(None) };
}

/// The ring of this thread, built on first use (4 MiB mapped and linked, ≈ 2 ms).
fn with_ring<R>(f: impl FnOnce(&ChaseBuffer) -> R) -> Option<R> {
    RING.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut buf = ChaseBuffer::new(CACHE_PROBE_BYTES).ok()?;
            let mut order: Vec<usize> = (0..CACHE_PROBE_BYTES / LINE).map(|i| i * LINE).collect();
            fastrand::Rng::with_seed(0x5eed_cace).shuffle(&mut order);
            buf.link(&order).ok()?;
            *slot = Some(buf);
        }
        slot.as_ref().map(f)
    })
}

/// Timed chunks of one reading; their median is the reading.
const CHUNKS: usize = 8;

/// One reading on the calling thread: after a warm pass over the whole ring, half of it is
/// chased in `CHUNKS` timed chunks, and the median chunk's ns per load is the reading (a
/// preemption or interrupt inside one chunk does not move it); `None` when the ring cannot
/// be mapped.
pub fn chase_ns() -> Option<f64> {
    let lines = (CACHE_PROBE_BYTES / LINE) as u64;
    let chunk = lines / 2 / CHUNKS as u64;
    with_ring(|ring| {
        ring.rewind();
        std::hint::black_box(ring.chase(lines));
        let mut per_load: Vec<f64> = (0..CHUNKS)
            .map(|_| {
                let t0 = Instant::now();
                std::hint::black_box(ring.chase(chunk));
                t0.elapsed().as_nanos() as f64 / chunk as f64
            })
            .collect();
        per_load.sort_by(f64::total_cmp);
        per_load[CHUNKS / 2]
    })
}

/// The readings of one experiment.
#[derive(Debug, Default, Clone)]
pub struct CacheTrail {
    readings: Vec<f64>,
    last: Option<Instant>,
}

impl CacheTrail {
    /// An empty trail whose last reading counts as taken now (the watch's start reading):
    /// the first [`CacheTrail::take_between`] waits [`BETWEEN_GAP`].
    pub fn started_now() -> CacheTrail {
        CacheTrail {
            readings: Vec::new(),
            last: Some(Instant::now()),
        }
    }

    /// Take a reading now.
    pub fn take(&mut self) {
        if let Some(ns) = chase_ns() {
            self.push(ns);
        }
        self.last = Some(Instant::now());
    }

    /// Take a reading unless the last one is less than [`BETWEEN_GAP`] old.
    pub fn take_between(&mut self) {
        if self.last.is_none_or(|t| t.elapsed() >= BETWEEN_GAP) {
            self.take();
        }
    }

    /// Add a reading (ns per load) taken elsewhere.
    pub fn push(&mut self, ns: f64) {
        if ns.is_finite() && ns > 0.0 {
            self.readings.push(ns);
        }
    }

    /// The readings in order.
    pub fn readings(&self) -> &[f64] {
        &self.readings
    }

    /// Append `later`'s readings (taken after this trail's).
    pub fn extend(&mut self, later: &CacheTrail) {
        self.readings.extend_from_slice(&later.readings);
    }

    /// The stored summary; `None` without readings.
    pub fn summary(&self) -> Option<CacheShare> {
        let r = &self.readings;
        let (&start_ns, &end_ns) = (r.first()?, r.last()?);
        let mut sorted = r.clone();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median_ns = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(CacheShare {
            bytes: CACHE_PROBE_BYTES as u64,
            count: u32::try_from(n).unwrap_or(u32::MAX),
            start_ns,
            end_ns,
            min_ns: sorted[0],
            max_ns: sorted[n - 1],
            median_ns,
        })
    }
}

/// The clause of the stability reason when the readings spread more than `spread`
/// (highest / lowest); `None` when they held still.
pub fn judge(share: &CacheShare, spread: f64) -> Option<String> {
    let ratio = share.max_ns / share.min_ns;
    (share.min_ns > 0.0 && ratio > spread).then(|| {
        format!(
            "the shared cache left to this CPU changed: a {} random chase took {} per load \
             (other CPUs or other guests used the last-level cache)",
            units::size(share.bytes),
            units::range(share.min_ns, share.max_ns, Unit::Ns),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trail(v: &[f64]) -> CacheTrail {
        let mut t = CacheTrail::default();
        v.iter().for_each(|&x| t.push(x));
        t
    }

    #[test]
    fn the_summary_keeps_start_end_range_and_median() {
        let s = trail(&[14.0, 90.0, 12.0, 13.0])
            .summary()
            .expect("readings");
        assert_eq!(
            (s.start_ns, s.end_ns, s.min_ns, s.max_ns),
            (14.0, 13.0, 12.0, 90.0)
        );
        assert_eq!((s.count, s.median_ns, s.bytes), (4, 13.5, 4 << 20));
        assert!(trail(&[f64::NAN, -1.0]).summary().is_none());
    }

    #[test]
    fn a_spread_beyond_the_limit_is_named_and_a_steady_one_is_not() {
        let moved = trail(&[13.0, 120.0]).summary().expect("readings");
        let reason = judge(&moved, CACHE_SPREAD).expect("unstable");
        assert!(reason.contains("13.0–120 ns per load"), "{reason}");
        assert!(reason.contains("4 MiB"), "{reason}");
        let steady = trail(&[13.0, 14.5, 12.5]).summary().expect("readings");
        assert_eq!(judge(&steady, CACHE_SPREAD), None);
    }

    #[test]
    fn a_real_reading_is_a_plausible_load_latency() {
        let ns = chase_ns().expect("4 MiB can be mapped");
        // Faster than any L1 hit or slower than a page-walking DRAM miss is a broken timer.
        assert!((0.3..2000.0).contains(&ns), "{ns} ns per load");
        let mut t = CacheTrail::default();
        t.take();
        t.take_between(); // within the gap: no second reading
        assert_eq!(t.readings().len(), 1);
    }
}
