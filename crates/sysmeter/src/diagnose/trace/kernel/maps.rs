//! The maps of `bpf/trace.bpf.c` read back, and their one translation into the trace model:
//! each (process, thread, call) aggregate becomes that many calls of the [`Collector`], their
//! durations spread over the log2 histogram (`observe::bpf::durations`, which keeps the
//! count and the total exact), the errors by errno charged to as many of them; the calls a
//! thread was still in at the end become the collector's unfinished calls. Also the median of
//! a histogram (the calibration's interval) and the per-thread tallies. Pure.

use std::collections::{BTreeMap, HashMap};

use super::super::names::{self, Arch};
use super::super::summary::Collector;
use crate::diagnose::observe::bpf::{BUCKETS, VALUE_WORDS, durations, u32_at, u64_at};

/// Slots of the `counters` array (trace.bpf.c's `C_*`).
pub(super) mod slot {
    /// Calls added to `calls`.
    pub const CALLS: usize = 0;
    /// Calls not counted: `calls` was full.
    pub const KEYS_FULL: usize = 1;
    /// Calls not timed: `starts` was full.
    pub const STARTS_FULL: usize = 2;
    /// Errors not counted by errno: `errors` was full.
    pub const ERRORS_FULL: usize = 3;
}

/// Bytes of a `struct key` (pid, tid, call number) and of a `struct error_key`.
pub(super) const KEY_BYTES: usize = 16;
/// Bytes of a `struct start` (time, call number, pid, padding).
pub(super) const START_BYTES: usize = 24;

/// What the maps held at the end of a session.
#[derive(Debug, Clone, Default)]
pub(super) struct Maps {
    /// `calls`: (pid, tid, nr) → count, sum, histogram.
    pub calls: Vec<([u8; KEY_BYTES], [u64; VALUE_WORDS])>,
    /// `errors`: (pid, tid, nr, errno) → count.
    pub errors: Vec<([u8; KEY_BYTES], u64)>,
    /// `starts`: tid → the call it is in (time 0: none).
    pub starts: Vec<(u32, [u8; START_BYTES])>,
    /// `counters`.
    pub counters: Vec<u64>,
}

/// The calls of each thread, by thread id (for the per-thread finding).
pub(super) type PerThread = BTreeMap<u32, u64>;

impl Maps {
    /// Counter `slot` (0 when the array is shorter).
    pub fn counter(&self, slot: usize) -> u64 {
        self.counters.get(slot).copied().unwrap_or(0)
    }

    /// Calls the kernel could not count or time because a map was full: the session's lost
    /// count (0 by construction otherwise).
    pub fn lost(&self) -> u64 {
        self.counter(slot::KEYS_FULL) + self.counter(slot::STARTS_FULL)
    }

    /// Errors counted without their errno (the `errors` map was full).
    pub fn errors_lost(&self) -> u64 {
        self.counter(slot::ERRORS_FULL)
    }

    /// Feeds the calls of the processes `keep` accepts into `c`; `unfinished`: the calls
    /// still open at the end never returned (the session was not cut short). Returns the
    /// calls of each thread.
    pub fn feed(
        &self,
        c: &mut Collector,
        keep: impl Fn(u32) -> bool,
        unfinished: bool,
    ) -> PerThread {
        let arch = Arch::native().audit();
        let mut errors: HashMap<(u32, u64), Vec<(i64, u64)>> = HashMap::new();
        for (k, n) in &self.errors {
            let (tid, nr, errno) = (u32_at(k, 4), u64::from(u32_at(k, 8)), u32_at(k, 12));
            errors
                .entry((tid, nr))
                .or_default()
                .push((i64::from(errno as i32), *n));
        }
        let mut threads = PerThread::new();
        for (k, v) in &self.calls {
            let (pid, tid, nr) = (u32_at(k, 0), u32_at(k, 4), u64_at(k, 8));
            if !keep(pid) {
                continue;
            }
            let (count, sum) = (v[0], v[1]);
            *threads.entry(tid).or_default() += count;
            let mut failed = errors.remove(&(tid, nr)).unwrap_or_default().into_iter();
            let mut current = failed.next();
            for d in durations(count, sum, &v[2..2 + BUCKETS]) {
                let errno = current.map(|(e, _)| e);
                c.record((arch, nr), d as f64, errno);
                current = match current {
                    Some((e, n)) if n > 1 => Some((e, n - 1)),
                    Some(_) => failed.next(),
                    None => None,
                };
            }
        }
        if unfinished {
            for (_, s) in &self.starts {
                // A thread's entry stays after its calls; time 0 is "in no call".
                if u64_at(s, 0) != 0 && keep(u32_at(s, 16)) {
                    let name = names::name(arch, u64_at(s, 8)).into_owned();
                    *c.unfinished.entry(name).or_default() += 1;
                }
            }
        }
        threads
    }
}

/// The median of the durations a log2 histogram holds (bucket `b` holds `[2^b, 2^(b+1))`
/// ns, bucket 0 below 2 ns), interpolated inside its bucket; `None` when it is empty.
pub(super) fn median_ns(hist: &[u64]) -> Option<f64> {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return None;
    }
    let half = total as f64 / 2.0;
    let mut below = 0.0;
    for (b, &n) in hist.iter().enumerate() {
        let n = n as f64;
        if n > 0.0 && below + n >= half {
            let (lo, hi) = match b {
                0 => (0.0, 2.0),
                _ => ((1u64 << b) as f64, (1u64 << (b + 1)) as f64),
            };
            return Some(lo + (hi - lo) * (half - below) / n);
        }
        below += n;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(pid: u32, tid: u32, nr: u64) -> [u8; KEY_BYTES] {
        let mut k = [0u8; KEY_BYTES];
        k[..4].copy_from_slice(&pid.to_ne_bytes());
        k[4..8].copy_from_slice(&tid.to_ne_bytes());
        k[8..].copy_from_slice(&nr.to_ne_bytes());
        k
    }

    fn error_key(pid: u32, tid: u32, nr: u32, errno: i32) -> [u8; KEY_BYTES] {
        let mut k = [0u8; KEY_BYTES];
        for (i, w) in [pid, tid, nr, errno as u32].iter().enumerate() {
            k[i * 4..i * 4 + 4].copy_from_slice(&w.to_ne_bytes());
        }
        k
    }

    fn value(count: u64, sum: u64, bucket: usize) -> [u64; VALUE_WORDS] {
        let mut v = [0u64; VALUE_WORDS];
        (v[0], v[1], v[2 + bucket]) = (count, sum, count);
        v
    }

    fn start(pid: u32, nr: u64) -> [u8; START_BYTES] {
        let mut s = [0u8; START_BYTES];
        s[..8].copy_from_slice(&1234u64.to_ne_bytes());
        s[8..16].copy_from_slice(&nr.to_ne_bytes());
        s[16..20].copy_from_slice(&pid.to_ne_bytes());
        s
    }

    #[test]
    fn aggregates_become_calls_with_their_errors_and_exact_totals() {
        let maps = Maps {
            calls: vec![
                (key(10, 10, 0), value(5, 500, 6)),
                (key(10, 11, 0), value(3, 300, 6)),
                (key(10, 11, 257), value(4, 4000, 9)),
                (key(20, 20, 0), value(7, 700, 6)),
            ],
            errors: vec![
                (error_key(10, 11, 257, 2), 3),
                (error_key(10, 11, 257, 13), 1),
            ],
            starts: vec![
                (10, start(10, 231)),
                (20, start(20, 231)),
                (12, [0u8; START_BYTES]),
            ],
            counters: vec![19, 2, 1, 0],
        };
        let mut c = Collector::new(None, 0.0);
        let threads = maps.feed(&mut c, |pid| pid == 10, true);
        let arch = Arch::native().audit();
        let read = c.call((arch, 0)).unwrap();
        assert_eq!((read.count, read.total_ns), (8, 800.0));
        let open = c.call((arch, 257)).unwrap();
        assert_eq!((open.count, open.total_ns), (4, 4000.0));
        assert_eq!(open.errors.get(&2), Some(&3));
        assert_eq!(open.errors.get(&13), Some(&1));
        assert_eq!(threads.get(&11), Some(&7));
        assert_eq!(threads.get(&20), None, "another process is left out");
        assert_eq!(c.unfinished.values().sum::<u64>(), 1);
        assert_eq!(maps.lost(), 3);
    }

    #[test]
    fn a_cut_session_has_no_unfinished_calls() {
        let maps = Maps {
            starts: vec![(10, start(10, 0))],
            ..Maps::default()
        };
        let mut c = Collector::new(None, 0.0);
        maps.feed(&mut c, |_| true, false);
        assert!(c.unfinished.is_empty());
    }

    #[test]
    fn the_median_interpolates_inside_its_bucket() {
        let mut hist = [0u64; BUCKETS];
        hist[6] = 10; // 64..128 ns
        assert_eq!(median_ns(&hist), Some(96.0));
        hist[20] = 1; // an outlier does not move it far
        assert!(median_ns(&hist).unwrap() < 128.0);
        assert_eq!(median_ns(&[0; BUCKETS]), None);
    }
}
