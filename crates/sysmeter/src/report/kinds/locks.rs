//! A `locks` run: the `mutrace`-style table (`table.rs`) instead of the generic metric table
//! in text and Markdown, and in HTML the hot lock, then the contended locks by call site as
//! the answer; a run that lost records or waits says so first (the `lost` finding).
//!
//! Pure. Depends on `model` (the typed rows of `model::locks`), `model::units` and the HTML
//! views of `report`.

mod table;

use super::TableKind;
use crate::model::ExperimentResult;
use crate::model::locks::LOCK_ROWS;
use crate::model::units;
use crate::report::html::answer::{AnswerView, finding_lines};
use crate::report::html::view::{ExperimentView, Row, TableView};

/// The view of `locks`.
pub(super) const LOCKS: TableKind = TableKind {
    text: table::text,
    markdown: table::markdown,
    answer,
};

/// The hot-lock sentence, then one row per lock and call site (mutrace's table) from the
/// per-row wait metrics, with their names and notes as written. The typed rows' artifact is
/// not shown again below.
fn answer(r: &ExperimentResult, view: &mut ExperimentView) -> AnswerView {
    view.charts.clear();
    view.metrics = None;
    view.texts.retain(|t| t.name != LOCK_ROWS);
    let rows = r
        .metrics
        .iter()
        .map(|m| Row {
            cells: vec![
                m.name.clone(),
                units::count(m.summary.n as f64),
                units::duration_ns(m.summary.mean * m.summary.n as f64),
                units::duration_ns(m.summary.max),
                m.note.clone().unwrap_or_default(),
            ],
            noisy: false,
        })
        .collect();
    let headers = [
        "lock: call site",
        "contended",
        "total wait",
        "longest",
        "word · woken from",
    ];
    AnswerView {
        heading: "Contended locks".into(),
        lines_html: finding_lines(
            r,
            &[
                "lost",
                "hot_lock",
                "no_contention",
                "lock_waits",
                "event_waits",
            ],
        ),
        table: Some(TableView {
            caption: String::new(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows,
        }),
        ..AnswerView::default()
    }
}
