//! A `locks` run: the `mutrace`-style table (`table.rs`) instead of the generic metric table
//! in text and Markdown, and in HTML the hot lock, then the contended locks by call site as
//! the answer; a run that lost records or waits says so first (the `lost` finding: under
//! the title in the terminal, the first line of the HTML answer).
//!
//! Pure. Depends on `model` (the typed rows of `model::locks`), `model::units` and the HTML
//! views of `report`.

mod held;
mod table;

use super::{KindView, first, lost_under_title};
use crate::model::locks::LOCK_ROWS;
use crate::model::units;
use crate::model::{ExperimentResult, RunRecord};
use crate::report::html::answer::{AnswerView, finding_lines};
use crate::report::html::view::{ExperimentView, TableView};

/// The view of `locks`.
pub(super) struct Locks;

impl KindView for Locks {
    /// The generic layout with the `lost` finding right under the title: everything below
    /// is a fraction of what happened.
    fn text(&self, run: &RunRecord, color: bool, _full: bool) -> Option<String> {
        Some(lost_under_title(run, self, color))
    }

    fn result_text(&self, r: &ExperimentResult) -> Option<String> {
        both(table::text(r), held::text(r))
    }

    fn result_markdown(&self, r: &ExperimentResult) -> Option<String> {
        both(table::markdown(r), held::markdown(r))
    }

    fn html_answer(&self, run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView {
        match first(run, views) {
            Some((r, view)) => answer(r, view),
            None => AnswerView::default(),
        }
    }
}

/// The futex table (contended locks, from the kernel's view), then the in-process table of
/// pthread locks when the run has one.
fn both(futex: Option<String>, held: Option<String>) -> Option<String> {
    match (futex, held) {
        (Some(f), Some(h)) => Some(format!("{f}\n{h}")),
        (f, h) => f.or(h),
    }
}

/// One row per lock and call site from the per-row wait metrics, with their names and notes
/// as written, and the in-process table's count of the same lock when it saw it.
fn answer_table(r: &ExperimentResult) -> TableView {
    let column = table::in_process_column(r);
    let rows = r.metrics.iter().enumerate().map(|(i, m)| {
        let mut cells = vec![
            m.name.clone(),
            units::count(m.summary.n as f64),
            units::duration_ns(m.summary.mean * m.summary.n as f64),
            units::duration_ns(m.summary.max),
            m.note.clone().unwrap_or_default(),
        ];
        cells.extend(column.as_ref().and_then(|c| c.get(i).cloned()));
        cells
    });
    let mut headers = vec![
        "lock: call site",
        "contended",
        "total wait",
        "longest",
        "word · woken from",
    ];
    headers.extend(column.is_some().then_some(table::IN_PROCESS));
    TableView::plain("", headers, rows)
}

/// The hot-lock sentence, then one row per lock and call site (mutrace's table), with the
/// in-process column when both views saw a lock. The typed rows' artifact is not shown
/// again below.
fn answer(r: &ExperimentResult, view: &mut ExperimentView) -> AnswerView {
    view.charts.clear();
    view.metrics = held::html(r);
    view.texts
        .retain(|t| t.name != LOCK_ROWS && t.name != crate::model::held::LOCK_TABLE);
    let table = answer_table(r);
    AnswerView {
        heading: "Contended locks".into(),
        lines_html: finding_lines(
            r,
            &[
                "lost",
                "hot_lock",
                "held_lock",
                "both_views",
                "no_contention",
                "lock_waits",
                "event_waits",
            ],
        ),
        table: Some(table),
        ..AnswerView::default()
    }
}
