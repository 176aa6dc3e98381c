//! Every place that shows an interval names which one it is (issue 33): the within-run 95% CI
//! of the median and the run-to-run interval, in the JSON field docs, the CSV header, the
//! terminal, Markdown and HTML table headers, and the charts.

use super::csv::HEADER;
use super::format::{RUN_TO_RUN_HEADER, WITHIN_RUN_HEADER};
use super::{Format, render_view};
use crate::model::fixture::sample_run;
use crate::model::{IntervalBasis, RunRecord, RunToRun};

/// The fixture with a run-to-run interval from a history of 8 runs on every metric.
fn with_history() -> RunRecord {
    let mut run = sample_run();
    for m in run.results.iter_mut().flat_map(|r| &mut r.metrics) {
        let med = m.summary.median;
        m.run_to_run = Some(RunToRun {
            basis: IntervalBasis::History,
            runs: 8,
            lo: med * 0.97,
            hi: med * 1.04,
            sd_log: 0.02,
        });
    }
    run
}

/// The row of `field` in the table of `section` (`### Metric`) of docs/json-schema.md.
fn doc_row(section: &str, field: &str) -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/json-schema.md");
    let doc = std::fs::read_to_string(path).expect("docs/json-schema.md is readable");
    let start = doc.find(section).unwrap_or_else(|| panic!("no {section}"));
    let rest = &doc[start..];
    let row = rest
        .lines()
        .find(|l| l.starts_with(&format!("| `{field}` |")));
    row.unwrap_or_else(|| panic!("no `{field}` row under {section}"))
        .to_string()
}

#[test]
fn the_json_docs_name_both_intervals() {
    assert!(doc_row("### `Summary`", "ci95").contains("**within-run** 95% CI of the median"));
    let rr = doc_row("### `Metric`", "run_to_run");
    assert!(rr.contains("**run-to-run** interval"), "{rr}");
    assert!(
        rr.contains("prediction interval for the median of the next run"),
        "{rr}"
    );
    for basis in ["history", "rounds", "this_run"] {
        assert!(
            rr.contains(&format!("`{basis}`")),
            "{basis} undocumented: {rr}"
        );
    }
}

#[test]
fn the_csv_header_names_both_intervals() {
    for column in [
        "within_run_ci_lo",
        "within_run_ci_hi",
        "run_to_run_lo",
        "run_to_run_hi",
    ] {
        assert!(HEADER.contains(&column), "{column} missing from {HEADER:?}");
    }
    assert!(!HEADER.iter().any(|c| *c == "ci_lo" || *c == "ci_hi"));
    let csv = render_view(&with_history(), Format::Csv, false, false).expect("csv");
    let header = csv.lines().next().expect("a header");
    assert!(header.contains("within_run_ci_lo") && header.ends_with("run_to_run_runs"));
}

#[test]
fn the_html_table_header_names_both_intervals() {
    let page = super::html::render(&with_history()).expect("html");
    for header in [WITHIN_RUN_HEADER, RUN_TO_RUN_HEADER] {
        assert!(
            page.contains(&format!("<th>{header}</th>")),
            "no <th>{header}</th>"
        );
    }
    assert!(!page.contains("<th>95% CI</th>"));
    // The page's header says where the intervals come from and how to read them.
    assert!(page.contains("run to run: from the 8 stored runs of this host"));
    // The bar chart draws the run-to-run interval as a band and says what each mark is.
    assert!(page.contains("whiskers: within-run 95% CI, band: run to run"));
    // Its tooltip says what the band is in words.
    let run = with_history();
    let null = &run.results[0].metrics[1];
    let words = null
        .run_to_run
        .map(|i| i.words(null.unit))
        .expect("an interval");
    assert!(words.starts_with("this machine, run to run: ") && words.ends_with(" over 8 runs"));
    assert!(page.contains(&format!("{}: {words}", null.name)), "{words}");
}

#[test]
fn text_and_markdown_tables_name_both_intervals_and_say_where_it_comes_from() {
    let run = with_history();
    for format in [Format::Text, Format::Markdown] {
        let out = render_view(&run, format, false, true).expect("renders");
        assert!(out.contains(WITHIN_RUN_HEADER), "{format:?}");
        assert!(out.contains(RUN_TO_RUN_HEADER), "{format:?}");
        assert!(
            out.contains("from the 8 stored runs of this host"),
            "{format:?}"
        );
    }
    let concise = render_view(&run, Format::Text, false, false).expect("renders");
    assert!(concise.contains("run to run: from the 8 stored runs of this host"));
}

#[test]
fn a_run_without_history_or_rounds_says_it_covers_this_run_only() {
    let mut run = sample_run();
    crate::stats::run_to_run::annotate(&mut run, &[]);
    let out = render_view(&run, Format::Text, false, true).expect("renders");
    assert!(out.contains("run to run: this run only (no stored runs or rounds)"));
    assert!(out.contains("this run only"));
}
