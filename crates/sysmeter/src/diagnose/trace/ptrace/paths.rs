//! Reading the path argument of a path-taking call at its entry stop, for the lookup tally.
//! The time spent reading (one `process_vm_readv` per page) is moved out of the call's
//! timed interval by starting the interval that much later, so reading paths does not
//! inflate the calls' times.

use std::collections::HashMap;

use sysmeter_sys::clock::{ClockId, clock_gettime_ns};

use super::super::lookups::{MAX_PATH_LEN, path_arg};
use super::super::names;
use super::super::summary::{CallKey, Collector, PathArg};

/// Knows which argument of which call is a path (cached per call).
#[derive(Debug, Default)]
pub(super) struct PathReader {
    arg: HashMap<CallKey, Option<usize>>,
}

impl PathReader {
    /// Enters call `key` of `tid` (stopped at its entry at `at`) into `c`, with its path
    /// argument when it takes one.
    pub fn enter(&mut self, c: &mut Collector, tid: i32, key: CallKey, args: &[u64; 6], at: i64) {
        let idx = *self
            .arg
            .entry(key)
            .or_insert_with(|| path_arg(&names::name(key.0, key.1)));
        let Some(idx) = idx else {
            return c.enter(tid, Some(key), at);
        };
        let t0 = clock_gettime_ns(ClockId::Monotonic);
        let path = match sysmeter_sys::ptrace::read_c_string(tid, args[idx], MAX_PATH_LEN) {
            Ok(p) => PathArg::Read(p.unwrap_or_default()),
            Err(_) => PathArg::Unreadable,
        };
        let spent = clock_gettime_ns(ClockId::Monotonic) - t0;
        c.enter_with_path(tid, Some(key), at + spent.max(0), Some(path));
    }
}
