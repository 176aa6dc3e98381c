//! A `trace` run (system calls): read like `calls` — the `strace -c`-style table
//! (`calls/table.rs`, with the errors by errno) and the top calls as the HTML answer.
//!
//! Pure. Depends on `model` and the `calls` view.

use super::calls::{self, table};
use super::{KindView, first};
use crate::model::{ExperimentResult, RunRecord};
use crate::report::html::answer::AnswerView;
use crate::report::html::view::ExperimentView;

/// The view of `trace`.
pub(super) struct Trace;

impl KindView for Trace {
    fn result_text(&self, r: &ExperimentResult) -> Option<String> {
        table::text(r)
    }

    fn result_markdown(&self, r: &ExperimentResult) -> Option<String> {
        table::markdown(r)
    }

    fn html_answer(&self, run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView {
        match first(run, views) {
            Some((r, view)) => calls::answer(r, view),
            None => AnswerView::default(),
        }
    }
}
