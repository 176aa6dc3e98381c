//! The checker itself: it reads figures as `model::units` writes them, finds the label a
//! figure stands beside, and catches a planted mismatch on a real page.

use serde_json::json;

use super::tests_kinds::{pages, run_truth};
use super::{Truth, check, figures};
use crate::model::fixture::sample_run;
use crate::model::{RunRecord, units};

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

#[test]
fn a_finding_beside_a_metrics_name_must_quote_its_figure() {
    // Issue 43: two rounds pooled into the table's 548 µs; the finding kept the last round's.
    let record = json!({
        "metrics": [{
            "name": "fork+exit+wait",
            "summary": {"median": 530_000.0, "p99": 3_426_000.0},
            "rounds": {"medians": [548_000.0, 3_426_000.0], "median": 548_000.0},
        }],
        "findings": [
            {"key": "a", "text": "Creating a process (fork+exit+wait 3.43 ms) is slow."},
            {"key": "b", "text": "Creating a process (fork+exit+wait 548 µs) is fast."},
        ],
    });
    let truth = Truth::of(&[record]);
    let wrong =
        |page: &str| -> Vec<String> { check(&truth, page).into_iter().map(|m| m.shown).collect() };
    assert_eq!(
        wrong("Creating a process (fork+exit+wait 3.43 ms) is slow."),
        ["3.43 ms"],
        "one round's median, and its p99, are values of the metric but not its figure"
    );
    assert!(wrong("Creating a process (fork+exit+wait 548 µs) is fast.").is_empty());
    // In a table row the metric's other values (its p99) stand beside its name as ever.
    assert!(wrong("│ fork+exit+wait ┆ 548 µs ┆ 3.43 ms │").is_empty());
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
        assert_eq!(wrong[0].shown, "61.7 ns", "{format}");
        // Where the page shows its CI beside it, the planted median also leaves its interval.
        for other in &wrong[1..] {
            assert!(
                other.shown.starts_with("61.7 ns outside "),
                "{format}: {wrong:?}"
            );
        }
    }
}

#[test]
fn a_value_outside_the_interval_beside_it_is_caught() {
    let outside = |page: &str| -> Vec<String> {
        super::outside_its_interval(&figures(page, &[], &[]))
            .into_iter()
            .map(|m| m.shown)
            .collect()
    };
    // The rounds' median beside the pooled samples' CI (issue 43).
    assert_eq!(
        outside("│ null ┆ 1.15 ns ┆ 3.1% ┆ 1.23–1.23 ns ┆ 1.40 ns │"),
        ["1.15 ns outside 1.23 ns–1.23 ns"]
    );
    assert_eq!(
        outside("median 61.7 ns (within-run 95% CI 50.1–52.3 ns)"),
        ["61.7 ns outside 50.1 ns–52.3 ns"]
    );
    // Inside, at an end as rounded, in other units, or not beside it: no mismatch.
    assert!(outside("│ null ┆ 1.15 ns ┆ 1.10–1.23 ns │").is_empty());
    assert!(outside("median 1.00 µs (CI 998 ns–1.01 µs)").is_empty());
    assert!(outside("│ a ┆ 52.3 ns ┆ 50.1–52.3 ns │").is_empty());
    assert!(outside("1.00 s took; 2 of 3 from 5 ms 2.1–2.2 MiB").is_empty());
}

/// The sample run with rounds on its first experiment's second metric: the rounds' medians
/// and their median as multiples of the pooled samples' median, and their CV.
fn with_rounds(medians: &[f64], median: f64, cv: f64) -> RunRecord {
    let mut run = sample_run();
    let m = &mut run.results[0].metrics[1];
    let pooled = m.summary.median;
    m.rounds = Some(crate::model::RoundStats {
        medians: medians.iter().map(|f| pooled * f).collect(),
        median: pooled * median,
        cv,
    });
    run
}

#[test]
fn with_rounds_the_median_of_rounds_stands_beside_the_range_of_rounds() {
    // Three rounds whose medians sit below the pooled samples' CI, as in issue 43.
    let run = with_rounds(&[0.90, 0.93, 0.95], 0.93, 0.03);
    let truth = run_truth(&run);
    for (format, page) in pages(&run) {
        if format != "text" {
            assert!(page.contains("range of rounds"), "{format}:\n{page}");
        }
        let outside = super::outside_its_interval(&figures(&page, &[], &[]));
        assert!(outside.is_empty(), "{format}: {outside:?}");
        assert_eq!(check(&truth, &page), [], "{format}");
    }
}

#[test]
fn a_range_of_rounds_whose_ends_are_close_is_the_records() {
    // Two rounds 0.003% apart: the range is shown finer than a value (`units::range`), as a
    // real quick run showed `1.21378–1.21381 ns`.
    let run = with_rounds(&[1.0, 1.000_03], 1.000_015, 0.000_02);
    let truth = run_truth(&run);
    for (format, page) in pages(&run) {
        assert_eq!(check(&truth, &page), [], "{format}");
    }
}
