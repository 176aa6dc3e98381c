//! What `sysmeter live` shows of a running program at one moment: the JSON of
//! `/api/snapshot` (docs/json-schema.md), which the page polls and `/metrics` turns into
//! OpenMetrics. Built by `diagnose::live` from its window; rendered by `report::live`. Every
//! text that came from the observed program (thread names, function and module names) is
//! already passed through `model::visible` when a view is built ([`shown`]).
//!
//! Depends on nothing but serde and [`super::visible`].

use serde::Serialize;

/// The whole view of one window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LiveView {
    /// What is observed (`./prog ARGS` or `PID 1234 (name)`).
    pub target: String,
    /// Seconds since observing began.
    pub elapsed_s: f64,
    /// The window this view covers, seconds (`None`: since the start).
    pub window_s: Option<u64>,
    /// The view is frozen (pause): observing goes on, the view stays as it was.
    pub paused: bool,
    /// How the program ended (`exit code 0`, `killed by SIGINT`), `None` while it runs.
    pub ended: Option<String>,
    /// CPU-clock samples per second of CPU time per thread.
    pub frequency: u64,
    /// CPU samples since observing began (grows while the program runs on a CPU).
    pub samples_total: u64,
    /// CPU samples in the window.
    pub samples_window: u64,
    /// Samples lost to full rings since the start.
    pub lost: u64,
    /// Every whole second of the window, oldest first.
    pub seconds: Vec<SecondRow>,
    /// The threads of the observed process in the window, busiest first.
    pub threads: Vec<ThreadRow>,
    /// Where the threads' time went in the window, summed over threads.
    pub split: Split,
    /// The flame graph of the window's on-CPU samples.
    pub flame: FlameNode,
    /// The functions with the most samples in the window (self, then total).
    pub top: Vec<FunctionRow>,
    /// The system calls counted in the kernel in the window, most first (empty when
    /// they are not counted).
    pub syscalls: Vec<CountRow>,
    /// What this session cannot see, one sentence each (a mechanism that needs root, a
    /// program that cannot be preloaded).
    pub unseen: Vec<String>,
}

/// One second of the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SecondRow {
    /// Seconds since the start at the end of this second.
    pub t: u64,
    /// CPU samples in this second.
    pub samples: u64,
    /// System calls made in this second (`None` when they are not counted).
    pub syscalls: Option<u64>,
    /// sysmeter's own CPU time in this second, as a share of one CPU (0.01 = 1%).
    pub own_cpu: f64,
}

/// One thread over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ThreadRow {
    /// Thread id.
    pub tid: i32,
    /// Its name (`comm`).
    pub name: String,
    /// Share of each second on a CPU (0..1), aligned with [`LiveView::seconds`].
    pub cpu: Vec<f64>,
    /// Share of each second runnable but waiting for a CPU.
    pub runq: Vec<f64>,
    /// Share of the window on a CPU.
    pub cpu_share: f64,
    /// Share of the window waiting for a CPU.
    pub runq_share: f64,
    /// Share of the window off the CPU and not runnable (blocked, sleeping).
    pub blocked_share: f64,
}

/// The time of all threads in the window, split three ways, in thread-seconds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Split {
    /// On a CPU.
    pub on_cpu_s: f64,
    /// Runnable, waiting for a CPU.
    pub runq_s: f64,
    /// Blocked or sleeping.
    pub blocked_s: f64,
}

/// One node of the flame graph: a function on a path from the root.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FlameNode {
    /// Function name (`all` at the root).
    pub n: String,
    /// Samples on this path.
    pub v: u64,
    /// Callees, most samples first (paths under 0.2% of the root folded into their caller).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub c: Vec<FlameNode>,
}

/// One function of the flat profile of the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FunctionRow {
    /// Function name.
    pub function: String,
    /// Short module name.
    pub module: String,
    /// Samples with the function as leaf.
    pub self_samples: u64,
    /// Samples with the function on the stack.
    pub total_samples: u64,
}

/// A name and how many times it happened in the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CountRow {
    /// The name (a system call).
    pub name: String,
    /// How many in the window.
    pub count: u64,
}

/// `text` from the observed program as a view shows it: with every acting character
/// escaped (`model::visible`).
pub fn shown(text: &str) -> String {
    super::visible::visible(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_name_with_an_escape_sequence_is_shown_escaped() {
        assert_eq!(shown("w\u{1b}[31mrk\u{202e}"), "w\\u001b[31mrk\\u202e");
        assert_eq!(shown("plain"), "plain");
    }
}
