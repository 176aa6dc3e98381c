//! The default terminal view of a bench run: a short header, then per experiment its
//! headline metrics wrapped into a few lines, every series as one line (a sparkline, with the
//! cache levels or the knee the findings mark), the machine line when the machine moved, its
//! first findings, and "this machine at a glance" at the end. Metrics that are points of a
//! series are not repeated. `--full` gives the complete tables (`text`); JSON, CSV, Markdown
//! and HTML keep everything.
//!
//! Pure: builds a string; with `color == false` there is no ANSI escape in it.

use super::glance::{self, shown};
use super::{format, spark, text};
use crate::model::units::duration_ns;
use crate::model::{ExperimentResult, Finding, Metric, RunRecord, Status};

/// Width the metric lines are wrapped to.
pub const WIDTH: usize = 110;
/// Most lines of metrics per experiment; the rest is counted and left to `--full`.
pub const METRIC_LINES: usize = 3;
/// Most findings per experiment.
pub const FINDINGS: usize = 2;

/// The whole run, concisely.
pub fn render(run: &RunRecord, color: bool) -> String {
    let mut lines = header(run);
    for r in &run.results {
        lines.extend(experiment(r, color));
    }
    lines.push(String::new());
    lines.extend(glance::text(&glance::glance(run)));
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

fn header(run: &RunRecord) -> Vec<String> {
    let mut first = format!(
        "sysmeter {} run {} · started {}",
        run.kind.as_str(),
        run.id,
        text::timestamp(run.started_ns)
    );
    if let Some(took) = super::format::wall_time_phrase(run) {
        first.push_str(&format!(" · {took}"));
    }
    if run.interrupted {
        first.push_str(" · INTERRUPTED (below: the experiments that finished)");
    }
    let incomplete = text::incomplete_line(run);
    let mut second = format!("profile: {} · seed {}", run.config.profile, run.config.seed);
    if let Some(c) = run.config.cpu {
        second.push_str(&format!(" · pinned to CPU {c}"));
    }
    if let Some(cal) = &run.config.calibration {
        second.push_str(&format!(
            " · timer overhead {} (subtracted)",
            duration_ns(cal.timer_overhead_ns)
        ));
    }
    second.push_str(" · --full for every table");
    let mut lines = vec![first, second];
    lines.extend(format::intervals_basis(run).map(|b| format!("{b} · --full for both intervals")));
    lines.extend(incomplete);
    lines.extend(run.host.warnings.iter().map(|w| format!("warning: {w}")));
    lines
}

fn experiment(r: &ExperimentResult, color: bool) -> Vec<String> {
    let mut title = format!("== {} — {} ==", r.id, r.about.title);
    let body = match r.status {
        Status::Skipped => {
            let (reason, hint) = r
                .skip
                .as_ref()
                .map_or(("no reason recorded", ""), |s| (&s.reason, &s.hint));
            vec![match hint.is_empty() {
                true => format!("  skipped: {reason}"),
                false => format!("  skipped: {reason} — {hint}"),
            }]
        }
        Status::Failed => vec![format!(
            "  failed: {}",
            r.error.as_deref().unwrap_or("no error recorded")
        )],
        Status::Ok => {
            let (lines, hidden) = measured(r);
            if let Some(more) = hidden {
                title.push_str(&format!(" ({more} more with --full)"));
            }
            lines
        }
    };
    let mut lines = vec![text::bold(title, color)];
    lines.extend(body);
    lines
}

/// The lines of an experiment that ran, and what they leave to `--full` (`3 metrics, 2
/// findings`).
fn measured(r: &ExperimentResult) -> (Vec<String>, Option<String>) {
    let headline: Vec<&Metric> = r.metrics.iter().filter(|m| !in_series(r, m)).collect();
    let (mut lines, placed) = metric_lines(&headline);
    if r.id == "mem.latency" {
        let levels = glance_levels(r);
        if !levels.is_empty() {
            lines.push(format!("  levels: {}", levels.join(" · ")));
        }
    }
    if !super::timeline::is_timeline(&r.series) {
        lines.extend(r.series.iter().enumerate().map(|(i, s)| match i {
            0 => format!("  {}", spark::line_with_knee(s, &r.findings)),
            _ => format!("  {}", spark::line(s)),
        }));
    }
    if r.machine.as_ref().is_some_and(|m| !m.stable) {
        lines.extend(format::machine_line(r).map(|l| format!("  {l}")));
    }
    let shown = headline_findings(r);
    lines.extend(shown.iter().map(|f| format!("  • {}", f.text)));
    let mut hidden = Vec::new();
    match headline.len() - placed {
        0 => {}
        1 => hidden.push("1 metric".to_string()),
        n => hidden.push(format!("{n} metrics")),
    }
    match r.findings.len() - shown.len() {
        0 => {}
        1 => hidden.push("1 finding".to_string()),
        n => hidden.push(format!("{n} findings")),
    }
    (lines, (!hidden.is_empty()).then(|| hidden.join(", ")))
}

/// Whether `m` is a point of one of the experiment's series (the same unit, sample count
/// and median; not the whole summary, whose NaN statistics never compare equal): shown there.
fn in_series(r: &ExperimentResult, m: &Metric) -> bool {
    r.series.iter().filter(|s| s.y_unit == m.unit).any(|s| {
        s.points
            .iter()
            .any(|p| p.summary.n == m.summary.n && p.summary.median == m.summary.median)
    })
}

/// `name value` items joined with ` · ` and wrapped at [`WIDTH`], at most [`METRIC_LINES`];
/// how many metrics found a place. Noise is not flagged here: the noise line of the summary
/// and `--full` say it.
fn metric_lines(metrics: &[&Metric]) -> (Vec<String>, usize) {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut placed = 0;
    for m in metrics {
        let item = format!("{} {}", m.name, shown(m));
        if !current.is_empty() && current.chars().count() + 3 + item.chars().count() > WIDTH {
            lines.push(std::mem::take(&mut current));
            if lines.len() == METRIC_LINES {
                break;
            }
        }
        if !current.is_empty() {
            current.push_str(" · ");
        }
        current.push_str(&item);
        placed += 1;
    }
    if !current.is_empty() {
        lines.push(current);
    }
    (
        lines.into_iter().map(|l| format!("  {l}")).collect(),
        placed,
    )
}

fn glance_levels(r: &ExperimentResult) -> Vec<String> {
    glance::levels(r)
        .into_iter()
        .map(|(l, v)| format!("{l} {v}"))
        .collect()
}

/// The findings worth a line here: not the machine's (the machine line says it), not the
/// per-level details the levels line already shows; at most [`FINDINGS`].
fn headline_findings(r: &ExperimentResult) -> Vec<&Finding> {
    const DETAIL: [&str; 3] = ["machine.", "hierarchy.", "faults_per_page."];
    r.findings
        .iter()
        .filter(|f| !DETAIL.iter().any(|d| f.key.starts_with(d)))
        .take(FINDINGS)
        .collect()
}
