//! A `calls` run (library calls through uprobes), and what `trace` shares with it: the
//! `strace -c`-style table in text and Markdown (`table.rs`) instead of the generic metric
//! table, and in HTML the top calls and the time by call as the answer; a `calls --functions`
//! result reads as gprof's flat profile and call graph (`functions.rs`) with its flame graph.
//!
//! Pure. Depends on `model`, `model::units` and `report` (charts, the HTML views).

mod functions;
pub(super) mod table;

use super::TableKind;
use crate::model::units;
use crate::model::{ExperimentResult, Metric, Unit};
use crate::report::charts;
use crate::report::html::answer::{AnswerView, finding_lines};
use crate::report::html::view::{ExperimentView, TableView};

/// The view of `calls`.
pub(super) const CALLS: TableKind = TableKind {
    text: |r| functions::text(r).or_else(|| table::text(r)),
    markdown: |r| functions::markdown(r).or_else(|| table::markdown(r)),
    answer: |r, view| functions_answer(r, view).unwrap_or_else(|| answer(r, view)),
};

/// `calls --functions`: the flame graph of the exact self times, the flat profile and the
/// call graph.
fn functions_answer(r: &ExperimentResult, view: &mut ExperimentView) -> Option<AnswerView> {
    let (headers, rows, graph) = functions::html_parts(r)?;
    view.charts.clear();
    view.metrics = None;
    view.texts.retain(|t| t.name == "folded");
    Some(AnswerView {
        heading: "Function call graph".into(),
        lines_html: finding_lines(r, &["lost", "total", "overhead", "unwound"]),
        table: Some(TableView::plain("Flat profile", headers, rows)),
        flames: std::mem::take(&mut view.flames),
        texts: crate::report::html::artifacts::texts(&[graph]),
        ..AnswerView::default()
    })
}

/// The top calls and the time by call, from per-call time metrics (samples = calls): the
/// answer of `calls` and of `trace`.
pub(super) fn answer(r: &ExperimentResult, view: &mut ExperimentView) -> AnswerView {
    view.charts.clear();
    let calls: Vec<&Metric> = r.metrics.iter().filter(|m| m.unit == Unit::Ns).collect();
    let total_of = |m: &Metric| m.summary.mean * m.summary.n as f64;
    let all: f64 = calls.iter().map(|m| total_of(m)).sum();
    let mut rows: Vec<(f64, Vec<String>)> = calls
        .iter()
        .map(|m| {
            let total = total_of(m);
            let share = if all > 0.0 { total / all } else { 0.0 };
            let cells = vec![
                m.name.clone(),
                units::count(m.summary.n as f64),
                units::duration_ns(total),
                units::percent(share),
                crate::model::call_note::CallNote::of(m).median_cell(m.summary.median),
            ];
            (total, cells)
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let headers = ["call", "calls", "total time", "share", "median per call"];
    AnswerView {
        heading: "Top calls".into(),
        lines_html: finding_lines(r, &["lost", "total", "top_call", "priced"]),
        table: Some(TableView::plain(
            "",
            headers,
            rows.into_iter().map(|(_, cells)| cells),
        )),
        charts: charts::time_by_call(r).into_iter().collect(),
        ..AnswerView::default()
    }
}
