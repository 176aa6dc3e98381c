//! Terminal output: a header (run, host, profile, calibration, warnings), then per experiment
//! its estimates, a table of metrics (median, within-run 95% CI, run-to-run interval, p99,
//! cycles, notes) or the run kind's own table (`report::kinds`), series tables, findings, or
//! why it was skipped or failed.
//!
//! Pure: builds a string; never looks at the terminal itself (the caller decides `color`,
//! e.g. from `NO_COLOR` and whether stdout is a TTY). With `color == false` there is not a
//! single ANSI escape in the output.

use crate::model::units;

use super::format;
use super::kinds::KindView;
use crate::model::{Calibration, ExperimentResult, RunRecord, Status};

/// The whole run as terminal text, with the tables of its `kind` where it has its own.
pub(super) fn render(run: &RunRecord, kind: &dyn KindView, color: bool) -> String {
    let mut lines = header(run);
    if let Some(basis) = format::intervals_basis(run) {
        lines.extend([basis, format::INTERVALS_LEGEND.to_string()]);
    }
    for result in &run.results {
        lines.push(String::new());
        lines.extend(experiment(result, kind, color));
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// The only terminal sequences sysmeter writes itself (bold on, all styles off): the
/// console keeps them and escapes every other (`model::visible`).
pub const STYLES: [&str; 2] = ["\x1b[1m", "\x1b[0m"];

/// Bold on a colour terminal; untouched otherwise.
pub(super) fn bold(text: String, color: bool) -> String {
    if color {
        format!("{}{text}{}", STYLES[0], STYLES[1])
    } else {
        text
    }
}

/// Start time as RFC 3339 UTC to the second (raw ns if out of range).
pub(super) fn timestamp(ns: i64) -> String {
    match jiff::Timestamp::from_nanosecond(i128::from(ns)) {
        Ok(ts) => ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
        Err(_) => format!("{ns} ns since the epoch"),
    }
}

/// Run, host, configuration and calibration lines.
fn header(run: &RunRecord) -> Vec<String> {
    let mut run_line = format!(
        "sysmeter {} run {} · started {}",
        run.kind.as_str(),
        run.id,
        timestamp(run.started_ns)
    );
    if let Some(took) = super::format::wall_time_phrase(run) {
        run_line.push_str(&format!(" · {took}"));
    }
    if run.interrupted {
        run_line.push_str(" · INTERRUPTED (results below are the experiments that finished)");
    }
    let h = &run.host;
    let mut host = format!("host: {} · {} · {}", h.hostname, h.cpu.model, h.arch);
    if !h.kernel.is_empty() {
        host.push_str(&format!(" · Linux {}", h.kernel));
    }
    if let Some(v) = &h.virtualization {
        host.push_str(&format!(" · virtualized ({v})"));
    }
    let cpu = run.config.cpu.map_or_else(
        || "not pinned".to_string(),
        |c| format!("pinned to CPU {c}"),
    );
    let mut lines = vec![run_line];
    lines.extend(incomplete_line(run));
    lines.extend([
        host,
        format!(
            "profile: {} · {cpu} · seed {}",
            run.config.profile, run.config.seed
        ),
    ]);
    if let Some(cal) = &run.config.calibration {
        lines.push(calibration_line(cal));
        lines.extend(tsc_note(run, cal));
    }
    lines.extend(h.warnings.iter().map(|w| format!("warning: {w}")));
    lines
}

/// For a run whose process died (no end time, no Ctrl-C): what it is and which of the
/// selected experiments never got a result.
pub(super) fn incomplete_line(run: &RunRecord) -> Option<String> {
    if !run.is_incomplete() {
        return None;
    }
    let missing = run.missing_experiments();
    Some(match missing.is_empty() {
        true => format!(
            "{}: every selected experiment has a result, but the run was never closed",
            crate::model::INCOMPLETE
        ),
        false => format!(
            "{}: missing {} of {} experiments: {}",
            crate::model::INCOMPLETE,
            missing.len(),
            run.config.selected.len(),
            missing.join(", ")
        ),
    })
}

fn calibration_line(cal: &Calibration) -> String {
    let mut line = format!(
        "calibration: {} · timer overhead {} · loop overhead {} · min sample {}",
        cal.clock,
        units::duration_ns(cal.timer_overhead_ns),
        units::duration_ns(cal.loop_overhead_ns),
        units::duration_ns(cal.min_sample_ns),
    );
    if let Some(ghz) = cal.tsc_ghz {
        let source = cal.tsc_source.as_deref().unwrap_or("TSC");
        line.push_str(&format!(" · TSC {} GHz ({source})", units::sig3(ghz)));
    }
    line.push_str(
        "\nsubtracted from every sample: the timer pair, and the loop overhead per iteration \
         where the harness loop drives the operation (noted where ≥ 1% of the median)",
    );
    line
}

/// Says what the cycles column beside the times in ns means, and warns when frequency
/// scaling makes TSC ticks differ from core cycles.
fn tsc_note(run: &RunRecord, cal: &Calibration) -> Option<String> {
    let ghz = cal.tsc_ghz?;
    let cpu = &run.host.cpu;
    let scaling = match (&cpu.governor, cpu.boost) {
        (_, Some(true)) => Some("turbo/boost is on".to_string()),
        (Some(g), _) if g != "performance" => Some(format!("governor {g}")),
        _ => None,
    };
    Some(match scaling {
        Some(why) => format!(
            "cycles: TSC ticks at {} GHz, not core cycles: frequency scaling is active ({why})",
            units::sig3(ghz)
        ),
        None => format!("cycles: TSC ticks at {} GHz", units::sig3(ghz)),
    })
}

/// One experiment's section.
fn experiment(r: &ExperimentResult, kind: &dyn KindView, color: bool) -> Vec<String> {
    let mut lines = vec![bold(format!("== {} — {} ==", r.id, r.about.title), color)];
    match r.status {
        Status::Skipped => {
            let (reason, hint) = r
                .skip
                .as_ref()
                .map_or(("no reason recorded", ""), |s| (&s.reason, &s.hint));
            lines.push(if hint.is_empty() {
                format!("skipped: {reason}")
            } else {
                format!("skipped: {reason} — {hint}")
            });
        }
        Status::Failed => {
            let error = r.error.as_deref().unwrap_or("no error recorded");
            lines.push(format!("failed: {error}"));
        }
        Status::Ok => lines.extend(measured(r, kind)),
    }
    lines
}

/// Estimates, tables and findings of an experiment that ran.
fn measured(r: &ExperimentResult, kind: &dyn KindView) -> Vec<String> {
    let mut lines: Vec<String> = r
        .estimates
        .iter()
        .map(|e| format!("estimate: {}", format::estimate_line(e, &r.metrics)))
        .collect();
    if let Some(t) = kind.result_text(r) {
        lines.push(t);
    } else if !r.metrics.is_empty() {
        let (headers, rows) = format::metric_table(&r.metrics);
        lines.push(table(headers, rows.into_iter()));
    }
    lines.extend(format::machine_line(r));
    if super::timeline::is_timeline(&r.series) {
        lines.extend(super::timeline::render(&r.series));
    } else {
        for series in &r.series {
            lines.push(format!("{} by {}:", series.name, series.x_label));
            let (headers, rows) = format::series_table(series);
            lines.push(table(headers, rows.into_iter()));
        }
    }
    if r.metrics.is_empty() && r.series.is_empty() {
        lines.push("no metrics recorded".to_string());
    }
    lines.extend(r.findings.iter().map(|f| format!("  • {}", f.text)));
    lines
}

/// A table with numbers right-aligned: every column but the name and the notes.
fn table(headers: Vec<String>, rows: impl Iterator<Item = Vec<String>>) -> String {
    let numbers = 1..headers.len() - 1;
    super::table::render(headers, rows, numbers)
}
