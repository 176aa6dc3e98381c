//! Terminal text for the off-CPU part of a `profile` run (`--off-cpu`, `--both`): a summary
//! line, the time per reason, the blocked stacks (total, count, distribution of the
//! intervals, waker), the top stacks in full with their wakers' stacks, the findings.
//!
//! Pure: reads only the record (the `offcpu` and `offcpu.stacks` results, and the `blocked
//! stacks` JSON artifact). Depends on `model` and `model::units`.

use crate::report::table::styled;

use super::text::{bold, ending_with_findings, metric, title_line};
use crate::model::{ExperimentResult, RunRecord, Status, units};

/// Stacks shown in full.
const FULL_STACKS: usize = 3;

/// The off-CPU part as text (`header`: with the run's title and warnings, when no on-CPU
/// part precedes it); `None` without an `offcpu` result.
pub fn render(run: &RunRecord, color: bool, header: bool) -> Option<String> {
    let ok = |id: &str| {
        run.results
            .iter()
            .find(|r| r.id == id && r.status == Status::Ok)
    };
    let r = ok("offcpu")?;
    let mut lines = Vec::new();
    if header {
        lines.push(title_line(run));
        lines.extend(run.host.warnings.iter().map(|w| format!("warning: {w}")));
    }
    lines.push(summary(r));
    lines.push(String::new());
    lines.push(bold("Off-CPU time by reason:".into(), color));
    lines.push(reasons(r));
    if let Some(stacks) = ok("offcpu.stacks").filter(|s| !s.metrics.is_empty()) {
        lines.push(String::new());
        lines.push(bold(
            "Blocked stacks (the program's innermost function · reason; each interval from \
             switch-out to switch-in):"
                .into(),
            color,
        ));
        lines.push(stack_table(stacks));
    }
    lines.extend(full_stacks(r, color));
    Some(ending_with_findings(lines, r, color))
}

fn summary(r: &ExperimentResult) -> String {
    let ns = |name: &str| metric(r, name).map(units::duration_ns).unwrap_or_default();
    let count = |name: &str| metric(r, name).map(units::count).unwrap_or_default();
    let mut parts = vec![
        format!(
            "off-CPU {} in {} intervals",
            ns("off-CPU time"),
            count("intervals")
        ),
        format!("preempted {}", ns("preempted (runnable)")),
        format!("{} wall", ns("wall time")),
        format!("{} lost", count("lost records")),
    ];
    if let (Some(share), Some(cost)) = (
        metric(r, "in-target overhead (% of wall)"),
        metric(r, "cost per switch"),
    ) {
        parts.push(format!(
            "overhead ≈ {share:.2}% of wall in target ({}/switch)",
            units::duration_ns(cost)
        ));
    }
    if let Some(reader) = metric(r, "profiler CPU (% of wall)") {
        parts.push(format!("profiler {reader:.2}% CPU"));
    }
    parts.join(" · ")
}

fn reasons(r: &ExperimentResult) -> String {
    let mut t = styled(vec!["reason", "time", "intervals · share"], [1]);
    for m in r.metrics.iter() {
        if let Some(reason) = crate::model::offcpu::reason_of(m) {
            t.add_row(vec![
                reason.to_string(),
                units::duration_ns(m.summary.median),
                m.note.clone().unwrap_or_default(),
            ]);
        }
    }
    t.to_string()
}

fn stack_table(stacks: &ExperimentResult) -> String {
    let mut t = styled(
        vec![
            "where · reason",
            "median",
            "p95",
            "max",
            "count · total · share · waker",
        ],
        [1, 2, 3],
    );
    for m in &stacks.metrics {
        t.add_row(vec![
            m.name.clone(),
            units::duration_ns(m.summary.median),
            units::duration_ns(m.summary.p95),
            units::duration_ns(m.summary.max),
            m.note.clone().unwrap_or_default(),
        ]);
    }
    t.to_string()
}

/// The top stacks frame by frame (innermost first), each with its wakers.
fn full_stacks(r: &ExperimentResult, color: bool) -> Vec<String> {
    let Some(list) = r
        .artifact("blocked stacks")
        .and_then(|a| serde_json::from_str::<Vec<serde_json::Value>>(a).ok())
        .filter(|l| !l.is_empty())
    else {
        return Vec::new();
    };
    let mut lines = vec![
        String::new(),
        bold("Top blocked stacks and who woke them:".into(), color),
    ];
    for (n, s) in list.iter().take(FULL_STACKS).enumerate() {
        let ns = s["blocked_ns"].as_f64().unwrap_or(0.0);
        lines.push(format!(
            "#{} {} · {} in {} intervals",
            n + 1,
            s["reason"].as_str().unwrap_or("?").replace('_', " "),
            units::duration_ns(ns),
            s["count"].as_u64().unwrap_or(0)
        ));
        lines.extend(frames(&s["frames"], "    "));
        for w in s["wakers"].as_array().into_iter().flatten() {
            lines.push(format!(
                "  woken by {} ({}×, {})",
                w["who"].as_str().unwrap_or("?"),
                w["count"].as_u64().unwrap_or(0),
                units::duration_ns(w["blocked_ns"].as_f64().unwrap_or(0.0))
            ));
            lines.extend(frames(&w["stack"], "      "));
        }
    }
    lines
}

/// Frames innermost first, user frames and the kernel's system-call entry point only.
fn frames(list: &serde_json::Value, indent: &str) -> Vec<String> {
    let names: Vec<&str> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str())
        .collect();
    names
        .iter()
        .rev()
        .filter(|f| !f.ends_with("_[k]"))
        .map(|f| format!("{indent}{f}"))
        .collect()
}
