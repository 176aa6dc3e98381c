//! Turns a finished `calls` run into the `calls` [`ExperimentResult`]: one metric per function
//! that was called (samples = inclusive durations in ns after overhead subtraction, so `n` =
//! the call count; the note names the calling threads and where it was probed), sorted like
//! `strace -c` (total time, then count, then name), and findings for the top function, the
//! measured probe cost, and anything that limits the numbers.

use crate::model::call_note;
use std::time::Duration;

use super::collector::{FnStats, MAX_SAMPLES};
use super::session::Outcome;
use super::{CALLS_ID, CallsConfig};
use crate::model::{About, ExperimentResult, Finding, Metric, Summary, Unit, units};

fn about(cfg: &CallsConfig, out: &Outcome) -> About {
    About {
        title: "Library-call summary".into(),
        measures: format!(
            "Per library function called by `{}`: count, total, mean and median inclusive \
             time, share of the traced time, calling threads (uprobes)",
            cfg.target.text()
        ),
        methodology: format!(
            "Entry and return uprobes on the program's PLT stubs (unqualified names: every \
             call the program makes, IFUNC and vDSO targets included) or on a library's \
             definition (OBJECT:NAME), read through perf events. A call's time is the \
             difference of the kernel timestamps (CLOCK_MONOTONIC) of its entry and return \
             records: inclusive wall time. The calibrated probe cost inside that interval ({}) \
             was subtracted from every call, plus the whole cost per call ({}) of each probed \
             call nested inside it. Samples are per-call durations (up to {MAX_SAMPLES} per \
             function; n, mean, min and max are exact).",
            units::duration_ns(out.overhead.inside_ns()),
            units::duration_ns(out.overhead.added_ns()),
        ),
        references: vec![
            "ltrace -c: per-function counts and time of library calls".into(),
            "Khan & Nadgir, A Performance Optimization for C/C++ Systems That Employ \
             Time-Stamping (2004): time() called often enough to be worth caching"
                .into(),
        ],
    }
}

fn summary(s: &FnStats) -> Summary {
    let mut summary = crate::stats::summarize(&s.samples, 1).unwrap_or_default();
    summary.n = s.count as usize;
    summary.mean = s.total_ns / s.count.max(1) as f64;
    summary.min = s.min_ns;
    summary.max = s.max_ns;
    summary
}

fn metric(out: &Outcome, i: usize, s: &FnStats) -> Metric {
    let site = &out.sites[i];
    let place = if site.plt {
        format!("PLT of {}", site.object)
    } else {
        site.object.clone()
    };
    Metric {
        subtracted_overhead_ns: out.overhead.inside_ns(),
        note: Some(format!(
            "{}; probed at {place}",
            call_note::threads_text(s.threads.len())
        )),
        samples: s.samples.clone(),
        ..Metric::new(&site.name, Unit::Ns, summary(s))
    }
}

/// The called functions, sorted like `strace -c`.
fn sorted(out: &Outcome) -> Vec<(usize, &FnStats)> {
    let mut v: Vec<(usize, &FnStats)> = out
        .collector
        .stats()
        .iter()
        .enumerate()
        .filter(|(_, s)| s.count > 0)
        .collect();
    v.sort_by(|a, b| {
        b.1.total_ns
            .total_cmp(&a.1.total_ns)
            .then(b.1.count.cmp(&a.1.count))
            .then(out.sites[a.0].name.cmp(&out.sites[b.0].name))
    });
    v
}

fn findings(out: &Outcome, calls: &[(usize, &FnStats)]) -> Vec<Finding> {
    let mut f = Vec::new();
    let total: f64 = calls.iter().map(|(_, s)| s.total_ns).sum();
    let count: u64 = calls.iter().map(|(_, s)| s.count).sum();
    f.push(Finding::new(
        "total",
        format!(
            "{} library calls to {} function(s) took {} in all (inclusive, overhead removed).",
            units::count(count as f64),
            calls.len(),
            units::duration_ns(total)
        ),
        Some(total),
    ));
    if let Some((i, s)) = calls.first() {
        let share = if total > 0.0 { s.total_ns / total } else { 0.0 };
        f.push(Finding::new(
            "top_call",
            format!(
                "{} is the top function: {} calls, {} ({} of the traced time), {} each.",
                out.sites[*i].name,
                units::count(s.count as f64),
                units::duration_ns(s.total_ns),
                units::percent(share),
                units::duration_ns(s.total_ns / s.count.max(1) as f64)
            ),
            Some(s.total_ns),
        ));
    }
    let o = &out.overhead;
    f.push(Finding::new(
        "overhead",
        format!(
            "Each probed call cost {} more here (measured on {} calls: {} untraced, {} \
             probed); {} of it lies inside the timed interval and was subtracted.",
            units::duration_ns(o.added_ns()),
            units::count(o.calls as f64),
            units::duration_ns(o.untraced_ns),
            units::duration_ns(o.traced_ns),
            units::duration_ns(o.inside_ns())
        ),
        Some(o.added_ns()),
    ));
    f.extend(limits(out));
    // Records lost come first: every count after it is a lower bound.
    if let Some(i) = f.iter().position(|x| x.key == "lost") {
        let lost = f.remove(i);
        f.insert(0, lost);
    }
    f
}

fn limits(out: &Outcome) -> Vec<Finding> {
    let c = &out.collector;
    let mut f = Vec::new();
    if out.session.lost > 0 {
        let text = format!(
            "{} probe records were lost (a ring was full): counts are too low.",
            units::count(out.session.lost as f64)
        );
        f.push(Finding::new("lost", text, Some(out.session.lost as f64)));
    }
    if c.unmatched + c.unfinished > 0 {
        let text = format!(
            "{} return(s) without an entry (calls already running when tracing began) and {} \
             entr(ies) without a return (longjmp, thread ended inside) were not counted.",
            c.unmatched, c.unfinished
        );
        f.push(Finding::new(
            "unpaired",
            text,
            Some((c.unmatched + c.unfinished) as f64),
        ));
    }
    f.extend(
        out.notes
            .iter()
            .map(|n| Finding::new("note", n.clone(), None)),
    );
    f.extend(
        out.session
            .tracing_stopped("every probe was removed and the process keeps running"),
    );
    f
}

/// Builds the result of a run that took `elapsed`.
pub fn build(out: &Outcome, cfg: &CallsConfig, elapsed: Duration) -> ExperimentResult {
    let calls = sorted(out);
    let mut result = ExperimentResult::new(CALLS_ID, about(cfg, out));
    result.metrics = calls.iter().map(|&(i, s)| metric(out, i, s)).collect();
    result.findings = findings(out, &calls);
    result.elapsed_ns = elapsed.as_nanos() as u64;
    result
        .findings
        .extend(out.session.exited(result.elapsed_ns));
    result
}
