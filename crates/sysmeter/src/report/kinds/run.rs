//! A `run` run: the generic terminal tables; in HTML the verdict and its next command, the
//! time split as key figures and the timeline as the answer.
//!
//! Pure. Depends on `model` and the HTML views of `report`.

use super::{KindView, first};
use crate::model::RunRecord;
use crate::report::html::answer::{AnswerView, figures, finding_lines};
use crate::report::html::view::ExperimentView;

/// The view of `run`.
pub(super) struct Run;

impl KindView for Run {
    fn html_answer(&self, run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView {
        let Some((r, view)) = first(run, views) else {
            return AnswerView::default();
        };
        AnswerView {
            heading: "Verdict".into(),
            lines_html: finding_lines(r, &["verdict", "next"]),
            figures: figures(r),
            charts: std::mem::take(&mut view.charts),
            ..AnswerView::default()
        }
    }
}
