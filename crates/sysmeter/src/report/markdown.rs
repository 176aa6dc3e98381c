//! Markdown output (GitHub-flavoured): a title and host line, then per experiment its
//! methodology, estimates, a metrics table like the terminal one (or the run kind's own,
//! `report::kinds`), series tables and findings
//! as a bullet list; for pasting into issues, READMEs and pull requests.
//!
//! Pure: builds a string from the record.

use super::format;
use super::kinds::KindView;
use super::text::timestamp;
use crate::model::units;
use crate::model::{ExperimentResult, RunRecord, Status};

/// The whole run as markdown, with the tables of its `kind` where it has its own.
pub(super) fn render(run: &RunRecord, kind: &dyn KindView) -> String {
    let mut blocks = vec![
        format!("# sysmeter run {}", escape(&run.id)),
        host_line(run),
    ];
    if let Some(basis) = format::intervals_basis(run) {
        blocks.push(escape(&format!("{basis}. {}.", format::INTERVALS_LEGEND)));
    }
    for result in &run.results {
        blocks.extend(experiment(result, kind));
    }
    let mut out = blocks.join("\n\n");
    out.push('\n');
    out
}

/// Makes text safe inside a table cell or a line: pipes escaped, line breaks flattened.
fn escape(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

fn host_line(run: &RunRecord) -> String {
    let h = &run.host;
    let mut line = format!(
        "**Host:** {} · {} · {} · Linux {} · {} run started {} · profile {}",
        escape(&h.hostname),
        escape(&h.cpu.model),
        escape(&h.arch),
        escape(&h.kernel),
        run.kind.as_str(),
        timestamp(run.started_ns),
        escape(&run.config.profile),
    );
    if let Some(ghz) = run.config.calibration.as_ref().and_then(|c| c.tsc_ghz) {
        line.push_str(&format!(
            " · cycles are TSC ticks at {} GHz",
            units::sig3(ghz)
        ));
    }
    if run.interrupted {
        line.push_str(" · **interrupted**");
    }
    if let Some(incomplete) = super::text::incomplete_line(run) {
        line.push_str(&format!(" · **{}**", escape(&incomplete)));
    }
    line
}

/// A GFM table; the first and last columns left-aligned, numbers right-aligned.
fn table(headers: Vec<String>, rows: impl Iterator<Item = Vec<String>>) -> String {
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| escape(c)).collect();
        format!("| {} |", cells.join(" | "))
    };
    // Numbers right-aligned: every column but the name and the notes.
    let numbers = "--:|".repeat(headers.len().saturating_sub(2));
    let mut lines = vec![line(&headers), format!("|---|{numbers}---|")];
    lines.extend(rows.map(|r| line(&r)));
    lines.join("\n")
}

/// One experiment as markdown blocks.
fn experiment(r: &ExperimentResult, kind: &dyn KindView) -> Vec<String> {
    let mut blocks = vec![format!("## {} — {}", escape(&r.id), escape(&r.about.title))];
    if !r.about.methodology.is_empty() {
        blocks.push(r.about.methodology.clone());
    }
    match r.status {
        Status::Skipped => blocks.push(match &r.skip {
            Some(s) => format!("*Skipped:* {} — {}", s.reason, s.hint),
            None => "*Skipped.*".to_string(),
        }),
        Status::Failed => blocks.push(format!(
            "*Failed:* {}",
            r.error.as_deref().unwrap_or("no error recorded")
        )),
        Status::Ok => blocks.extend(measured(r, kind)),
    }
    blocks
}

fn measured(r: &ExperimentResult, kind: &dyn KindView) -> Vec<String> {
    let mut blocks = Vec::new();
    if !r.estimates.is_empty() {
        let lines: Vec<String> = r
            .estimates
            .iter()
            .map(|e| format!("- estimate: {}", format::estimate_line(e, &r.metrics)))
            .collect();
        blocks.push(lines.join("\n"));
    }
    if let Some(t) = kind.result_markdown(r) {
        blocks.push(t);
    } else if !r.metrics.is_empty() {
        let (headers, rows) = format::metric_table(&r.metrics);
        blocks.push(table(headers, rows.into_iter()));
    }
    blocks.extend(format::machine_line(r).map(|l| escape(&l)));
    for series in &r.series {
        blocks.push(format!(
            "### {} by {}",
            escape(&series.name),
            escape(&series.x_label)
        ));
        let (headers, rows) = format::series_table(series);
        blocks.push(table(headers, rows.into_iter()));
    }
    if !r.findings.is_empty() {
        let lines: Vec<String> = r.findings.iter().map(|f| format!("- {}", f.text)).collect();
        blocks.push(format!("**Findings**\n\n{}", lines.join("\n")));
    }
    blocks
}
