//! Rendering per run kind: one [`KindView`] per kind (`bench`, `run`, `trace`, `calls`,
//! `profile` with its off-CPU part, `locks`, `scale`), each in its own file, and [`view`], the
//! one place that picks it. `render_view` (the terminal layout of a kind), the text and
//! Markdown tables that replace the generic metric table (`text.rs`, `markdown.rs`) and the
//! HTML page's answer block and layout (`html.rs`, `html/answer.rs`) all ask the kind's view;
//! nothing else in `report` matches on a run kind or a result id to choose a renderer.
//!
//! Pure. Depends on `model` (the typed rows of `model::locks`), `model::units` and the rest of
//! `report` (generic tables, charts, the HTML views); never on `diagnose`.

mod alloc;
mod bench;
mod calls;
mod locks;
mod profile;
mod run;
mod scale;
mod trace;

use super::glance::Glance;
use super::html::answer::AnswerView;
use super::html::view::ExperimentView;
use crate::model::{ExperimentResult, RunKind, RunRecord};

/// How one run kind reads. Every method but [`KindView::html_answer`] has the generic
/// behaviour as its default.
pub(super) trait KindView: Sync {
    /// The whole run as terminal text in the kind's own layout (`full`: a bench run's complete
    /// tables); `None` for the generic tables.
    fn text(&self, _run: &RunRecord, _color: bool, _full: bool) -> Option<String> {
        None
    }

    /// The terminal table that replaces the generic metric table of result `r`; `None` for
    /// the generic table.
    fn result_text(&self, _r: &ExperimentResult) -> Option<String> {
        None
    }

    /// The Markdown table that replaces the generic metric table of result `r`.
    fn result_markdown(&self, _r: &ExperimentResult) -> Option<String> {
        None
    }

    /// Whether the HTML page draws a result's metrics as charts that share units (a bench),
    /// rather than as key figures of many kinds (a diagnosis).
    fn html_bars(&self) -> bool {
        false
    }

    /// "This machine at a glance" at the top of the HTML page.
    fn html_glance(&self, _run: &RunRecord) -> Option<Glance> {
        None
    }

    /// The answer block at the top of the HTML page, taking what it shows out of `views`
    /// (one per result, in order; the run has at least one result).
    fn html_answer(&self, run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView;
}

/// The view of a run kind: the one dispatch by kind of every renderer.
pub(super) fn view(kind: RunKind) -> &'static dyn KindView {
    match kind {
        RunKind::Bench => &bench::Bench,
        RunKind::Run => &run::Run,
        RunKind::Trace => &trace::TRACE,
        RunKind::Calls => &calls::CALLS,
        RunKind::Profile => &profile::Profile,
        RunKind::Locks => &locks::Locks,
        RunKind::Alloc => &alloc::ALLOC,
        RunKind::Scale => &scale::Scale,
    }
}

/// A kind read as one table of its first result: its own text and Markdown table, and an
/// HTML answer built from that result (`trace`, `calls`, `locks`).
pub(super) struct TableKind {
    /// The terminal table, or `None` for the generic one.
    text: fn(&ExperimentResult) -> Option<String>,
    /// The Markdown table, or `None` for the generic one.
    markdown: fn(&ExperimentResult) -> Option<String>,
    /// The answer block from the first result and its view.
    answer: fn(&ExperimentResult, &mut ExperimentView) -> AnswerView,
}

impl KindView for TableKind {
    /// The generic layout with a `lost` finding (records lost, or a blinded mechanism) right
    /// under the title: everything below is a fraction of what happened.
    fn text(&self, run: &RunRecord, color: bool, _full: bool) -> Option<String> {
        Some(lost_under_title(run, self, color))
    }

    fn result_text(&self, r: &ExperimentResult) -> Option<String> {
        (self.text)(r)
    }

    fn result_markdown(&self, r: &ExperimentResult) -> Option<String> {
        (self.markdown)(r)
    }

    fn html_answer(&self, run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView {
        match first(run, views) {
            Some((r, view)) => (self.answer)(r, view),
            None => AnswerView::default(),
        }
    }
}

/// The first result and its view (the answer of most kinds is about it).
fn first<'a>(
    run: &'a RunRecord,
    views: &'a mut [ExperimentView],
) -> Option<(&'a ExperimentResult, &'a mut ExperimentView)> {
    run.results.first().zip(views.first_mut())
}

/// `run` in `view`'s generic layout with the first result's `lost` finding right under the
/// title (`trace`, `calls`, `alloc`, `locks`).
fn lost_under_title(run: &RunRecord, view: &dyn KindView, color: bool) -> String {
    let text = crate::report::text::render(run, view, color);
    under_title(text, run.results.first().and_then(lost_line))
}

/// The `lost` finding of result `r` as the warning line a report puts under its title.
fn lost_line(r: &ExperimentResult) -> Option<String> {
    let f = r.findings.iter().find(|f| f.key == "lost")?;
    Some(format!("warning: {}", f.text))
}

/// `text` with `line` right under its first line (the title), when there is one.
fn under_title(text: String, line: Option<String>) -> String {
    match (line, text.split_once('\n')) {
        (Some(line), Some((title, rest))) => format!("{title}\n{line}\n{rest}"),
        _ => text,
    }
}
