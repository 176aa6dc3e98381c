//! The per-thread stacks of an off-CPU profile (`model::thread_stacks`): blocked time per
//! thread, stack (with source lines) and reason, and each interval (start, duration,
//! thread, reason, stack), the longest [`MAX_INTERVALS`] kept. Intervals are real only where
//! each was recorded (the perf backend); the in-kernel backend's are spread from its
//! histograms, so its result keeps none ([`ThreadStacks::timed`] false).

use super::blocks::Blocks;
use super::classify::classify;
use super::raw::OffRaw;
use crate::diagnose::observe::sampled::aggregate::{Analysis, EachSample};
use crate::diagnose::observe::sampled::threads::ThreadStacksBuilder;
use crate::model::thread_stacks::{Interval, MAX_INTERVALS, ThreadStacks};

/// The per-thread stacks of `blocks` (sample `i` of `each` is block `i`), with every
/// interval timed from the first switch-out recorded; `timed` says whether the intervals
/// were each recorded (else none is kept).
pub fn off_cpu(
    raw: &OffRaw,
    blocks: &Blocks,
    (analysis, each): (&Analysis, &EachSample),
    timed: bool,
) -> ThreadStacks {
    let mut b = ThreadStacksBuilder::new(analysis, each);
    let origin = raw.outs.iter().map(|o| o.time).min().unwrap_or(0);
    let mut intervals = Vec::new();
    for (i, block) in blocks.list.iter().enumerate() {
        let out = &raw.outs[block.out];
        let kernel = each.stacks[i]
            .iter()
            .map(|&f| analysis.stacks.frame(f))
            .filter(|f| f.kernel)
            .map(|f| f.name.as_str());
        // The reason as the record's `blocked stacks` name it (`page_fault`).
        let reason = serde_json::to_value(classify(kernel, out.arg)).ok();
        let reason = reason.as_ref().and_then(|r| r.as_str()).unwrap_or("other");
        let Some(stack) = b.add(i, (out.pid, out.tid), block.ns, Some(reason)) else {
            continue;
        };
        intervals.push(Interval {
            start_ns: out.time.saturating_sub(origin),
            duration_ns: block.ns,
            tid: out.tid,
            reason: reason.to_string(),
            stack,
        });
    }
    let mut stacks = b.finish(|pid, tid| match raw.side.thread_names.get(&tid) {
        Some(name) => name.clone(),
        None => raw.comm(pid),
    });
    stacks.timed = timed;
    if timed {
        stacks.keep_intervals(intervals, MAX_INTERVALS);
    }
    stacks
}
