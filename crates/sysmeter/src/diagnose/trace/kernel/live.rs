//! The in-kernel backend as a live counter (`observe::call_counter::CallCounter`): the
//! programs loaded once, the observed process made a target when it is known, and the
//! calls map read into the one [`Collector`] at every read (per call, every thread and
//! every followed process together). Used by `sysmeter live`.

use std::collections::HashMap;

use super::super::names;
use super::{KernelTrace, collect};
use crate::diagnose::observe::call_counter::CallCounter;

/// The loaded programs, counting for a live view.
pub struct Counter(pub(in super::super) KernelTrace);

impl CallCounter for Counter {
    fn target(&mut self, pid: i32) {
        // A process that cannot be made a target leaves the counts empty, which the view
        // shows as no calls.
        let _ = self.0.target(pid);
    }

    fn read(&mut self) -> HashMap<String, u64> {
        let Ok(maps) = self.0.read() else {
            return HashMap::new();
        };
        let (collector, _) = collect(&maps, (None, 0.0), |_| true, false);
        let mut out: HashMap<String, u64> = HashMap::new();
        for (&(arch, nr), stats) in collector.calls() {
            *out.entry(names::name(arch, nr).into_owned()).or_default() += stats.count;
        }
        out
    }
}
