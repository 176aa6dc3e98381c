//! The checker itself: it reads figures as `model::units` writes them, finds the label a
//! figure stands beside, and catches a planted mismatch on a real page.

use serde_json::json;

use super::tests_kinds::{pages, run_truth};
use super::{Truth, check, figures};
use crate::model::fixture::sample_run;
use crate::model::units;

fn shown(page: &str) -> Vec<String> {
    figures(page, &[], &[])
        .into_iter()
        .map(|f| f.shown)
        .collect()
}

#[test]
fn figures_are_read_with_their_units_and_ranges_split() {
    assert_eq!(
        shown("real 239 ms, rate 812 MB/s; 50.1–52.3 ns and 998 ns–1.01 µs, ~1230 cyc"),
        [
            "239 ms", "812 MB/s", "50.1 ns", "52.3 ns", "998 ns", "1.01 µs", "1230 cyc"
        ]
    );
    // Versions, ids, words and bare counts are not figures.
    assert!(shown("Linux 6.18.44-fc-v1300 run 20261207T213845Z 56 samples x86_64 12%").is_empty());
}

#[test]
fn a_figure_takes_the_label_beside_it_or_its_rows() {
    let labels = ["wall time", "off-cpu"];
    let label_of = |page: &str| -> Vec<Option<String>> {
        figures(page, &labels, &[])
            .into_iter()
            .map(|f| f.label)
            .collect()
    };
    assert_eq!(
        label_of("wall time 8.49 s · took 9.05 s"),
        [Some("wall time".into()), None]
    );
    assert_eq!(label_of("766 ms off-CPU"), [Some("off-cpu".into())]);
    assert_eq!(
        label_of("│ wall time ┆ 1.00 s ┆ 2.00 s │"),
        vec![Some("wall time".to_string()); 2]
    );
    assert_eq!(
        label_of("| wall time | 1.00 s |"),
        [Some("wall time".into())]
    );
}

#[test]
fn a_figure_must_be_one_of_the_records_values_and_of_its_labels() {
    let record = json!({
        "metrics": [
            {"name": "wall time", "value": 8.49e9},
            {"name": "process create", "value": 548_000.0},
        ],
        "note": "3426 µs said in the record's own words",
    });
    let truth = Truth::of(&[record]);
    let wrong =
        |page: &str| -> Vec<String> { check(&truth, page).into_iter().map(|m| m.shown).collect() };
    assert!(wrong("wall time 8.49 s; process create 548 µs").is_empty());
    assert_eq!(
        wrong("took 9.05 s"),
        ["9.05 s"],
        "not a value of the record"
    );
    assert_eq!(
        wrong("process create 8.49 s"),
        ["8.49 s"],
        "another label's value"
    );
    assert!(wrong("as it said: 3426 µs said in the record's own words").is_empty());
    assert_eq!(wrong("process create 3426 µs"), ["3426 µs"]);
    assert_eq!(
        wrong("wall time 8.49 s (95% CI 8.49–8.49 s)"),
        ["8.49 s"],
        "a range of one"
    );
}

/// The bench fixture's "null (getppid)" median as every page shows it.
fn getppid() -> String {
    let run = sample_run();
    units::duration_ns(run.results[0].metrics[1].summary.median)
}

#[test]
fn a_planted_mismatch_is_caught_on_every_page() {
    let run = sample_run();
    let truth = run_truth(&run);
    let real = getppid();
    for (format, page) in pages(&run) {
        assert!(page.contains(&real), "{format}: the fixture shows {real}");
        assert!(
            check(&truth, &page).is_empty(),
            "{format}: consistent before planting"
        );
        // One figure changed where the page shows the median of "null (getppid)".
        let planted = page.replacen(&real, "61.7 ns", 1);
        let wrong = check(&truth, &planted);
        assert_eq!(wrong.len(), 1, "{format}: {wrong:?}");
        assert_eq!(wrong[0].shown, "61.7 ns", "{format}");
    }
}
