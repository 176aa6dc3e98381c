//! The findings of a profile, each one or two sentences: the hottest functions, how complete
//! the stacks are (and which code without frame pointers cut them), what could not be
//! named, whether kernel time was seen, lost or throttled samples, and the overhead.

use super::overhead::Calibration;
use crate::diagnose::observe::sampled::aggregate::Analysis;
use crate::diagnose::observe::sampled::session::Recording;
use crate::diagnose::observe::sampled::stacks::{Stacks, Truncation};
use crate::diagnose::observe::session::Ended;
use crate::diagnose::observe::unwind::Stops;
use crate::model::Finding;
use crate::model::units;

/// Functions named in the hottest-function findings.
const HOTTEST: usize = 3;

/// `1 sample`, `2 samples`.
fn samples(n: u64) -> String {
    if n == 1 {
        "1 sample".into()
    } else {
        format!("{n} samples")
    }
}

fn pct(part: u64, whole: u64) -> f64 {
    100.0 * part as f64 / whole.max(1) as f64
}

fn label(stacks: &Stacks, id: u32) -> String {
    let f = stacks.frame(id);
    if f.module.is_empty() || f.name.contains(&f.module) {
        f.name.clone()
    } else {
        format!("{} ({})", f.name, f.module)
    }
}

/// Every finding of a profile, most important first.
pub fn all(rec: &Recording, a: &Analysis, cal: &Calibration) -> Vec<Finding> {
    let total = a.stacks.total();
    if total == 0 {
        let none = Finding::new(
            "no_samples",
            "No samples: the target used no CPU time while sampled (it slept or waited), or it \
             ended before its first sample; try a longer run or a higher -F."
                .into(),
            Some(0.0),
        );
        return std::iter::once(none).chain(ending(rec)).collect();
    }
    let mut out = hottest(&a.stacks, total);
    let stops = &rec.data.raw.stops;
    out.push(truncation(&a.stacks, &a.stacks.truncation(), stops));
    // With the stacks unwound by their CFI, a frameless leaf no longer hides its caller.
    if stops.total() == 0 {
        out.extend(frameless(&a.stacks, &a.frameless, total));
    }
    if a.unknown_leaf > 0 {
        out.push(Finding::new(
            "unknown_symbols",
            format!(
                "{} samples ({:.1}%) are in code without symbols (shown per function as \
                 module+0xADDRESS, the function's entry in the unwind table, or as [unknown …] \
                 where no table covers it); stripped binaries need their debug symbols \
                 (-dbgsym packages, /usr/lib/debug).",
                a.unknown_leaf,
                pct(a.unknown_leaf, total)
            ),
            Some(a.unknown_leaf as f64),
        ));
    }
    out.push(kernel(rec, a, total));
    out.extend(preemption(&a.stacks, total));
    out.extend(losses(rec));
    out.push(overhead(rec, cal));
    out.extend(scope(rec, a));
    out
}

fn hottest(stacks: &Stacks, total: u64) -> Vec<Finding> {
    stacks
        .flat()
        .into_iter()
        .filter(|r| r.self_samples > 0)
        .take(HOTTEST)
        .enumerate()
        .map(|(i, r)| {
            Finding::new(
                &format!("hottest_{}", i + 1),
                format!(
                    "#{} {}: {:.1}% of samples in its own code, {:.1}% with its callees.",
                    i + 1,
                    label(stacks, r.frame),
                    pct(r.self_samples, total),
                    pct(r.total_samples, total)
                ),
                Some(r.self_samples as f64 / total as f64),
            )
        })
        .collect()
}

/// Names shown in the frameless-leaf finding.
const FRAMELESS_NAMED: usize = 5;

fn frameless(stacks: &Stacks, list: &[(u32, u64)], total: u64) -> Option<Finding> {
    if list.is_empty() {
        return None;
    }
    let samples: u64 = list.iter().map(|&(_, n)| n).sum();
    let mut names: Vec<String> = list
        .iter()
        .take(FRAMELESS_NAMED)
        .map(|&(id, n)| format!("{} {n}", label(stacks, id)))
        .collect();
    if list.len() > FRAMELESS_NAMED {
        names.push(format!("and {} more", list.len() - FRAMELESS_NAMED));
    }
    Some(Finding::new(
        "frameless_leaf",
        format!(
            "Hot functions that do not save the frame pointer on entry (x86-64 prologue check):              {}; {samples} samples ({:.1}%) in all. In those samples the function's immediate              caller is missing from the stack (the walk starts at the caller's frame), so the              call graph shows the caller's caller instead.",
            names.join(", "),
            pct(samples, total)
        ),
        Some(samples as f64),
    ))
}

fn truncation(stacks: &Stacks, t: &Truncation, stops: &Stops) -> Finding {
    if t.truncated == 0 {
        let how = match stops.total() {
            0 => "frame pointers were intact".to_string(),
            _ => format!(
                "unwound with the binaries' DWARF CFI from {} of stack copied per sample",
                units::bytes(f64::from(stops.copy_bytes))
            ),
        };
        return Finding::new(
            "truncated_stacks",
            format!(
                "All {} user stacks reach an entry point (_start, libc's start code or a thread \
                 start): {how}.",
                t.user_samples
            ),
            Some(0.0),
        );
    }
    let top: Vec<String> = t
        .by_outermost
        .iter()
        .take(3)
        .map(|&(id, n)| format!("{n} at {}", label(stacks, id)))
        .collect();
    Finding::new(
        "truncated_stacks",
        format!(
            "{} of {} samples ({:.1}%) have stacks that end before an entry point ({} of them \
             with one frame only); they stop at: {}. {}",
            t.truncated,
            t.user_samples,
            pct(t.truncated, t.user_samples),
            t.depth_one,
            top.join(", "),
            stops.explain()
        ),
        Some(t.truncated as f64 / t.user_samples.max(1) as f64),
    )
}

fn kernel(rec: &Recording, a: &Analysis, total: u64) -> Finding {
    if rec.data.kernel {
        Finding::new(
            "kernel_samples",
            format!(
                "Kernel call chains were sampled: {} ({:.1}%) were in the kernel (system \
                 calls, page faults, interrupts on the target's behalf).",
                samples(a.kernel_leaf),
                pct(a.kernel_leaf, total)
            ),
            Some(a.kernel_leaf as f64 / total as f64),
        )
    } else {
        Finding::new(
            "kernel_samples",
            "Kernel time was not sampled (not root and perf_event_paranoid > 1): time in system \
             calls is missing from every share; run as root or `sysctl \
             kernel.perf_event_paranoid=1` to include it."
                .into(),
            None,
        )
    }
}

/// Kernel functions of the path that switches a task out and back in.
const SWITCH_PATH: [&str; 7] = [
    "asm_sysvec_reschedule_ipi",
    "irqentry_exit_to_user_mode",
    "__schedule",
    "schedule",
    "preempt_schedule",
    "preempt_schedule_irq",
    "finish_task_switch",
];

/// Samples taken while the target was being switched out or back in: on a contended
/// machine the CPU-clock timer, stopped at the switch, fires again just after the target
/// resumes, still in the kernel. Those samples are charged to the scheduler, not to the
/// program's functions, whose shares shrink by as much (their ratios do not change).
fn preemption(stacks: &Stacks, total: u64) -> Option<Finding> {
    let n = stacks.kernel_samples_through(|f| {
        SWITCH_PATH.iter().any(|p| {
            f.name == *p
                || f.name
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('.'))
        })
    });
    (pct(n, total) >= 1.0).then(|| {
        Finding::new(
            "preemption",
            format!(
                "{} ({:.1}%) were taken in the kernel while the target was switched out or \
                 back in (reschedule interrupt, context switch): the CPUs were contended. The \
                 program's own functions lose that share of samples; their ratios are not \
                 affected. Profile on an idle machine for cleaner shares.",
                samples(n),
                pct(n, total)
            ),
            Some(n as f64 / total as f64),
        )
    })
}

fn losses(rec: &Recording) -> Vec<Finding> {
    let mut out = Vec::new();
    if rec.data.raw.lost > 0 {
        out.push(Finding::new(
            "lost_samples",
            format!(
                "The kernel dropped {} samples because a ring buffer was full; shares can be \
                 biased: lower -F.",
                rec.data.raw.lost
            ),
            Some(rec.data.raw.lost as f64),
        ));
    }
    if rec.data.raw.throttles > 0 {
        out.push(Finding::new(
            "throttled",
            format!(
                "The kernel throttled sampling {} times (sample interrupts took too long at \
                 {} Hz); lower -F.",
                rec.data.raw.throttles, rec.data.frequency
            ),
            Some(rec.data.raw.throttles as f64),
        ));
    }
    out
}

fn overhead(rec: &Recording, cal: &Calibration) -> Finding {
    let share = 100.0 * cal.in_target_share(rec.data.frequency);
    let reader = rec
        .profiler_share()
        .map(|share| {
            format!(
                "; reading the ring buffers took CPU time equal to {:.2}% of the CPU time \
                 sampled, on another CPU when one is free",
                100.0 * share
            )
        })
        .unwrap_or_default();
    let stops = &rec.data.raw.stops;
    let unwinding = stops
        .ns_per_walk()
        .map(|ns| {
            format!(
                ", {:.1} µs of it per stack unwound ({} copied per sample, at most {} of it \
                 read by one walk)",
                ns / 1000.0,
                units::bytes(f64::from(stops.copy_bytes)),
                units::bytes(stops.deepest as f64)
            )
        })
        .unwrap_or_default();
    Finding::new(
        "overhead",
        format!(
            "Overhead: one sample cost the target {:.2} µs (measured at {} Hz before the run), \
             so about {share:.2}% of its CPU time at {} Hz (an estimate: at low rates a sample \
             can cost up to twice as much; scripts/profile-overhead.sh measures the slowdown \
             side by side){reader}{unwinding}.",
            cal.per_sample_ns / 1000.0,
            cal.frequency,
            rec.data.frequency
        ),
        Some(share),
    )
}

fn scope(rec: &Recording, a: &Analysis) -> Vec<Finding> {
    let mut out = Vec::new();
    if a.processes > 1 || a.threads > 1 {
        out.push(Finding::new(
            "tasks",
            format!(
                "Samples came from {} processes and {} threads.",
                a.processes, a.threads
            ),
            Some(a.threads as f64),
        ));
    }
    if let Some((exit, _)) = rec.exit {
        let how = match (exit.code(), exit.signal()) {
            (Some(c), _) => format!("exited with code {c}"),
            (None, Some(s)) => format!("was killed by signal {s}"),
            (None, None) => "ended".to_string(),
        };
        out.push(Finding::new(
            "exit",
            format!("The command {how}."),
            Some(f64::from(exit.shell_code())),
        ));
    }
    out.extend(ending(rec));
    out
}

/// How sampling ended, when it did not end with the command it launched.
fn ending(rec: &Recording) -> Option<Finding> {
    match (rec.stop, rec.exit.is_some()) {
        (Ended::Duration, true) => Some(Finding::new(
            "stopped",
            "Sampling stopped at --duration; the command then ran on unobserved to its end.".into(),
            None,
        )),
        (Ended::Duration | Ended::Interrupted, false) => Some(Finding::new(
            "stopped",
            "Sampling stopped and detached; the process runs on unharmed. Threads that lived \
             shorter than a rescan (20 ms) and forked children were not sampled."
                .into(),
            None,
        )),
        (Ended::Finished, false) => rec.exited(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::sampled::stacks::Frame;

    fn frame(name: &str, kernel: bool) -> Frame {
        Frame {
            name: name.into(),
            module: if kernel { "[kernel]" } else { "p" }.into(),
            kernel,
            known: true,
        }
    }

    #[test]
    fn preemption_counts_samples_in_the_switch_path_only() {
        let mut s = Stacks::default();
        let ids: Vec<u32> = [
            frame("main", false),
            frame("hot", false),
            frame("finish_task_switch.isra.0", true),
            frame("do_syscall_64", true),
            frame("schedule_timeout", true),
        ]
        .into_iter()
        .map(|f| s.intern(f))
        .collect();
        s.add(vec![ids[0], ids[1]], 90);
        s.add(vec![ids[0], ids[1], ids[2]], 8);
        s.add(vec![ids[0], ids[3], ids[4]], 2);
        let f = preemption(&s, 100).expect("8% is reported");
        assert_eq!(f.value, Some(0.08));
        assert!(f.text.starts_with("8 samples (8.0%)"), "{}", f.text);
        assert!(preemption(&s, 10_000).is_none(), "below 1% is not reported");
    }
}
