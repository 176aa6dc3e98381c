//! The answer at the top of each HTML layout, one builder per run kind (`report::render`'s
//! HTML dispatch is [`answer`]):
//!
//! - bench: [`bench_answer`] — the findings per group (the slot where the "at a glance"
//!   summary of issue 17 goes first);
//! - run: the verdict and its next command, the time split as key figures, the timeline;
//! - trace: [`calls_answer`] — the top calls table and the time by call. It reads only the
//!   per-call time metrics, so a future `calls` run kind uses it as it is;
//! - profile: the flame graph(s) (two side by side for `--both`: on-CPU and off-CPU; the top blocked stacks of an off-CPU profile),
//!   then the flat profile and the call graph;
//! - scale: the fitted curve with the data points and the knee;
//! - locks: the hot lock, then the contended locks by call site.
//!
//! A diagnosis's metrics are of different kinds (times, counts, percentages), so they are a
//! key-figure strip, never one chart. What the answer shows is moved out of the experiment
//! views below it, so nothing is drawn twice. Pure.

use super::artifacts::{FlameView, TextView};
use super::rich::rich;
use super::view::{ExperimentView, FindingView, Row, TableView};
use crate::model::units;
use crate::model::{ExperimentResult, RunKind, RunRecord, Unit};
use crate::report::charts::{self, Chart};

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
    /// (experiment anchor, experiment id, finding).
    pub findings: Vec<(String, String, FindingView)>,
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

/// The answer of `run`, taking what it shows out of `views` (one per result, in order).
pub fn answer(run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView {
    let Some((first, view)) = run.results.first().zip(views.first_mut()) else {
        return AnswerView {
            heading: "No results".into(),
            ..AnswerView::default()
        };
    };
    match run.kind {
        RunKind::Bench => bench_answer(run),
        RunKind::Run => run_answer(first, view),
        RunKind::Trace | RunKind::Calls => calls_answer(first, view),
        RunKind::Locks => locks_answer(first, view),
        RunKind::Profile => profile_answer(run, views),
        RunKind::Scale => scale_answer(first),
    }
}

/// The top of the bench page: the findings per group, in run order. Issue 17's "at a
/// glance" summary is placed here, above the groups.
pub fn bench_answer(run: &RunRecord) -> AnswerView {
    let mut groups: Vec<GroupFindings> = Vec::new();
    for r in &run.results {
        let group = r.id.split('.').next().unwrap_or(&r.id).to_string();
        let found = r.findings.iter().map(|f| {
            let view = FindingView {
                key: f.key.clone(),
                text_html: rich(&f.text),
            };
            (super::view::anchor(&r.id), r.id.clone(), view)
        });
        let found: Vec<_> = found.collect();
        match groups.iter_mut().find(|g| g.group == group) {
            Some(g) => g.findings.extend(found),
            None => groups.push(GroupFindings {
                group,
                findings: found,
            }),
        }
    }
    groups.retain(|g| !g.findings.is_empty());
    AnswerView {
        heading: "Findings per group".into(),
        groups,
        ..AnswerView::default()
    }
}

/// Every metric of `r` as a key figure.
fn figures(r: &ExperimentResult) -> Vec<KeyFigure> {
    r.metrics
        .iter()
        .filter(|m| m.summary.median.is_finite())
        .map(|m| KeyFigure {
            label: m.name.clone(),
            value: units::value(m.summary.median, m.unit),
        })
        .collect()
}

/// The texts of the findings with these keys, as HTML.
fn finding_lines(r: &ExperimentResult, keys: &[&str]) -> Vec<String> {
    keys.iter()
        .filter_map(|k| r.findings.iter().find(|f| f.key == *k))
        .map(|f| rich(&f.text))
        .collect()
}

fn run_answer(r: &ExperimentResult, view: &mut ExperimentView) -> AnswerView {
    AnswerView {
        heading: "Verdict".into(),
        lines_html: finding_lines(r, &["verdict", "next"]),
        figures: figures(r),
        charts: std::mem::take(&mut view.charts),
        ..AnswerView::default()
    }
}

/// The top calls and the time by call: the answer of `trace` and of a future `calls` kind,
/// from per-call time metrics (samples = calls).
pub fn calls_answer(r: &ExperimentResult, view: &mut ExperimentView) -> AnswerView {
    view.charts.clear();
    let calls: Vec<_> = r.metrics.iter().filter(|m| m.unit == Unit::Ns).collect();
    let total_of = |m: &&crate::model::Metric| m.summary.mean * m.summary.n as f64;
    let all: f64 = calls.iter().map(total_of).sum();
    let mut rows: Vec<(f64, Row)> = calls
        .iter()
        .map(|m| {
            let total = total_of(m);
            let share = if all > 0.0 { total / all } else { 0.0 };
            let cells = vec![
                m.name.clone(),
                units::count(m.summary.n as f64),
                units::duration_ns(total),
                units::percent(share),
                units::duration_ns(m.summary.median),
            ];
            (
                total,
                Row {
                    cells,
                    noisy: false,
                },
            )
        })
        .collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let headers = ["call", "calls", "total time", "share", "median per call"];
    AnswerView {
        heading: "Top calls".into(),
        lines_html: finding_lines(r, &["total", "top_call", "priced"]),
        table: Some(TableView {
            caption: String::new(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows: rows.into_iter().map(|(_, row)| row).collect(),
        }),
        charts: charts::time_by_call(r).into_iter().collect(),
        ..AnswerView::default()
    }
}

/// The contended locks of `locks`: the hot-lock sentence, then one row per lock and call
/// site (mutrace's table) from the per-row wait metrics and their notes.
fn locks_answer(r: &ExperimentResult, view: &mut ExperimentView) -> AnswerView {
    view.charts.clear();
    view.metrics = None;
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
            &["hot_lock", "no_contention", "lock_waits", "event_waits"],
        ),
        table: Some(TableView {
            caption: String::new(),
            headers: headers.iter().map(|h| h.to_string()).collect(),
            rows,
        }),
        ..AnswerView::default()
    }
}

/// The flame graph(s), then the flat profile (from the `….flat` result: samples in each
/// function's own code) and the call graph.
fn profile_answer(run: &RunRecord, views: &mut [ExperimentView]) -> AnswerView {
    let flat = run.results.iter().find(|r| r.id.ends_with(".flat"));
    for v in views.iter_mut().filter(|v| v.id.ends_with(".flat")) {
        v.metrics = None;
        v.charts.clear();
    }
    let view = &mut views[0];
    view.charts.clear();
    let texts = std::mem::take(&mut view.texts);
    let (open, rest): (Vec<TextView>, Vec<TextView>) =
        texts.into_iter().partition(|t| t.name == "callgraph");
    view.texts = rest;
    let r = &run.results[0];
    let mut lines = finding_lines(r, &["hottest_1", "hottest_2", "hottest_3"]);
    // An off-CPU profile (`--off-cpu`, `--both`): where it waited, and who woke it.
    if let Some(off) = run.results.iter().find(|r| r.id == "offcpu") {
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
    let rows = flat
        .metrics
        .iter()
        .map(|m| Row {
            cells: vec![
                m.name.clone(),
                units::count(m.summary.median),
                m.note.clone().unwrap_or_default(),
            ],
            noisy: false,
        })
        .collect();
    let headers = [
        "function",
        "own samples",
        "share (own · with callees) · object",
    ];
    TableView {
        caption: "Flat profile".into(),
        headers: headers.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

/// The fit over the measured times; the detail section below keeps every curve (wall time,
/// per element, CPU time).
fn scale_answer(r: &ExperimentResult) -> AnswerView {
    let fit = charts::scale_fit(r);
    AnswerView {
        heading: "Fitted curve".into(),
        lines_html: finding_lines(r, &["best_fit", "fit_poor", "knee", "no_knee"]),
        charts: fit.into_iter().collect(),
        ..AnswerView::default()
    }
}
