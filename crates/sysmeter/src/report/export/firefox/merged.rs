//! The Firefox Profiler export of a record stored before threads were kept: its folded
//! stacks on one track, "all threads", the off-CPU reason of a stack from the record's
//! `blocked stacks` (its top stacks) and the time of stacks past them in `Off-CPU: reason
//! not kept`. Reads only the run record (`model`), through the parent's writer.

use serde::Deserialize;

use super::Writer;
use crate::model::ExperimentResult;

/// The category of off-CPU time whose stack is not among the record's top stacks.
pub(super) const UNCLASSIFIED: &str = "Off-CPU: reason not kept";
/// The one track of a record that kept no threads.
const MERGED: u32 = 0;
const MERGED_NAME: &str = "all threads (merged by sysmeter)";

/// One of the record's top blocked stacks (the `blocked stacks` artifact).
#[derive(Deserialize)]
struct Blocked {
    frames: Vec<String>,
    reason: String,
    blocked_ns: u64,
}

/// A record stored before threads were kept: its folded stacks on one track, the off-CPU
/// reasons of its top blocked stacks.
pub(super) fn merged(w: &mut Writer, on: Option<&str>, off: Option<(&str, &ExperimentResult)>) {
    if let Some(folded) = on {
        let category = w.category("On-CPU");
        let thread = w.thread(MERGED, MERGED_NAME, true);
        for (frames, samples) in lines(folded) {
            w.sample(thread, MERGED, &frames, category, samples, true);
        }
    }
    if let Some((folded, r)) = off {
        let blocked: Vec<Blocked> = r.artifact_json("blocked stacks").unwrap_or_default();
        w.off_cpu(folded, &blocked);
    }
}

/// The lines of folded stacks: frames outermost first, and the line's count.
fn lines(folded: &str) -> impl Iterator<Item = (Vec<String>, u64)> + '_ {
    folded.lines().filter_map(|line| {
        let (stack, count) = line.rsplit_once(' ')?;
        let count = count.parse().ok()?;
        Some((stack.split(';').map(str::to_string).collect(), count))
    })
}

impl Writer {
    /// The off-CPU stacks, each line's time split by the reasons the record gives it.
    fn off_cpu(&mut self, folded: &str, blocked: &[Blocked]) {
        for (frames, ns) in lines(folded) {
            let mut left = ns;
            let known = blocked.iter().filter(|b| b.frames == frames);
            let mut parts: Vec<(String, u64)> = known
                .map(|b| {
                    let part = b.blocked_ns.min(left);
                    left -= part;
                    (format!("Off-CPU: {}", b.reason.replace('_', " ")), part)
                })
                .collect();
            parts.push((UNCLASSIFIED.to_string(), left));
            for (name, part) in parts.into_iter().filter(|p| p.1 > 0) {
                let category = self.category(&name);
                let periods = self.off_periods(part);
                let thread = self.thread(MERGED, MERGED_NAME, true);
                self.sample(thread, MERGED, &frames, category, periods, false);
            }
        }
    }
}
