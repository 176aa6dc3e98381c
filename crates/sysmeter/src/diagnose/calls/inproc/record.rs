//! The `calls` result of an in-process run: one metric per function called (n = the exact
//! count; median and mean per call with the hook's calibrated cost removed, or a bound where
//! the time is below the hook's resolution), and findings for the backend, the total, the
//! top function, the hook's cost, and the exact counts per thread.
//!
//! Pure. Depends on `model` and the siblings `region` and `times`.

use std::collections::BTreeMap;

use super::Outcome;
use super::region::Slot;
use super::times::{Hook, PerCall, Totals, per_call};
use crate::diagnose::observe::session::Ended;
use crate::model::call_note::{UNTIMED, resolution_text, threads_text};
use crate::model::{About, ExperimentResult, Finding, Metric, Summary, Unit, units};

fn about(target: &str, every: u64) -> About {
    let timed = if every == 1 {
        "every call".to_string()
    } else {
        format!("one call in {every} per function and thread")
    };
    About {
        title: "Library-call summary".into(),
        measures: format!(
            "Per library function called by `{target}`: exact count, calling threads, and the \
             time per call (in process)"
        ),
        methodology: format!(
            "A library preloaded into the program points its GOT slots of the chosen \
             functions at counting stubs (LD_BIND_NOW=1, so IFUNC and vDSO targets are \
             final). Every call is counted per thread; {timed} is timed with the time-stamp \
             counter by replacing its return address. An empty function timed through the \
             same hook in the same run is the hook's own cost: its median is subtracted, and \
             a time within its spread is reported as below resolution."
        ),
        references: vec!["ltrace -c: per-function counts and time of library calls".into()],
    }
}

/// Each function's totals over all threads, by index (index 0, the calibration, apart).
fn totals(slots: &[Slot], funcs: usize) -> Vec<(Totals, usize)> {
    let mut all = vec![(Totals::default(), 0usize); funcs];
    for s in slots {
        for (i, f) in s.fns.iter().enumerate().take(funcs) {
            all[i].0.add(f);
            all[i].1 += usize::from(f.count > 0 && i > 0);
        }
    }
    all
}

fn metric(name: &str, t: &Totals, threads: usize, hook: &Hook, ns_per_tick: f64) -> Metric {
    let mut summary = Summary {
        n: t.count as usize,
        ..Summary::default()
    };
    let mut note = vec![
        threads_text(threads),
        format!("{} of {} calls timed", t.timed, t.count),
    ];
    match per_call(t, hook, ns_per_tick) {
        PerCall::Time { median_ns, mean_ns } => {
            (summary.median, summary.mean) = (median_ns, mean_ns)
        }
        PerCall::BelowResolution { bound_ns, mean_ns } => {
            (summary.median, summary.mean) = (bound_ns, mean_ns.min(bound_ns));
            note.push(resolution_text(&units::duration_ns(bound_ns)));
        }
        PerCall::Untimed => note.push(UNTIMED.into()),
    }
    Metric {
        subtracted_overhead_ns: hook.median_ns,
        note: Some(note.join("; ")),
        ..Metric::new(name, Unit::Ns, summary)
    }
}

fn per_thread(out: &Outcome) -> Option<Finding> {
    let names = &out.region.names;
    let lines: Vec<String> = out
        .region
        .slots
        .iter()
        .take(32)
        .map(|s| {
            let counts: Vec<String> = (1..names.len().min(s.fns.len()))
                .filter(|&i| s.fns[i].count > 0)
                .map(|i| format!("{} {}", names[i], s.fns[i].count))
                .collect();
            format!(
                "{} {}/{}: {}",
                s.exe,
                s.claim.pid,
                s.claim.tid,
                counts.join(", ")
            )
        })
        .collect();
    (!lines.is_empty()).then(|| {
        Finding::new(
            "per_thread",
            format!(
                "Exact counts per thread (program pid/tid): {}.",
                lines.join("; ")
            ),
            Some(lines.len() as f64),
        )
    })
}

fn hook_finding(hook: &Hook) -> Finding {
    Finding::new(
        "overhead",
        format!(
            "The hook's own share of a timed call, measured on {} calls of an empty function \
             through it: {} median, subtracted; resolution ±{} (its spread, at least one step \
             of the time-stamp counter, plus one step for subtracting one median from \
             another). An untimed call costs a few ns.",
            units::count(hook.timed as f64),
            units::duration_ns(hook.median_ns),
            units::duration_ns(hook.resolution_ns())
        ),
        Some(hook.median_ns),
    )
}

/// The result of an in-process run; `backend` is the sentence naming the backend.
pub fn build(out: &Outcome, target: &str, backend: &str) -> ExperimentResult {
    let funcs = out.region.names.len();
    let all = totals(&out.region.slots, funcs);
    let hook = all.first().map_or_else(Hook::default, |(cal, _)| {
        Hook::of(cal, out.ns_per_tick, f64::from(out.region.step))
    });
    let mut rows: BTreeMap<(i64, String), Metric> = BTreeMap::new();
    for (i, (t, threads)) in all.iter().enumerate().skip(1) {
        if t.count > 0 {
            let m = metric(&out.region.names[i], t, *threads, &hook, out.ns_per_tick);
            let total = -(m.summary.mean * t.count as f64) as i64;
            rows.insert((total, m.name.clone()), m);
        }
    }
    let mut result = ExperimentResult::new(super::super::CALLS_ID, about(target, out.every));
    result.metrics = rows.into_values().collect();
    // What was not counted comes first: every number below is then a lower bound.
    let lost = out.region.lost;
    let mut f: Vec<Finding> = (lost > 0)
        .then(|| {
            let text = format!(
                "{lost} thread(s) found no free slot and were not counted: every count below \
                 is a lower bound."
            );
            Finding::new("lost", text, Some(f64::from(lost)))
        })
        .into_iter()
        .collect();
    f.push(Finding::new("backend", format!("{backend}."), None));
    let count: u64 = result.metrics.iter().map(|m| m.summary.n as u64).sum();
    let total: f64 = result
        .metrics
        .iter()
        .map(|m| m.summary.mean * m.summary.n as f64)
        .sum();
    f.push(Finding::new(
        "total",
        format!(
            "{} library calls ({}) to {} function(s); about {} in all (mean per timed call \
             × count, hook removed).",
            units::count(count as f64),
            exactness(lost),
            result.metrics.len(),
            units::duration_ns(total)
        ),
        Some(total),
    ));
    f.push(hook_finding(&hook));
    f.extend(per_thread(out));
    f.extend(ended(out));
    result.findings = f;
    result
}

/// "exact" only when every thread was counted; else what the counts are.
pub(crate) fn exactness(threads_lost: u32) -> String {
    match threads_lost {
        0 => "exact".to_string(),
        n => format!("at least: {n} thread(s) not counted"),
    }
}

fn ended(out: &Outcome) -> Option<Finding> {
    let text = match out.session.ended {
        Ended::Finished => return None,
        Ended::Interrupted => {
            "Counting stopped by Ctrl-C; the counts are the command's until it ended."
        }
        Ended::Duration => "Counts read after --duration; the command kept running and counting.",
    };
    Some(Finding::new("ended", text.into(), None))
}
