//! Values shown as what they are (issue 43): a single observation — `run`'s real time, a
//! fault count, a fitted coefficient — is shown as its value, without a within-run CI or a
//! p99 that would only repeat it.

use super::format::{NONE, VALUE_HEADER, WITHIN_RUN_HEADER, metric_table};
use super::{Format, render};
use crate::model::fixture::sample_run;
use crate::model::{Metric, RunRecord, Summary, Unit};

/// The `run` record of `html/fixtures/run.json` (`sysmeter run --format json`): every metric
/// one observation.
fn run_record() -> RunRecord {
    let text = include_str!("html/fixtures/run.json");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("fixture is not a run: {e}"))
}

#[test]
fn a_run_of_single_observations_shows_values_without_ci_or_p99() {
    let run = run_record();
    let metrics = &run.results[0].metrics;
    assert!(
        metrics.iter().all(|m| m.summary.n == 1),
        "the fixture's premise"
    );
    let (headers, rows) = metric_table(metrics);
    assert_eq!(headers, ["metric", VALUE_HEADER, "notes"]);
    let real = rows
        .iter()
        .find(|r| r[0] == "real time")
        .expect("real time");
    assert_eq!(real[1], "154 ms");
    for format in [Format::Text, Format::Markdown] {
        let out = render(&run, format, false).expect("renders");
        assert!(!out.contains(WITHIN_RUN_HEADER), "{format:?}:\n{out}");
        assert!(!out.contains("p99"), "{format:?}:\n{out}");
        assert!(!out.contains("154–154 ms"), "{format:?}:\n{out}");
    }
}

#[test]
fn a_single_observation_beside_sampled_metrics_has_no_spread_cells() {
    let mut metrics = sample_run().results.remove(0).metrics;
    let one = Summary {
        n: 1,
        median: 2.0,
        p99: 2.0,
        ci95: (2.0, 2.0),
        ..Summary::default()
    };
    metrics.push(Metric::new("major faults", Unit::Count, one));
    let (headers, rows) = metric_table(&metrics);
    let ci = headers
        .iter()
        .position(|h| h == WITHIN_RUN_HEADER)
        .expect("CI column");
    let p99 = headers.iter().position(|h| h == "p99").expect("p99 column");
    let faults = rows.last().expect("rows");
    assert_eq!((faults[1].as_str(), faults[ci].as_str()), ("2", NONE));
    assert_eq!(faults[p99], NONE);
    assert_ne!(rows[0][ci], NONE, "a sampled metric keeps its CI");
}

#[test]
fn a_lower_bound_reads_with_its_sign_on_every_page() {
    let mut run = sample_run();
    let one = Summary {
        n: 1,
        median: 96.0 * 1024.0 * 1024.0,
        p99: 96.0 * 1024.0 * 1024.0,
        ci95: (96.0 * 1024.0 * 1024.0, 96.0 * 1024.0 * 1024.0),
        ..Summary::default()
    };
    let mut size = Metric::new("file cache size", Unit::Bytes, one);
    size.at_least = true;
    run.results[0].metrics.push(size);
    let html = crate::report::html::render(&run).expect("html renders");
    for (format, page) in [
        ("text", render(&run, Format::Text, false).expect("text")),
        (
            "full",
            super::render_view(&run, Format::Text, false, true).expect("full"),
        ),
        (
            "markdown",
            render(&run, Format::Markdown, false).expect("markdown"),
        ),
        ("html", html),
    ] {
        let bare = page.matches("96 MiB").count();
        let bounded = page.matches("≥ 96 MiB").count();
        assert!(bounded > 0, "{format}: no ≥ 96 MiB:\n{page}");
        assert_eq!(bare, bounded, "{format}: 96 MiB shown without ≥:\n{page}");
    }
}
