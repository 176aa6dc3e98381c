//! The consistency checker over a run of every kind, in every format a person reads: the
//! terminal text (concise and `--full` for a bench), Markdown and HTML; `compare` and
//! `fleet` in theirs. Each run is a record a real command wrote (`--format json`), kept in
//! `html/fixtures/` and `truth/fixtures/`, or the model's fixture run.

use serde_json::Value;

use super::{Mismatch, Truth, check};
use crate::model::RunRecord;
use crate::model::fixture::sample_run;
use crate::report::compare_text::{self, CompareFormat, TextLayout};
use crate::report::fleet::{self, FleetFormat};
use crate::report::{Format, html, render_view};
use crate::stats::compare::{CompareOptions, compare_runs};

/// A record of `sysmeter KIND --format json`.
fn record(name: &str, json: &str) -> RunRecord {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{name} is not a run record: {e}"))
}

/// The records a real command wrote (`--format json`), by kind.
const RECORDS: [(&str, &str); 9] = [
    ("run", include_str!("../html/fixtures/run.json")),
    ("trace", include_str!("../html/fixtures/trace.json")),
    ("calls", include_str!("../html/fixtures/calls.json")),
    ("calls --functions", include_str!("fixtures/functions.json")),
    ("profile", include_str!("../html/fixtures/profile.json")),
    ("offcpu", include_str!("fixtures/offcpu.json")),
    ("locks", include_str!("fixtures/locks.json")),
    ("alloc", include_str!("fixtures/alloc.json")),
    ("scale", include_str!("../html/fixtures/scale.json")),
];

/// A run of every kind, by name: the model's fixture run as the bench, and [`RECORDS`].
fn runs() -> Vec<(&'static str, RunRecord)> {
    let recorded = RECORDS
        .iter()
        .map(|&(kind, json)| (kind, record(kind, json)));
    std::iter::once(("bench", sample_run()))
        .chain(recorded)
        .collect()
}

/// `value` as JSON, for [`Truth::of`].
fn json(value: &impl serde::Serialize) -> Value {
    serde_json::to_value(value).unwrap_or_else(|e| panic!("not JSON: {e}"))
}

/// The truth of `run`: its record, and the one wall time its headers show (computed from
/// the record by `format::wall_time`, the one rule for it).
pub(super) fn run_truth(run: &RunRecord) -> Truth {
    let mut truth = Truth::of(&[json(run)]);
    if let Some((_, ns)) = crate::report::format::wall_time(run) {
        truth.add(None, ns);
    }
    truth
}

/// The pages a person reads of `run`: text (concise and full), Markdown, HTML.
pub(super) fn pages(run: &RunRecord) -> Vec<(&'static str, String)> {
    let text = |full| render_view(run, Format::Text, false, full).expect("text renders");
    vec![
        ("text", text(false)),
        ("text --full", text(true)),
        (
            "markdown",
            render_view(run, Format::Markdown, false, false).expect("md"),
        ),
        ("html", html::render(run).expect("html renders")),
    ]
}

/// A mismatch on `page` for people: the figure, its label and its line.
fn said(page: &str, m: &Mismatch) -> String {
    let label = m.label.as_deref().unwrap_or("-");
    format!("{page}: {} (label {label}) in: {}", m.shown, m.line.trim())
}

/// Every figure of every page of `run` that is not the record's, one line each.
pub(crate) fn every_page_of(run: &RunRecord) -> Vec<String> {
    let truth = run_truth(run);
    let mut found = Vec::new();
    for (format, page) in pages(run) {
        found.extend(check(&truth, &page).iter().map(|m| said(format, m)));
    }
    found
}

/// Panics with every mismatch of every page, named by kind and format.
fn assert_consistent(found: Vec<(String, Mismatch)>) {
    let report: Vec<String> = found.iter().map(|(page, m)| said(page, m)).collect();
    assert!(
        report.is_empty(),
        "{} figures are not the record's:\n{}",
        report.len(),
        report.join("\n")
    );
}

#[test]
fn every_figure_of_every_run_kind_is_the_records() {
    let mut found = Vec::new();
    for (kind, run) in runs() {
        let truth = run_truth(&run);
        for (format, page) in pages(&run) {
            let wrong = check(&truth, &page);
            found.extend(wrong.into_iter().map(|m| (format!("{kind} {format}"), m)));
        }
    }
    assert_consistent(found);
}

#[test]
fn every_figure_of_a_comparison_is_its_records_or_the_comparisons() {
    let (a, b) = compare_text::tests::pair();
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), Some(0.05));
    let truth = Truth::of(&[json(&a), json(&b), json(&cmp)]);
    let mut found = Vec::new();
    for format in [CompareFormat::Text, CompareFormat::Markdown] {
        let page =
            compare_text::render(&cmp, &a, &b, format, TextLayout::default()).expect("renders");
        found.extend(
            check(&truth, &page)
                .into_iter()
                .map(|m| (format!("compare {format:?}"), m)),
        );
    }
    let page = compare_text::html::render(&cmp, &a, &b).expect("html renders");
    found.extend(
        check(&truth, &page)
            .into_iter()
            .map(|m| ("compare html".to_string(), m)),
    );
    assert_consistent(found);
}

#[test]
fn every_figure_of_a_fleet_is_its_view() {
    let (view, hosts) = fleet::tests::sample_fleet();
    // The fleet's record is its JSON document (what `fleet --format json` writes).
    let document = fleet::render(&view, &hosts, FleetFormat::Json).expect("json renders");
    let document: Value = serde_json::from_str(&document).expect("fleet JSON");
    let truth = Truth::of(&[document, json(&hosts)]);
    let mut found = Vec::new();
    for format in [FleetFormat::Text, FleetFormat::Markdown, FleetFormat::Html] {
        let page = fleet::render(&view, &hosts, format).expect("renders");
        found.extend(
            check(&truth, &page)
                .into_iter()
                .map(|m| (format!("fleet {format:?}"), m)),
        );
    }
    assert_consistent(found);
}

/// The checker on a record of this machine, named by `SYSMETER_TRUTH_RECORD` (a file
/// `sysmeter … --format json --out FILE` wrote): `SYSMETER_TRUTH_RECORD=/tmp/x.json cargo
/// test -p sysmeter --lib truth -- --ignored`. Ignored in the suite: it needs a fresh run.
#[test]
#[ignore = "needs SYSMETER_TRUTH_RECORD, a record of a fresh run"]
fn every_figure_of_a_fresh_record_is_the_records() {
    let path = std::env::var("SYSMETER_TRUTH_RECORD").expect("SYSMETER_TRUTH_RECORD names a file");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let run = record(&path, &text);
    let found = every_page_of(&run);
    assert!(found.is_empty(), "{}", found.join("\n"));
}
