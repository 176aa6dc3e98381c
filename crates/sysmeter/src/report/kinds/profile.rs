//! A `profile` run, on-CPU, off-CPU (`--off-cpu`) or both (`--both`): in the terminal the
//! gprof-style report (`text.rs`) followed by the off-CPU part (`offcpu.rs`), or the generic
//! tables for a record with neither; in HTML the flame graph(s) (two side by side for
//! `--both`), the hottest functions and the top blocked stacks, then the flat profile and the
//! call graph as the answer. A run that lost records says so first (under the title in
//! the terminal, the first line of the answer in HTML), from the off-CPU `lost` finding.
//!
//! Pure. Depends on `model`, `model::units` and the HTML views of `report`.

mod offcpu;
mod text;

use super::{KindView, first};
use crate::model::units;
use crate::model::{ExperimentResult, RunRecord};
use crate::report::html::answer::{AnswerView, figures, finding_lines};
use crate::report::html::artifacts::TextView;
use crate::report::html::view::{ExperimentView, TableView};

/// The view of `profile`.
pub(super) struct Profile;

impl KindView for Profile {
    fn text(&self, run: &RunRecord, color: bool, _full: bool) -> Option<String> {
        let on = text::render(run, color);
        let off = offcpu::render(run, color, on.is_none());
        let text = match (on, off) {
            (Some(on), Some(off)) => format!("{on}\n{off}"),
            (Some(one), None) | (None, Some(one)) => one,
            (None, None) => return None,
        };
        // A loss goes right under the title: everything below is a fraction.
        let off = run.results.iter().find(|r| r.id == "offcpu");
        Some(super::under_title(text, off.and_then(super::lost_line)))
    }

    fn html_answer(&self, run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView {
        answer(run, views)
    }
}

/// The flame graph(s), then the flat profile (from the `….flat` result: samples in each
/// function's own code) and the call graph.
fn answer(run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView {
    let flat = run.results.iter().find(|r| r.id.ends_with(".flat"));
    for v in views.iter_mut().filter(|v| v.id.ends_with(".flat")) {
        v.metrics = None;
        v.charts.clear();
    }
    let Some((r, view)) = first(run, views) else {
        return AnswerView::default();
    };
    view.charts.clear();
    let texts = std::mem::take(&mut view.texts);
    let (open, rest): (Vec<TextView>, Vec<TextView>) =
        texts.into_iter().partition(|t| t.name == "callgraph");
    view.texts = rest;
    let off = run.results.iter().find(|r| r.id == "offcpu");
    // A loss first: the figures below are a fraction of what happened.
    let mut lines = off.map_or_else(Vec::new, |o| finding_lines(o, &["lost"]));
    lines.extend(finding_lines(r, &["hottest_1", "hottest_2", "hottest_3"]));
    // An off-CPU profile (`--off-cpu`, `--both`): where it waited, and who woke it.
    if let Some(off) = off {
        lines.extend(finding_lines(off, &["blocked_1", "blocked_2", "blocked_3"]));
    }
    AnswerView {
        heading: "Flame graph".into(),
        lines_html: lines,
        figures: figures(r),
        table: flat.map(flat_table),
        flames: std::mem::take(&mut view.flames),
        texts: open,
        ..AnswerView::default()
    }
}

/// The flat profile: each function's own samples and the profiler's note (shares, object).
fn flat_table(flat: &ExperimentResult) -> TableView {
    let rows = flat.metrics.iter().map(|m| {
        vec![
            m.name.clone(),
            units::count(m.summary.median),
            m.note.clone().unwrap_or_default(),
        ]
    });
    let headers = [
        "function",
        "own samples",
        "share (own · with callees) · object",
    ];
    TableView::plain("Flat profile", headers, rows)
}
