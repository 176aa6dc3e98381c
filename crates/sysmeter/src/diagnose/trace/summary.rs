//! The per-call tally every backend feeds: entries and exits are paired per thread into one
//! duration per call, the calibrated overhead inside the timed interval is subtracted, and
//! counts, errors (by errno), totals and per-call samples are kept per system call.
//!
//! Calls that never return (`exit`, `exit_group`, a thread killed inside a call) have no
//! duration and are not counted, as in `strace -c`; they are tallied separately so the
//! report can say so. Exits without a seen entry (the call was already in progress when
//! tracing began) are ignored. Pure: timestamps and numbers come from the caller.

use std::collections::{BTreeMap, HashMap};

use super::classes::Selection;
use super::lookups::Lookups;
use super::names;

pub use crate::diagnose::observe::reservoir::{MAX_SAMPLES, keep_sample};

/// A call's architecture (`AUDIT_ARCH_*`) and number.
pub type CallKey = (u32, u64);

/// What was seen of one system call.
#[derive(Debug, Clone, Default)]
pub struct CallStats {
    /// Completed calls.
    pub count: u64,
    /// Failed calls by errno.
    pub errors: BTreeMap<i64, u64>,
    /// Sum of the durations after overhead subtraction, ns.
    pub total_ns: f64,
    /// Shortest duration, ns.
    pub min_ns: f64,
    /// Longest duration, ns.
    pub max_ns: f64,
    /// Durations (all of them up to [`MAX_SAMPLES`], then a reservoir), ns.
    pub samples: Vec<f64>,
}

impl CallStats {
    /// Number of failed calls.
    pub fn error_count(&self) -> u64 {
        self.errors.values().sum()
    }
}

#[derive(Debug, Clone)]
struct Pending {
    key: Option<CallKey>,
    at_ns: i64,
    /// The path argument, read at entry (ptrace only).
    path: Option<PathArg>,
}

/// A path argument as read at a call's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathArg {
    /// The bytes (empty for an `AT_EMPTY_PATH` call or a NULL pointer).
    Read(Vec<u8>),
    /// The tracee's memory could not be read there.
    Unreadable,
}

/// Pairs entries with exits and tallies the calls that are selected.
#[derive(Debug)]
pub struct Collector {
    selection: Option<Selection>,
    selected: HashMap<CallKey, bool>,
    calls: HashMap<CallKey, CallStats>,
    pending: HashMap<i32, Pending>,
    overhead_ns: f64,
    /// Entries whose call never returned, by call name (`?` when the backend gave none).
    pub unfinished: BTreeMap<String, u64>,
    /// Exits without an entry (call already running when tracing started).
    pub unmatched_exits: u64,
    /// The paths of completed path-taking calls (filled when entries carry paths).
    pub lookups: Lookups,
    rng: fastrand::Rng,
}

impl Collector {
    /// A collector counting the calls in `selection` (all when `None`), subtracting
    /// `overhead_ns` (the calibrated tracing cost inside the timed interval) from each
    /// duration, clamped at 0.
    pub fn new(selection: Option<Selection>, overhead_ns: f64) -> Collector {
        Collector {
            selection,
            selected: HashMap::new(),
            calls: HashMap::new(),
            pending: HashMap::new(),
            overhead_ns: overhead_ns.max(0.0),
            unfinished: BTreeMap::new(),
            unmatched_exits: 0,
            lookups: Lookups::default(),
            rng: fastrand::Rng::with_seed(0x5eed),
        }
    }

    /// The overhead subtracted from each duration, ns.
    pub fn overhead_ns(&self) -> f64 {
        self.overhead_ns
    }

    /// Thread `tid` entered a call at `at_ns` (`key` when the backend knows which).
    pub fn enter(&mut self, tid: i32, key: Option<CallKey>, at_ns: i64) {
        self.enter_with_path(tid, key, at_ns, None);
    }

    /// [`Collector::enter`] of a call whose path argument was read: the path is tallied in
    /// [`Collector::lookups`] when the call completes.
    pub fn enter_with_path(
        &mut self,
        tid: i32,
        key: Option<CallKey>,
        at_ns: i64,
        path: Option<PathArg>,
    ) {
        let p = Pending { key, at_ns, path };
        if let Some(old) = self.pending.insert(tid, p) {
            self.never_returned(old);
        }
    }

    /// Thread `tid` left its call at `at_ns` with `ret`; `key` from the exit when the
    /// backend has it, else the entry's is used.
    pub fn exit(&mut self, tid: i32, key: Option<CallKey>, ret: i64, is_error: bool, at_ns: i64) {
        let Some(entry) = self.pending.remove(&tid) else {
            self.unmatched_exits += 1;
            return;
        };
        let Some(key) = key.or(entry.key) else {
            self.unmatched_exits += 1;
            return;
        };
        let raw = (at_ns - entry.at_ns) as f64;
        let errno = is_error.then_some(-ret);
        if let Some(path) = entry.path
            && self.is_selected(key)
        {
            match path {
                PathArg::Read(p) => self.lookups.record(&p, errno),
                PathArg::Unreadable => self.lookups.unreadable += 1,
            }
        }
        self.record(key, raw, errno);
    }

    /// Thread `tid` is gone (exited or detached): an open entry never returned.
    pub fn forget(&mut self, tid: i32) {
        if let Some(old) = self.pending.remove(&tid) {
            self.never_returned(old);
        }
    }

    /// Thread `from` became `to` (a non-leader thread's execve takes the leader's id).
    pub fn rename(&mut self, from: i32, to: i32) {
        if let Some(p) = self.pending.remove(&from) {
            self.pending.insert(to, p);
        }
    }

    fn never_returned(&mut self, p: Pending) {
        let name = match p.key {
            Some((arch, nr)) => names::name(arch, nr).into_owned(),
            None => "?".to_string(),
        };
        *self.unfinished.entry(name).or_default() += 1;
    }

    fn is_selected(&mut self, key: CallKey) -> bool {
        let Some(sel) = &self.selection else {
            return true;
        };
        *self
            .selected
            .entry(key)
            .or_insert_with(|| sel.contains(&names::name(key.0, key.1)))
    }

    /// Tallies one completed call of `raw_ns` (before overhead subtraction), failed with
    /// `errno` if given.
    pub fn record(&mut self, key: CallKey, raw_ns: f64, errno: Option<i64>) {
        if !self.is_selected(key) {
            return;
        }
        let d = (raw_ns - self.overhead_ns).max(0.0);
        let s = self.calls.entry(key).or_default();
        if s.count == 0 || d < s.min_ns {
            s.min_ns = d;
        }
        s.max_ns = s.max_ns.max(d);
        s.count += 1;
        s.total_ns += d;
        if let Some(e) = errno {
            *s.errors.entry(e).or_default() += 1;
        }
        keep_sample(&mut s.samples, s.count, d, &mut self.rng);
    }

    /// The tallies, by call.
    pub fn calls(&self) -> &HashMap<CallKey, CallStats> {
        &self.calls
    }

    /// The tally of one call, if it was seen.
    pub fn call(&self, key: CallKey) -> Option<&CallStats> {
        self.calls.get(&key)
    }

    /// Completed calls in all.
    pub fn total_calls(&self) -> u64 {
        self.calls.values().map(|c| c.count).sum()
    }
}

impl Collector {
    /// Forgets the calls that entered and will never be seen to return (the trace was cut):
    /// those calls were cut off, not unfinished.
    pub fn drop_open(&mut self) {
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysmeter_sys::seccomp::AUDIT_ARCH_X86_64 as X;

    #[test]
    fn entries_and_exits_pair_per_thread() {
        let mut c = Collector::new(None, 10.0);
        c.enter(1, Some((X, 0)), 100);
        c.enter(2, Some((X, 3)), 105);
        c.exit(2, None, -9, true, 205);
        c.exit(1, None, 5, false, 1100);
        let read = c.call((X, 0)).unwrap();
        assert_eq!((read.count, read.total_ns), (1, 990.0));
        let close = c.call((X, 3)).unwrap();
        assert_eq!(close.error_count(), 1);
        assert_eq!(close.errors.get(&9), Some(&1));
        assert_eq!(close.samples, vec![90.0]);
    }

    #[test]
    fn exit_keys_win_and_unmatched_exits_are_counted() {
        let mut c = Collector::new(None, 0.0);
        c.exit(7, Some((X, 1)), 0, false, 50);
        assert_eq!(c.unmatched_exits, 1);
        c.enter(7, None, 100);
        c.exit(7, Some((X, 1)), 1, false, 150);
        assert_eq!(c.call((X, 1)).unwrap().count, 1);
    }

    #[test]
    fn calls_that_never_return_are_tallied_apart() {
        let mut c = Collector::new(None, 0.0);
        c.enter(1, Some((X, 231)), 0);
        c.forget(1);
        c.enter(2, Some((X, 60)), 0);
        c.enter(2, Some((X, 0)), 10);
        c.exit(2, None, 0, false, 20);
        assert_eq!(c.unfinished.get("exit_group"), Some(&1));
        assert_eq!(c.unfinished.get("exit"), Some(&1));
        assert_eq!(c.total_calls(), 1);
    }

    #[test]
    fn selection_filters_and_overhead_is_clamped() {
        let sel = Selection::parse(&["close".into()]).unwrap();
        let mut c = Collector::new(Some(sel), 100.0);
        c.record((X, 0), 500.0, None);
        c.record((X, 3), 50.0, None);
        assert!(c.call((X, 0)).is_none());
        assert_eq!(c.call((X, 3)).unwrap().samples, vec![0.0]);
    }

    #[test]
    fn reservoir_keeps_exact_count_total_min_max() {
        let mut c = Collector::new(None, 0.0);
        let n = MAX_SAMPLES as u64 + 1000;
        for i in 0..n {
            c.record((X, 0), i as f64, None);
        }
        let s = c.call((X, 0)).unwrap();
        assert_eq!(s.count, n);
        assert_eq!(s.samples.len(), MAX_SAMPLES);
        assert_eq!(s.total_ns, (n * (n - 1) / 2) as f64);
        assert_eq!((s.min_ns, s.max_ns), (0.0, (n - 1) as f64));
    }

    #[test]
    fn paths_read_at_entry_are_tallied_at_exit() {
        let mut c = Collector::new(None, 0.0);
        let open = Some((X, 257));
        c.enter_with_path(1, open, 0, Some(PathArg::Read(b"/nope".to_vec())));
        c.exit(1, None, -2, true, 10);
        c.enter_with_path(1, open, 20, Some(PathArg::Unreadable));
        c.exit(1, None, 3, false, 30);
        c.enter_with_path(2, open, 0, Some(PathArg::Read(b"/cut".to_vec())));
        c.forget(2);
        let top = c.lookups.top(3);
        assert_eq!(top.len(), 1, "a call that never returned is not a lookup");
        assert_eq!((top[0].0.as_str(), top[0].1.failed()), ("/nope", 1));
        assert_eq!(c.lookups.unreadable, 1);
        assert_eq!(c.call((X, 257)).unwrap().count, 2);
    }
}
