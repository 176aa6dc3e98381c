//! The findings of a trace: what dominates, what failed, what tracing cost and how it was
//! done, and everything that limits the numbers (calls that never returned, lost records,
//! a filter applied in user space, how tracing ended), and the witness of the tracepoint
//! backend (the kernel's own read and write counts: a BPF program on `raw_syscalls` may
//! hide the calls). Pure text from the outcome.

use super::super::run::Outcome;
use super::super::summary::CallStats;
use super::super::{Backend, TraceConfig};
use super::error_text;
use crate::diagnose::observe::backend::line;
use crate::diagnose::observe::witness::Witness;
use crate::model::Finding;
use crate::model::units::duration_ns;

/// `1 call`, `2 calls`.
fn n_calls(n: u64) -> String {
    if n == 1 {
        "1 call".into()
    } else {
        format!("{n} calls")
    }
}

/// Calls whose cost is usually avoidable when made very often (the time-stamping article:
/// time(2) called ~10 000 times a second).
const CHEAP_REPEATS: [&str; 6] = [
    "time",
    "gettimeofday",
    "clock_gettime",
    "getpid",
    "getppid",
    "gettid",
];

fn top(calls: &[(String, &CallStats)], total_ns: f64, total_calls: u64) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some((name, s)) = calls.first() else {
        return out;
    };
    let share = if total_ns > 0.0 {
        s.total_ns / total_ns
    } else {
        0.0
    };
    out.push(Finding::new(
        "top_call",
        format!(
            "{name} takes {:.1}% of the time in system calls: {}, {} each on average",
            share * 100.0,
            n_calls(s.count),
            duration_ns(s.total_ns / s.count.max(1) as f64)
        ),
        Some(share),
    ));
    if let Some((name, s)) = calls.iter().max_by_key(|(_, s)| s.count)
        && CHEAP_REPEATS.contains(&name.as_str())
        && s.count >= 1000
        && s.count * 4 >= total_calls
    {
        out.push(Finding::new(
            "repeated_cheap_call",
            format!(
                "{name} is {} of the {total_calls} calls: cache its result (or read the \
                 clock through the vDSO) instead of asking the kernel every time",
                s.count
            ),
            Some(s.count as f64),
        ));
    }
    out
}

fn errors(calls: &[(String, &CallStats)]) -> Option<Finding> {
    let failing: Vec<String> = calls
        .iter()
        .filter_map(|(name, s)| error_text(s).map(|e| format!("{name} {} ({e})", s.error_count())))
        .collect();
    let total: u64 = calls.iter().map(|(_, s)| s.error_count()).sum();
    (total > 0).then(|| {
        Finding::new(
            "errors",
            format!("{} failed: {}", n_calls(total), failing.join("; ")),
            Some(total as f64),
        )
    })
}

fn overhead(out: &Outcome) -> Finding {
    let o = &out.overhead;
    Finding::new(
        "overhead",
        format!(
            "tracing adds {} to every traced call (getppid: {} untraced, {} traced, {} calls \
             measured before the trace); {} of it falls between a call's two timestamps and \
             was subtracted from every call",
            duration_ns(o.added_ns()),
            duration_ns(o.untraced_ns),
            duration_ns(o.traced_ns),
            o.calls,
            duration_ns(o.inside_ns())
        ),
        Some(o.added_ns()),
    )
}

fn backend(out: &Outcome, cfg: &TraceConfig) -> Finding {
    let mut text = line("", out.backend.as_str(), &out.why);
    if out.backend == Backend::Ptrace {
        match out.pinned_cpu {
            Some(c) => text.push_str(&format!(
                "; tracer pinned to CPU {c}{}",
                if matches!(cfg.target, super::super::Target::Launch { .. }) {
                    " with the command (its threads share that CPU; --no-pin lets them spread)"
                } else {
                    ", where the process last ran"
                }
            )),
            None => text.push_str("; not pinned"),
        }
    }
    if cfg.selection.is_some() {
        text.push_str(match (out.backend, out.seccomp) {
            (Backend::Ptrace, true) => "; -e: a seccomp filter stopped only the selected calls",
            (Backend::Tracepoint, _) => "; -e: a tracepoint filter kept only the selected calls",
            (Backend::Bpf, _) => "; -e: every call counted in the kernel, the others left out",
            (Backend::Ptrace, false) => "; -e: calls filtered by the tracer",
        });
    }
    Finding::new("backend", text, None)
}

fn limits(out: &Outcome) -> Vec<Finding> {
    let mut v = Vec::new();
    let unfinished: u64 = out.collector.unfinished.values().sum();
    if unfinished > 0 {
        let list: Vec<String> = out
            .collector
            .unfinished
            .iter()
            .map(|(n, c)| format!("{n} ×{c}"))
            .collect();
        v.push(Finding::new(
            "unfinished",
            format!(
                "{} never returned and not counted (as in strace -c): {}",
                n_calls(unfinished),
                list.join(", ")
            ),
            Some(unfinished as f64),
        ));
    }
    if out.session.lost > 0 {
        let text = match out.backend {
            Backend::Bpf => format!(
                "Incomplete: {} system calls not counted ({:.2}% of those seen; an in-kernel \
                 map was full): the counts are lower bounds",
                out.session.lost,
                100.0 * out.session.lost as f64
                    / (out.session.lost + out.collector.total_calls()) as f64
            ),
            _ => format!(
                "{} trace records were lost (a ring buffer was full): the counts are lower \
                 bounds",
                out.session.lost
            ),
        };
        v.push(Finding::new("lost", text, Some(out.session.lost as f64)));
    }
    v.extend(
        out.notes
            .iter()
            .map(|n| Finding::new("note", n.clone(), None)),
    );
    v
}

/// Every finding of a trace, most important first.
pub(super) fn all(
    out: &Outcome,
    cfg: &TraceConfig,
    calls: &[(String, &CallStats)],
) -> Vec<Finding> {
    let total_ns: f64 = calls.iter().map(|(_, s)| s.total_ns).sum();
    let total_calls: u64 = calls.iter().map(|(_, s)| s.count).sum();
    let mut v = vec![Finding::new(
        "total",
        format!(
            "{} in {} of system-call time ({} distinct)",
            n_calls(total_calls),
            duration_ns(total_ns),
            calls.len()
        ),
        Some(total_calls as f64),
    )];
    if total_calls == 0 {
        v.push(Finding::new(
            "no_calls",
            "no system call was counted (check -e, or whether the process made any calls \
             while it was traced)"
                .into(),
            None,
        ));
    }
    v.extend(top(calls, total_ns, total_calls));
    v.extend(errors(calls));
    v.extend(super::lookups::findings(out, calls));
    v.push(overhead(out));
    v.push(backend(out, cfg));
    v.extend(limits(out));
    v.extend(
        out.session
            .tracing_stopped("the process was detached and keeps running"),
    );
    v
}

/// How to see anyway, after a blinded run.
pub(in crate::diagnose::trace) const BLINDED_FIX: &str = "Stop it (`bpftool perf` lists what sits on a \
    tracepoint) or use `--backend ptrace`.";

/// With the tracepoint backend and every call traced (no `-e`): the kernel's count of the
/// target's read and write calls while it was traced beside the calls counted. Every such
/// call is a system call the tracer should have seen, so it saw at least that many; half
/// of it is the margin.
pub(super) fn witness(out: &Outcome, cfg: &TraceConfig, total_calls: u64) -> Option<Witness> {
    if out.backend == Backend::Ptrace || cfg.selection.is_some() {
        return None;
    }
    Some(Witness {
        event: "raw_syscalls:sys_enter",
        seen: total_calls,
        seen_what: "system calls",
        lost: out.session.lost,
        counted: out.io.counted()?,
        counted_what: "read or write calls of the process (the kernel's /proc/PID/io)",
        margin: 2,
    })
}
