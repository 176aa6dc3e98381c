//! Terminal text for a `profile` run, laid out like gprof's report: a summary line, the flat
//! profile (self %, cumulative %, self and total samples, total %), the call graph, the
//! findings. The generic table shows the same numbers less readably (the flat profile as a
//! metric per function), so a profile run reads as this (its view is `kinds/profile.rs`).
//!
//! Pure: reads only the record, in particular the `profile` result's `flat` (JSON) and
//! `callgraph` (text) artifacts. Depends on `model` and `model::units`.

use crate::model::units;
pub(super) use crate::report::text::bold;

use crate::model::{ExperimentResult, RunRecord, Status};

/// Rows of the flat profile shown.
const FLAT_ROWS: usize = 25;

/// The run as text; `None` when it holds no successful `profile` result (render it with the
/// generic renderer then).
pub fn render(run: &RunRecord, color: bool) -> Option<String> {
    let result = run
        .results
        .iter()
        .find(|r| r.id == "profile" && r.status == Status::Ok)?;
    let mut lines = header(run, result);
    let total = metric(result, "samples").unwrap_or(0.0);
    if let Some(table) = flat_table(result, total) {
        lines.push(String::new());
        let period = run_period_ms(run);
        lines.push(bold(
            format!("Flat profile (each sample ≈ {period} of CPU time):"),
            color,
        ));
        lines.push(table);
    }
    if let Some(cg) = result
        .artifact("callgraph")
        .filter(|c| !c.trim().is_empty())
    {
        lines.push(String::new());
        lines.push(bold(
            "Call graph (caller lines: samples through that caller; callee lines: samples \
             through that callee):"
                .to_string(),
            color,
        ));
        lines.push(cg.trim_end().to_string());
    }
    Some(ending_with_findings(lines, result, color))
}

/// The text of `lines` followed by a blank line and `r`'s findings: how both the on-CPU
/// and the off-CPU texts end.
pub(super) fn ending_with_findings(
    mut lines: Vec<String>,
    r: &ExperimentResult,
    color: bool,
) -> String {
    lines.push(String::new());
    lines.push(bold("Findings:".to_string(), color));
    lines.extend(r.findings.iter().map(|f| format!("  • {}", f.text)));
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

pub(super) fn metric(r: &ExperimentResult, name: &str) -> Option<f64> {
    r.metrics
        .iter()
        .find(|m| m.name == name)
        .map(|m| m.summary.median)
}

/// The sample period from the configured frequency (`999 Hz` → `1.00 ms`).
fn run_period_ms(run: &RunRecord) -> String {
    let hz: f64 = run
        .config
        .profile
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .parse()
        .unwrap_or(0.0);
    if hz > 0.0 {
        units::duration_ns(1e9 / hz)
    } else {
        "one period".to_string()
    }
}

/// The first line: run id, target, settings, start (and INTERRUPTED).
pub(super) fn title_line(run: &RunRecord) -> String {
    let target = run.config.selected.first().map_or("?", String::as_str);
    let mut first = format!(
        "sysmeter profile run {} · {} · {} · started {}",
        run.id,
        target,
        run.config.profile,
        crate::report::text::timestamp(run.started_ns)
    );
    if run.interrupted {
        first.push_str(" · INTERRUPTED");
    }
    first
}

fn header(run: &RunRecord, r: &ExperimentResult) -> Vec<String> {
    let first = title_line(run);
    let value = |name: &str, f: fn(f64) -> String| metric(r, name).map(f);
    let mut parts = vec![
        format!(
            "{} samples",
            value("samples", units::count).unwrap_or_default()
        ),
        format!(
            "{} lost",
            value("lost samples", units::count).unwrap_or_default()
        ),
    ];
    if let Some(cpu) = value("CPU time sampled", units::duration_ns) {
        parts.push(format!("{cpu} CPU sampled"));
    }
    if let Some(wall) = value("wall time", units::duration_ns) {
        parts.push(format!("{wall} wall"));
    }
    if let (Some(share), Some(cost)) = (
        metric(r, "in-target overhead (%)"),
        value("cost per sample", units::duration_ns),
    ) {
        parts.push(format!("overhead ≈ {share:.2}% in target ({cost}/sample)"));
    }
    if let Some(reader) = metric(r, "profiler CPU (% of sampled CPU)") {
        parts.push(format!("profiler {reader:.2}% CPU"));
    }
    let mut lines = vec![first, parts.join(" · ")];
    lines.extend(run.host.warnings.iter().map(|w| format!("warning: {w}")));
    lines
}

/// The flat profile table from the `flat` artifact, `None` if absent or empty.
fn flat_table(r: &ExperimentResult, total: f64) -> Option<String> {
    let rows: Vec<serde_json::Value> = r.artifact_json("flat")?;
    let total = total.max(1.0);
    let headers = vec![
        "% self", "cumul. %", "self", "total", "% total", "function", "module",
    ];
    let mut table = crate::report::table::styled(headers, 0..=4);
    let mut cumulative = 0.0;
    let mut shown = 0;
    for row in rows.iter().take(FLAT_ROWS) {
        let own = row["self_samples"].as_f64().unwrap_or(0.0);
        let all = row["total_samples"].as_f64().unwrap_or(0.0);
        if own == 0.0 && shown > 0 {
            // Rows without self samples are callers only: the call graph shows them.
            break;
        }
        cumulative += own;
        shown += 1;
        table.add_row(vec![
            format!("{:.1}", 100.0 * own / total),
            format!("{:.1}", 100.0 * cumulative / total),
            format!("{own:.0}"),
            format!("{all:.0}"),
            format!("{:.1}", 100.0 * all / total),
            row["function"].as_str().unwrap_or("?").to_string(),
            row["module"].as_str().unwrap_or("").to_string(),
        ]);
    }
    if shown == 0 {
        return None;
    }
    let mut text = table.to_string();
    let with_self = rows
        .iter()
        .filter(|r| r["self_samples"].as_f64().unwrap_or(0.0) > 0.0)
        .count();
    if with_self > shown {
        text.push_str(&format!(
            "\n({} more functions with self samples; --format json lists them all)",
            with_self - shown
        ));
    }
    Some(text)
}
