//! The answer block at the top of the HTML page: its view ([`AnswerView`]), the helpers the
//! kinds build it with ([`figures`], [`finding_lines`]), and [`answer`], which asks the run
//! kind's view (`report::kinds`: a bench's findings per group, a run's verdict, the top calls
//! of trace and calls, a profile's flame graphs, a scale run's fitted curve, the contended
//! locks).
//!
//! A diagnosis's metrics are of different kinds (times, counts, percentages), so they are a
//! key-figure strip, never one chart. What the answer shows is moved out of the experiment
//! views below it, so nothing is drawn twice. Pure.

use super::artifacts::{FlameView, TextView};
use super::rich::rich;
use super::view::{ExperimentView, FindingView, TableView};
use crate::model::{ExperimentResult, RunRecord};
use crate::report::charts::Chart;
use crate::report::kinds::KindView;

/// A labelled number of a diagnosis.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyFigure {
    /// Metric name.
    pub label: String,
    /// Value with its unit.
    pub value: String,
}

/// The findings of one bench group.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupFindings {
    /// Group name (`cpu`, `mem`, …).
    pub group: String,
    /// (experiment anchor, experiment id, finding), ranked: shown first.
    pub findings: Vec<(String, String, FindingView)>,
    /// The rest, folded under "N more".
    pub more: Vec<(String, String, FindingView)>,
}

/// The answer block.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AnswerView {
    /// Heading, e.g. `Verdict`.
    pub heading: String,
    /// Lines of prose, as HTML (a verdict, its next command).
    pub lines_html: Vec<String>,
    /// Key figures.
    pub figures: Vec<KeyFigure>,
    /// Findings per group (bench).
    pub groups: Vec<GroupFindings>,
    /// A table (top calls, flat profile).
    pub table: Option<TableView>,
    /// Charts.
    pub charts: Vec<Chart>,
    /// Flame graphs.
    pub flames: Vec<FlameView>,
    /// Text shown open (the call graph).
    pub texts: Vec<TextView>,
}

/// The answer of `run` in the layout of its `kind`, taking what it shows out of `views` (one
/// per result, in order).
pub fn answer(run: &RunRecord, kind: &dyn KindView, views: &mut [ExperimentView]) -> AnswerView {
    if run.results.is_empty() || views.is_empty() {
        return AnswerView {
            heading: "No results".into(),
            ..AnswerView::default()
        };
    }
    kind.html_answer(run, views)
}

/// Every metric of `r` as a key figure.
pub fn figures(r: &ExperimentResult) -> Vec<KeyFigure> {
    r.metrics
        .iter()
        .filter(|m| m.summary.median.is_finite())
        .map(|m| KeyFigure {
            label: m.name.clone(),
            value: m.shown(m.summary.median),
        })
        .collect()
}

/// The texts of the findings with these keys, as HTML.
pub fn finding_lines(r: &ExperimentResult, keys: &[&str]) -> Vec<String> {
    keys.iter()
        .filter_map(|k| r.findings.iter().find(|f| f.key == *k))
        .map(|f| rich(&f.text))
        .collect()
}
