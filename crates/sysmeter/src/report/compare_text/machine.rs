//! The machine's speed in the rendered comparison: the line "machine speed B/A: 0.76", what
//! moved within a side, the set lines and the normalised-change cell. Nothing is printed
//! for runs without machine-state probes, so older runs render exactly as before.
//!
//! Pure: builds strings from the comparison.

use crate::model::units;
use crate::stats::compare::{
    CACHE_SPREAD, MetricComparison, RunComparison, RunSide, SampleComparison, SideMachine, Verdict,
};

use super::{ci_text, signed_percent};

fn ghz(x: f64) -> String {
    format!("{x:.2} GHz")
}

fn side_note(label: &str, s: &SideMachine) -> Option<String> {
    if s.probed == 0 {
        return Some(format!(
            "{label} has no machine-state probes (measured before sysmeter recorded them)."
        ));
    }
    if !s.moved {
        return None;
    }
    let mut line = format!("The machine moved within {label}");
    if let Some((lo, hi)) = s.core_ghz_range {
        line.push_str(&format!(
            ": core clock {}–{} ({})",
            ghz(lo),
            ghz(hi),
            signed_percent(hi / lo - 1.0)
        ));
    }
    if !s.unstable.is_empty() {
        line.push_str(&format!("; unstable: {}", s.unstable.join("; ")));
    }
    line.push('.');
    Some(line)
}

/// The machine speed lines; empty when neither side has a probe.
pub(super) fn machine_lines(cmp: &RunComparison) -> Vec<String> {
    let Some(m) = &cmp.sides.machine else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    match (m.ratio, m.a.core_ghz, m.b.core_ghz) {
        (Some(r), Some(ga), Some(gb)) => {
            let mut line = format!(
                "Machine speed B/A: {r:.2} (core clock {} in A, {} in B; median over {} \
                 experiment(s) probed in both",
                ghz(ga),
                ghz(gb),
                m.experiments
            );
            if let Some((lo, hi)) = m.ratio_range.filter(|(lo, hi)| hi > lo) {
                line.push_str(&format!(", {lo:.2}–{hi:.2}"));
            }
            line.push_str(").");
            lines.push(line);
        }
        _ => lines.push("Machine speed B/A: unknown.".to_string()),
    }
    lines.extend(side_note("A", &m.a));
    lines.extend(side_note("B", &m.b));
    lines
}

fn set_line(label: &str, set: &[RunSide]) -> Option<String> {
    (!set.is_empty()).then(|| {
        let ids: Vec<&str> = set.iter().map(|s| s.id.as_str()).collect();
        format!(
            "{label} is a set of {} runs: {}.",
            set.len(),
            ids.join(", ")
        )
    })
}

/// "A is a set of 3 runs: …" lines; empty for a single pair.
pub(super) fn set_lines(cmp: &RunComparison) -> Vec<String> {
    set_line("A", &cmp.sides.a_set)
        .into_iter()
        .chain(set_line("B", &cmp.sides.b_set))
        .collect()
}

/// Whether any metric has a normalised change (then the table gets its column).
pub(super) fn has_normalised(cmp: &RunComparison) -> bool {
    cmp.metrics.iter().any(|m| m.normalised_change.is_some())
}

/// Whether any metric was compared as a set (per-run medians).
pub(super) fn has_sets(cmp: &RunComparison) -> bool {
    cmp.metrics
        .iter()
        .any(|m| m.comparison.as_ref().is_some_and(|c| c.runs_test.is_some()))
}

/// The normalised change with its CI, or why there is none.
pub(super) fn normalised_cell(m: &MetricComparison) -> String {
    let Some(change) = m.normalised_change else {
        return if m.comparison.is_none() {
            crate::report::format::NONE.to_string()
        } else if m.scales_with_clock {
            "no probe".to_string()
        } else {
            "not scaled".to_string()
        };
    };
    match m.normalised.as_ref().and_then(SampleComparison::shown_ci) {
        Some(ci) => format!("{} {}", signed_percent(change), ci_text(ci)),
        None => signed_percent(change),
    }
}

/// The comparison the verdict was judged on: the normalised one when it was, else the raw.
pub(super) fn deciding(m: &MetricComparison) -> Option<&SampleComparison> {
    if m.judged_normalised {
        m.normalised.as_ref()
    } else {
        m.comparison.as_ref()
    }
}

/// The verdict cell's text before the REGRESSION mark.
pub(super) fn verdict_text(m: &MetricComparison, threshold: f64) -> String {
    let judged = deciding(m);
    let mut verdict = m.verdict.as_str().to_string();
    let beyond = judged
        .and_then(|c| c.change())
        .is_some_and(|ch| ch.abs() > threshold);
    if m.verdict == Verdict::NoChange && beyond {
        verdict.push_str(" (not significant)");
    }
    if m.judged_normalised && matches!(m.verdict, Verdict::Slower | Verdict::Faster) {
        verdict.push_str(" (after normalising)");
    }
    verdict
}

/// The explanation lines of the summary for normalising and sets.
pub(super) fn rule_lines(cmp: &RunComparison) -> Vec<String> {
    let mut lines = Vec::new();
    if has_normalised(cmp) {
        lines.push(format!(
            "normalised = the change after dividing out the machine's speed (the probes' core \
             clocks, per experiment) for metrics that scale with the core clock (docs/compare.md); \
             where the speed differs by more than {} their verdicts, p and --fail-above use it.",
            units::percent(cmp.options.machine_threshold)
        ));
    }
    if let Some(line) = history_line(cmp) {
        lines.push(line);
    } else if has_sets(cmp) && cmp.sides.a_set.is_empty() && cmp.sides.b_set.is_empty() {
        lines.push(
            "rounds: p and CI from a Welch t-test on the log of the per-round medians of each \
             run; the rounds of one run share the machine's state of that moment, so a change \
             of state between the two runs can still read as a change (docs/compare.md): \
             compare sets of runs measured apart before acting on a few-cycle metric."
                .to_string(),
        );
    } else if has_sets(cmp) {
        lines.push(
            "sets: p and CI from a Welch t-test on the log of the per-run (or per-round) \
             medians, so the noise between runs decides."
                .to_string(),
        );
    }
    lines.extend(shared_core_line(cmp));
    lines
}

/// One line when a single run's variance came from its host's stored runs: how many, and
/// the median between-run CV over the metrics.
fn history_line(cmp: &RunComparison) -> Option<String> {
    let noises: Vec<_> = (cmp.metrics.iter())
        .flat_map(|m| [m.run_noise_a, m.run_noise_b])
        .flatten()
        .collect();
    let runs = noises.iter().map(|n| n.runs).max()?;
    let mut cvs: Vec<f64> = noises.iter().map(|n| n.sd_log).collect();
    cvs.sort_by(f64::total_cmp);
    Some(format!(
        "history: p and CI from a Welch t-test between runs, each single run's variance at \
         least its host's between-run noise from up to {runs} stored runs of the same profile \
         (median between-run CV {}; docs/compare.md, \"History\"); --no-history judges the \
         runs alone.",
        units::percent(cvs[cvs.len() / 2])
    ))
}

/// One line when changes were put down to a core shared more on one side (the throughput
/// probe: an SMT sibling busy), with the median throughput ratio of those metrics, and one
/// when they were put down to the shared cache (the shared-cache probe).
fn shared_core_line(cmp: &RunComparison) -> Vec<String> {
    let busier: Vec<&MetricComparison> = (cmp.metrics.iter())
        .filter(|m| matches!(m.verdict, Verdict::MachineBusier | Verdict::MachineQuieter))
        .collect();
    let (by_cache, by_core): (Vec<&MetricComparison>, Vec<&MetricComparison>) = busier
        .into_iter()
        .partition(|m| m.cache_ratio.is_some_and(|r| r.max(1.0 / r) > CACHE_SPREAD));
    let mut lines = Vec::new();
    if let Some(median) = median_of(by_core.iter().filter_map(|m| m.throughput_ratio)) {
        lines.push(format!(
            "machine busier/quieter: {} metric(s) changed in the direction of the machine's \
             throughput probe (B/A {median:.2}; it halves when the core's other hardware thread \
             is busy, which the clock probe does not see); not judged and never a --fail-above \
             regression — compare runs measured on a quiet machine (docs/compare.md).",
            by_core.len()
        ));
    }
    if let Some(median) = median_of(by_cache.iter().filter_map(|m| m.cache_ratio)) {
        lines.push(format!(
            "machine busier/quieter: {} metric(s) changed in the direction of the shared-cache \
             probe (a 4 MiB chase, B/A {median:.2}: other CPUs or guests held a different share \
             of the last-level cache); not judged and never a --fail-above regression \
             (docs/compare.md).",
            by_cache.len()
        ));
    }
    lines
}

/// The middle value (upper median) of some ratios; `None` without any.
fn median_of(ratios: impl Iterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = ratios.collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}
