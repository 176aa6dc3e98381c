//! Loss as a result: when records or intervals were lost, the `lost` finding (first among
//! the `offcpu` findings, shown by the reports above everything else) says how many and
//! what share of the recording they affect, per backend: with the perf rings, records
//! lost against all records sent (each lost switch breaks an interval, each lost waking
//! hides a waker); in the kernel, intervals dropped or missing a stack (maps full) against
//! all intervals; and, with perf, the independent count of a launched command's context
//! switches that `observe::witness` judges (another BPF program on the tracepoint hid
//! them). Also the methodology of the in-kernel backend, for the result's `about`.

use super::Backend;
use super::result::Inputs;
use crate::diagnose::observe::session::SessionEnd;
use crate::diagnose::observe::witness::{self, Witness};
use crate::model::{Finding, units};

/// The `lost` finding (its value: the share affected, 0..1), or `None` when nothing was lost.
pub fn finding(i: &Inputs) -> Option<Finding> {
    let lost = i.raw.side.lost;
    if lost == 0 {
        return None;
    }
    let text = match i.backend {
        Backend::Perf => {
            let kept = (i.raw.outs.len() + i.raw.ins.len()) as u64 + i.raw.wakings_read;
            let share = lost as f64 / (lost + kept) as f64;
            let text = format!(
                "Incomplete: {} of {} records lost ({}; ring buffers full): about that share \
                 of the blocking intervals and wakers is missing, so the off-CPU times and \
                 counts below are too low, and no overhead estimate is given. `--backend \
                 bpf` aggregates in the kernel and loses none.",
                units::count(lost as f64),
                units::count((lost + kept) as f64),
                units::percent(share)
            );
            (text, share)
        }
        Backend::Bpf => {
            let (_, preempted) = i.analysis.preempted;
            let intervals = i.analysis.blocks.list.len() as u64 + preempted;
            let share = (lost as f64 / (lost + intervals).max(1) as f64).min(1.0);
            let text = format!(
                "Incomplete: {} intervals dropped or without a stack ({} of those recorded; \
                 the kernel's maps were full, or it did not report a switch).",
                units::count(lost as f64),
                units::percent(share)
            );
            (text, share)
        }
    };
    Some(Finding::new("lost", text.0, Some(text.1)))
}

/// With the perf backend on a launched command: the kernel's count of the command's
/// context switches (its rusage) beside the switch-outs the recording received, judged by
/// `observe::witness` (a BPF program on `sched_switch` that returns 0 keeps the kernel from
/// writing that tracepoint's perf samples: nothing is lost from a ring, the switches are
/// simply never sent). A switch-out is one context switch, so one record stands for at
/// most two counted switches before the session calls itself blinded.
pub fn witness(i: &Inputs) -> Option<Witness> {
    if i.backend != Backend::Perf {
        return None;
    }
    let (_, usage) = i.recording.exit.as_ref()?;
    Some(Witness {
        event: "sched:sched_switch",
        seen: i.raw.outs.len() as u64,
        seen_what: "switch-outs",
        lost: i.raw.side.lost,
        counted: usage.voluntary_switches + usage.involuntary_switches,
        counted_what: "context switches of the command (the kernel's rusage)",
        margin: 2,
    })
}

/// The findings `said` with the witness's verdict first (blinded: the switches were never
/// sent, and an empty recording proves nothing), after a loss from the rings, and the
/// session's end as the result embeds it.
pub fn judged(i: &Inputs, said: Vec<Finding>) -> (Vec<Finding>, SessionEnd) {
    let blinded = witness(i).and_then(Witness::judge);
    let said = finding(i).into_iter().chain(said).collect();
    let findings = witness::lead(blinded.as_ref(), BLINDED_FIX, said, &["no_blocking"]);
    let end = i.recording.end(i.raw.side.lost, blinded.as_ref());
    (findings, end)
}

/// How to see anyway, after a blinded run.
pub const BLINDED_FIX: &str =
    "Stop it (`bpftool perf` lists what sits on a tracepoint) or use `--backend bpf`.";

/// What the in-kernel backend does, for the result's `about`.
pub fn bpf_methodology(launched: bool) -> String {
    format!(
        "BPF programs (crates/sysmeter/bpf/offcpu.bpf.c, loaded by aya) on sched:sched_switch \
         aggregate in the kernel each interval from a thread's switch-out to its switch-in \
         per (thread, user and kernel stack ids, state, waker and its stacks): count, sum \
         and a log2 histogram (single durations are placed within their bucket; totals and \
         counts are exact); sched:sched_waking keeps the last waker; {}. A 512-byte user \
         stack snapshot per distinct stack repairs the callers of frameless libc wrappers. \
         No record per switch leaves the kernel; the maps are read once at the end. The \
         overhead is not estimated for this backend (docs/bpf.md has measured slowdowns).",
        match launched {
            true =>
                "the command's processes from its execve, children followed through \
                     sched_process_fork",
            false => "the attached process's threads",
        }
    )
}
