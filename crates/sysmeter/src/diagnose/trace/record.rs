//! Turns a finished trace into the `trace` [`ExperimentResult`]: one metric per system call
//! (samples = per-call durations in ns after overhead subtraction, so `n` = the call count),
//! sorted by total time like `strace -c` (then by count, then by name), with the error
//! breakdown in the metric's note, and findings for the top call, errors, path lookups
//! (with the most looked-up paths as the `lookups` artifact under ptrace), the measured
//! overhead, the backend and why, and anything that limits the numbers.

mod findings;
pub(super) use findings::BLINDED_FIX;
pub(super) mod lookups;

use crate::model::call_note;
use std::time::Duration;

use super::run::Outcome;
use super::summary::CallStats;
use super::{Backend, TraceConfig, errno, names};
use crate::diagnose::observe::witness::{self, Witness};
use crate::model::{About, ExperimentResult, Metric, Summary, Unit};

/// Seed for the bootstrap CI of every call's median.
const SEED: u64 = 1;

fn methodology(out: &Outcome) -> String {
    let timing = match out.backend {
        Backend::Ptrace => {
            "A call's time is the tracer's CLOCK_MONOTONIC from its entry stop (or seccomp \
             stop) to its exit stop: wall time in the call, including blocking, plus one \
             ptrace round trip"
        }
        Backend::Tracepoint => {
            "A call's time is the difference of the kernel timestamps (CLOCK_MONOTONIC) of its \
             raw_syscalls sys_enter and sys_exit records: wall time in the call, including \
             blocking, plus part of the cost of writing the records"
        }
        Backend::Bpf => {
            "A call's time is the difference of the kernel's clock (bpf_ktime_get_ns) read by \
             the BPF programs on raw_syscalls sys_enter (last, after their own work) and \
             sys_exit (first): wall time in the call, including blocking. The kernel keeps a \
             count, a sum and a log2 histogram per thread and call, not each call: the \
             samples are the histogram's bucket middles scaled to the exact total, so \
             quantiles are accurate to a bucket while count, total and mean are exact"
        }
    };
    format!(
        "{timing}. The calibrated tracing cost inside that interval ({}) was subtracted from \
         every call (clamped at 0). Calls that never return (exit, exit_group) are not \
         counted, as in strace -c. Samples are per-call durations (up to {} per call kept; n, \
         mean, min and max are exact over all calls).",
        crate::model::units::duration_ns(out.overhead.inside_ns()),
        super::summary::MAX_SAMPLES
    )
}

fn about(cfg: &TraceConfig, out: &Outcome) -> About {
    About {
        title: "System-call summary".into(),
        measures: format!(
            "Per system call of `{}`: count, errors, total and mean time and share of the \
             total, via {}",
            cfg.target.text(),
            out.backend.as_str()
        ),
        methodology: methodology(out),
        references: vec![
            "strace -c / truss -c: per-call counts, errors and time".into(),
            "Khan & Nadgir, A Performance Optimization for C/C++ Systems That Employ \
             Time-Stamping (2004): `truss -c -p PID` to find hot calls"
                .into(),
        ],
    }
}

/// The error breakdown of a call: `ENOENT×12, EACCES×1`.
pub(super) fn error_text(s: &CallStats) -> Option<String> {
    if s.errors.is_empty() {
        return None;
    }
    let mut parts: Vec<(u64, i64)> = s.errors.iter().map(|(&e, &n)| (n, e)).collect();
    parts.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let text = parts
        .iter()
        .map(|&(n, e)| format!("{}×{n}", errno::name(e)))
        .collect::<Vec<_>>()
        .join(", ");
    Some(text)
}

/// Statistics of a call: quantiles and CI from the kept samples, n/mean/min/max exact.
fn summary(s: &CallStats) -> Summary {
    let mut summary = crate::stats::summarize(&s.samples, SEED).unwrap_or_default();
    summary.n = s.count as usize;
    summary.mean = s.total_ns / s.count.max(1) as f64;
    summary.min = s.min_ns;
    summary.max = s.max_ns;
    summary
}

fn metric(name: String, s: &CallStats, overhead_ns: f64) -> Metric {
    let note = error_text(s).map(|e| call_note::errors_text(s.error_count(), &e));
    Metric {
        subtracted_overhead_ns: overhead_ns,
        note,
        samples: s.samples.clone(),
        ..Metric::new(&name, Unit::Ns, summary(s))
    }
}

/// The calls, sorted like `strace -c`: total time, then count, descending, then name.
pub(super) fn sorted_calls(out: &Outcome) -> Vec<(String, &CallStats)> {
    let mut calls: Vec<(String, &CallStats)> = out
        .collector
        .calls()
        .iter()
        .map(|(&(arch, nr), s)| (names::name(arch, nr).into_owned(), s))
        .collect();
    calls.sort_by(|a, b| {
        b.1.total_ns
            .total_cmp(&a.1.total_ns)
            .then(b.1.count.cmp(&a.1.count))
            .then(a.0.cmp(&b.0))
    });
    calls
}

/// Builds the result of a trace that took `elapsed`.
pub(super) fn build(out: &Outcome, cfg: &TraceConfig, elapsed: Duration) -> ExperimentResult {
    let overhead = out.overhead.inside_ns();
    let calls = sorted_calls(out);
    let metrics = calls
        .iter()
        .map(|(name, s)| metric(name.clone(), s, overhead))
        .collect();
    let mut result = ExperimentResult::new("trace", about(cfg, out));
    result.metrics = metrics;
    // Blinded first, and then no "no system call was counted" from a source that saw none.
    let counted = calls.iter().map(|(_, s)| s.count).sum();
    let blinded = findings::witness(out, cfg, counted).and_then(Witness::judge);
    result.findings = witness::lead(
        blinded.as_ref(),
        findings::BLINDED_FIX,
        findings::all(out, cfg, &calls),
        &["no_calls"],
    );
    result.elapsed_ns = elapsed.as_nanos() as u64;
    result
        .findings
        .extend(out.session.exited(result.elapsed_ns));
    result.session = Some(out.session.end(blinded.as_ref()));
    result.artifacts.extend(lookups::artifact(out));
    result
}
