//! A `scale` run: the generic terminal tables; in HTML the fitted curve over the measured
//! times as the answer (the detail section below keeps every curve: wall time, per element,
//! CPU time).
//!
//! Pure. Depends on `model` and `report` (charts, the HTML views).

use super::{KindView, first};
use crate::model::RunRecord;
use crate::report::charts;
use crate::report::html::answer::{AnswerView, finding_lines};
use crate::report::html::view::ExperimentView;

/// The view of `scale`.
pub(super) struct Scale;

impl KindView for Scale {
    fn html_answer(&self, run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView {
        let Some((r, _)) = first(run, views) else {
            return AnswerView::default();
        };
        AnswerView {
            heading: "Fitted curve".into(),
            lines_html: finding_lines(r, &["best_fit", "fit_poor", "knee", "no_knee"]),
            charts: charts::scale_fit(r).into_iter().collect(),
            ..AnswerView::default()
        }
    }
}
