//! The HTML report (`sysmeter report RUN --html FILE`): one self-contained page — inline CSS,
//! inline SVG charts, flame graphs as data URLs, no script of its own and nothing fetched
//! from the network. Every run kind gets its layout, opening with its answer: a summary line
//! (host, kernel, run time, noise state), then the answer block of the kind (built by the
//! kind's view in `report::kinds`: for a bench "this machine at a glance" and the findings per
//! group, a run's verdict, the top calls of trace and calls, a profile's flame graph, a scale
//! run's fitted curve, the contended locks) in `<section id="answer">`, then per experiment about →
//! methodology → estimate → results table → charts → findings (or why it was skipped or
//! failed), and the run and machine description last, collapsed.
//!
//! Pure: a [`RunRecord`] in, a string out. The page layout is the askama template
//! `templates/report.html`, which HTML-escapes every value except the `*_html` fields: chart
//! SVG (escaped by `charts::svg`) and prose with `code` spans (escaped by `rich`). Depends on
//! `model`, `report::format`, `model::units`, `report::charts`, `report::kinds`.

pub(super) mod answer;
pub(super) mod artifacts;

/// The page's Content-Security-Policy: inline styles, scripts (the flame graphs' own) and
/// data: images and frames, nothing from anywhere else. Browsers apply it to the data:
/// frames the flame graphs live in too, so a hostile SVG in an imported record can load
/// nothing (checked in headless Chromium by tests/it/html.rs).
pub const CSP: &str = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; \
                       script-src 'unsafe-inline'; frame-src data:";

mod header;
pub(super) mod rich;
mod summary;
pub(super) mod view;

use askama::Template;

use crate::model::RunRecord;
use crate::report::kinds::KindView;
use answer::AnswerView;
use header::HeaderView;
use view::ExperimentView;

/// Why the HTML report could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum HtmlError {
    /// The template engine failed (a formatting error; not expected with valid data).
    #[error("could not render the HTML report of run {run}: {source}; please report this as a bug")]
    Template {
        /// Run id.
        run: String,
        /// Underlying error.
        source: askama::Error,
    },
}

/// The page.
#[derive(Template)]
#[template(path = "report.html")]
struct Page {
    /// Browser tab title.
    title: String,
    /// Run kind (`bench`, `run`, …), the layout.
    kind: &'static str,
    /// Host · kernel · run time · noise state.
    summary: String,
    /// The answer block, first on the page.
    answer: AnswerView,
    /// Run and machine.
    header: HeaderView,
    /// "This machine at a glance" of a bench run; `None` for other kinds.
    glance: Option<GlanceView>,
    /// One section per experiment, in run order.
    experiments: Vec<ExperimentView>,
    /// `sysmeter x.y.z` that wrote the page.
    generator: String,
    /// The values no chart holds (`model::showable`), said once at the top.
    left_out: Option<String>,
}

/// Renders `run` as one self-contained HTML page in the layout of its kind.
pub fn render(run: &RunRecord) -> Result<String, HtmlError> {
    let kind = crate::report::kinds::view(run.kind);
    let (answer, experiments) = sections(run, kind);
    let page = Page {
        title: format!(
            "sysmeter {} run {} on {}",
            run.kind.as_str(),
            run.id,
            run.host.hostname
        ),
        kind: run.kind.as_str(),
        summary: summary::summary_line(run),
        answer,
        header: header::header(run),
        glance: glance_view(run, kind),
        experiments,
        generator: format!("sysmeter {}", env!("CARGO_PKG_VERSION")),
        left_out: serde_json::to_value(run)
            .ok()
            .and_then(|doc| crate::model::showable::unshowable_sentence(&doc)),
    };
    page.render().map_err(|source| HtmlError::Template {
        run: run.id.clone(),
        source,
    })
}

/// The answer block of `run` in the layout of its `kind`, and one section per experiment
/// (with what the answer took from them removed).
fn sections(run: &RunRecord, kind: &dyn KindView) -> (AnswerView, Vec<ExperimentView>) {
    // A bench's metrics share units per chart; a diagnosis's are key figures of many kinds.
    let bars = kind.html_bars();
    let mut experiments: Vec<ExperimentView> = run
        .results
        .iter()
        .map(|r| view::experiment(r, &run.host.caches, bars))
        .collect();
    let answer = answer::answer(run, kind, &mut experiments);
    (answer, experiments)
}

/// "This machine at a glance" at the top of a bench page: a card of key figures per group,
/// the findings quoted first, the noise state.
struct GlanceView {
    groups: Vec<GlanceGroup>,
    findings: Vec<String>,
    noise: String,
}

/// One group's card: its name, what it is about, its figures as (label, value).
struct GlanceGroup {
    name: String,
    note: &'static str,
    figures: Vec<(String, String)>,
}

/// The summary of a bench run (the terminal's "at a glance" block), as cards.
fn glance_view(run: &RunRecord, kind: &dyn KindView) -> Option<GlanceView> {
    let g = kind.html_glance(run)?;
    let groups = g.figures.into_iter().map(|(name, figures)| GlanceGroup {
        note: crate::report::glance::note(&name),
        name,
        figures,
    });
    Some(GlanceView {
        groups: groups.collect(),
        findings: g.findings,
        noise: g.noise,
    })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod kinds;
