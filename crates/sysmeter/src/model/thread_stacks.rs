//! The per-thread stacks of a `profile` result (on-CPU samples) and of an `offcpu` result
//! (blocked nanoseconds per reason), with the source file and line of every frame where the
//! code's DWARF line table names them, and for an off-CPU profile recorded by the perf
//! backend a bounded list of its intervals (start, duration, thread, reason, stack). The
//! diagnoses write it as the result's [`THREAD_STACKS`] artifact (JSON); the exports
//! (`report/export/`) read it back with [`of`]. A record stored before it existed has no
//! such artifact and still loads: readers fall back to the folded stacks, which sum threads.
//! Depends on `model` types, serde and serde_json only.

use serde::{Deserialize, Serialize};

use super::{Artifact, ExperimentResult};

/// The name of the artifact that holds a result's [`ThreadStacks`].
pub const THREAD_STACKS: &str = "thread stacks";

/// At most this many off-CPU intervals are kept (the longest); the rest are counted in
/// [`ThreadStacks::intervals_dropped`].
pub const MAX_INTERVALS: usize = 10_000;

/// One place on a stack: a function and, where known, the source line of the place.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SourceFrame {
    /// Function name, as the folded stacks name it (without the kernel suffix).
    pub function: String,
    /// Short module name (`libc.so.6`, `[kernel]`), empty when unknown.
    #[serde(default)]
    pub module: String,
    /// A kernel function.
    #[serde(default)]
    pub kernel: bool,
    /// The source file of the place (the path the DWARF line table gives).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Its line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// One thread of the target.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Thread {
    /// Thread id.
    pub tid: u32,
    /// Its process.
    pub pid: u32,
    /// Its name (the last `comm` seen for it, else its process's).
    #[serde(default)]
    pub name: String,
}

/// One distinct stack of one thread, with its weight.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadStack {
    /// Thread id.
    pub tid: u32,
    /// Indices into [`ThreadStacks::frames`], outermost first.
    pub frames: Vec<u32>,
    /// Samples (`profile`) or nanoseconds off the CPU (`offcpu`).
    pub weight: u64,
    /// Why the thread was off the CPU (`offcpu` only), as the result's `blocked stacks`
    /// name it (`lock`, `page_fault`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One interval off the CPU.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interval {
    /// When it began, ns after the first switch-out recorded.
    pub start_ns: u64,
    /// How long the thread was off the CPU, ns.
    pub duration_ns: u64,
    /// Thread id.
    pub tid: u32,
    /// Why, as [`ThreadStack::reason`].
    pub reason: String,
    /// Index into [`ThreadStacks::stacks`].
    pub stack: u32,
}

/// The per-thread stacks of one result.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadStacks {
    /// Every place once.
    pub frames: Vec<SourceFrame>,
    /// The threads, by tid.
    pub threads: Vec<Thread>,
    /// The stacks, heaviest first.
    pub stacks: Vec<ThreadStack>,
    /// Whether each interval was recorded (the perf backend); the in-kernel backend sums
    /// intervals in the kernel and keeps none.
    #[serde(default)]
    pub timed: bool,
    /// The longest intervals (at most [`MAX_INTERVALS`]), by start.
    #[serde(default)]
    pub intervals: Vec<Interval>,
    /// Intervals left out of [`ThreadStacks::intervals`] by the cap.
    #[serde(default)]
    pub intervals_dropped: u64,
}

impl ThreadStacks {
    /// The name of thread `tid`, or `thread TID` when none is known.
    pub fn thread_name(&self, tid: u32) -> String {
        match self.threads.iter().find(|t| t.tid == tid) {
            Some(t) if !t.name.is_empty() => t.name.clone(),
            _ => format!("thread {tid}"),
        }
    }

    /// The artifact that stores it in a result.
    pub fn artifact(&self) -> Artifact {
        Artifact {
            name: THREAD_STACKS.into(),
            media_type: "application/json".into(),
            content: serde_json::to_string(self).unwrap_or_else(|_| "{}".into()),
        }
    }

    /// Keeps the longest `max` of `intervals`, ordered by start, and counts the others.
    pub fn keep_intervals(&mut self, mut intervals: Vec<Interval>, max: usize) {
        if intervals.len() > max {
            intervals.sort_by_key(|i| std::cmp::Reverse(i.duration_ns));
            self.intervals_dropped = (intervals.len() - max) as u64;
            intervals.truncate(max);
        }
        intervals.sort_by_key(|i| (i.start_ns, i.tid));
        self.intervals = intervals;
    }
}

/// The per-thread stacks of `r`, if it keeps them (records before they were kept do not).
pub fn of(r: &ExperimentResult) -> Option<ThreadStacks> {
    r.artifact_json(THREAD_STACKS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_intervals_are_kept_in_time_order_and_the_rest_counted() {
        let interval = |start_ns, duration_ns| Interval {
            start_ns,
            duration_ns,
            ..Interval::default()
        };
        let mut t = ThreadStacks::default();
        t.keep_intervals(vec![interval(30, 5), interval(10, 1), interval(20, 9)], 2);
        let kept: Vec<(u64, u64)> = t
            .intervals
            .iter()
            .map(|i| (i.start_ns, i.duration_ns))
            .collect();
        assert_eq!(kept, [(20, 9), (30, 5)]);
        assert_eq!(t.intervals_dropped, 1);
    }

    #[test]
    fn older_json_without_the_optional_fields_still_reads() {
        let json = r#"{"frames":[{"function":"main"}],"threads":[{"tid":7,"pid":7}],
                       "stacks":[{"tid":7,"frames":[0],"weight":3}]}"#;
        let t: ThreadStacks = serde_json::from_str(json).expect("reads");
        assert!(!t.timed && t.intervals.is_empty());
        assert_eq!(t.thread_name(7), "thread 7");
        assert_eq!(t.frames[0].line, None);
    }
}
