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

#[test]
fn a_run_with_its_session_end_shows_one_wall_time_its_real_time() {
    let mut run = run_record();
    let real = run.results[0].metrics[0].summary.median;
    assert_eq!(run.results[0].metrics[0].name, "real time");
    // What `diagnose::run` records now: the session's wall time is the real time measured.
    run.results[0].session = Some(crate::model::SessionEnd {
        ended: "finished".into(),
        exit_code: Some(0),
        wall_ns: real as u64,
        own_cpu_ns: 1_000_000,
        lost: 0,
        blinded: None,
    });
    let shown = crate::model::units::duration_ns(real);
    assert_eq!(
        super::format::wall_time_phrase(&run),
        Some(format!("observed {shown}"))
    );
    for format in [Format::Text, Format::Markdown] {
        let out = render(&run, format, false).expect("renders");
        let said = out.contains(&format!("observed {shown}"));
        assert!(said || format == Format::Markdown, "{format:?}:\n{out}");
        assert!(
            !out.contains("took "),
            "{format:?}: a second wall time\n{out}"
        );
    }
}

/// The `alloc` record of `truth/fixtures/alloc.json` (`sysmeter alloc --format json`).
fn alloc_record() -> RunRecord {
    let text = include_str!("truth/fixtures/alloc.json");
    serde_json::from_str(text).unwrap_or_else(|e| panic!("fixture is not a run: {e}"))
}

#[test]
fn the_alloc_page_says_what_its_flame_graphs_draw() {
    let html = super::html::render(&alloc_record()).expect("html renders");
    assert!(html.contains("Flame graph of allocated bytes"), "{html}");
    assert!(html.contains("Flame graph of allocations"), "{html}");
    assert!(!html.contains("(flamegraph"), "artifact names as captions");
}

#[test]
fn the_live_heap_chart_claims_no_interval_and_holds_the_marked_peak() {
    let mut run = alloc_record();
    // A peak between two ticks of the sampled heap, well above every sample.
    let live = run.results[0].series.iter().find(|s| s.name == "live heap");
    let highest = (live.expect("live heap").points.iter())
        .map(|p| p.summary.median)
        .fold(0.0, f64::max);
    let peak_metric = (run.results[0].metrics.iter_mut())
        .find(|m| m.name == "peak live")
        .expect("peak live");
    peak_metric.summary.median = highest * 50.0;
    let r = &run.results[0];
    let charts = super::charts::curves(r, &[]);
    let heap = (charts.iter().find(|c| c.title.contains("live heap"))).expect("heap chart");
    assert!(!heap.caption.contains("CI"), "{}", heap.caption);
    let (peak, _) = crate::model::alloc::peak(r).expect("a peak");
    assert!(
        peak > highest,
        "premise: the peak falls between two samples"
    );
    let label = format!(
        "peak live {}",
        crate::model::units::value(peak, Unit::Bytes)
    );
    assert!(heap.svg.contains(&label), "{}", heap.svg);
    // The y axis reaches the peak: its highest tick is at or above it.
    let ticks = heap.svg.split("class=\"tick\"").skip(1);
    let values = ticks.filter_map(|t| {
        let text = t.split_once('>')?.1.split_once('<')?.0;
        super::truth::magnitude(text).map(|(v, _)| v)
    });
    let values: Vec<f64> = values.collect();
    let top = values.iter().copied().fold(0.0, f64::max);
    assert!(top >= peak, "highest tick {top} below the peak {peak}");
}
