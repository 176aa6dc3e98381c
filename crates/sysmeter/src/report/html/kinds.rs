//! Tests of the layouts over a fixture of every run kind: the bench fixture
//! (`model::fixture::sample_run`) and a real `run`, `trace`, `profile`, `scale` and `calls` record
//! saved as JSON in `fixtures/` (written by `sysmeter <kind> --format json`). Each page opens
//! with its answer, and no chart on any of them draws two kinds of quantity on one axis.

use super::sections;
use super::tests::page;
use crate::model::fixture::{assert_in_order, sample_run};
use crate::model::{ExperimentResult, Finding, RunKind, RunRecord};
use crate::report::charts::Chart;

/// A run of every kind.
fn every_kind() -> Vec<RunRecord> {
    let files = [
        include_str!("fixtures/run.json"),
        include_str!("fixtures/trace.json"),
        include_str!("fixtures/profile.json"),
        include_str!("fixtures/scale.json"),
        include_str!("fixtures/calls.json"),
    ];
    let mut runs = vec![sample_run()];
    for text in files {
        match serde_json::from_str(text) {
            Ok(run) => runs.push(run),
            Err(e) => panic!("fixture is not a run: {e}"),
        }
    }
    runs
}

/// The profile fixture with an off-CPU result (`profile --both`) holding `findings`.
fn profile_with_offcpu(findings: Vec<Finding>) -> RunRecord {
    let mut run = every_kind().remove(3);
    let mut off = ExperimentResult::new("offcpu", run.results[0].about.clone());
    off.findings = findings;
    run.results.push(off);
    run
}

/// Every chart the page of `run` draws: the answer's and every experiment's.
fn charts_of(run: &RunRecord) -> Vec<Chart> {
    let (answer, views) = sections(run, crate::report::kinds::view(run.kind));
    let mut charts = answer.charts;
    charts.extend(views.into_iter().flat_map(|v| v.charts));
    charts
}

#[test]
fn the_fixtures_cover_every_run_kind() {
    let kinds: Vec<RunKind> = every_kind().iter().map(|r| r.kind).collect();
    // The fixtures: every kind before `locks` and `alloc`, in RunKind::ALL's order.
    assert_eq!(kinds, RunKind::ALL[..6]);
}

#[test]
fn no_chart_mixes_units_in_any_run_kind() {
    for run in every_kind() {
        let charts = charts_of(&run);
        // A profile's answer is its flame graph; every other kind draws charts.
        let profile = run.kind == RunKind::Profile;
        assert!(
            profile || !charts.is_empty(),
            "{} draws a chart",
            run.kind.as_str()
        );
        for chart in &charts {
            let first = chart.quantities.first().copied();
            let mixed: Vec<_> = chart
                .quantities
                .iter()
                .filter(|q| Some(**q) != first)
                .collect();
            assert!(
                mixed.is_empty(),
                "{} chart {:?} mixes {:?}",
                run.kind.as_str(),
                chart.title,
                chart.quantities
            );
        }
    }
}

/// The check has teeth: the run fixture's timeline holds percentages, rates per second and
/// counts, all in unit `count`, which a chart grouped by unit alone would mix.
#[test]
fn the_run_fixture_has_several_quantities_in_one_unit() {
    use crate::model::Unit;
    use crate::report::charts::Quantity;
    let runs = every_kind();
    let timeline = &runs[1].results[0].series;
    let mut kinds: Vec<Quantity> = timeline
        .iter()
        .filter(|s| s.y_unit == Unit::Count)
        .map(|s| Quantity::of(&s.name, s.y_unit))
        .collect();
    kinds.dedup();
    for q in [Quantity::Percent, Quantity::PerSecond, Quantity::Count] {
        assert!(kinds.contains(&q), "{q:?} in {kinds:?}");
    }
}

#[test]
fn every_chart_has_a_title_a_caption_sentence_and_axis_units() {
    for run in every_kind() {
        for chart in charts_of(&run) {
            assert!(!chart.title.is_empty());
            let caption = chart.caption.trim();
            assert!(caption.ends_with('.'), "one sentence: {caption:?}");
            assert_eq!(
                caption.matches(". ").count(),
                0,
                "one sentence: {caption:?}"
            );
            // Axis titles end with their unit in brackets: `working set [B]`.
            let units = chart.svg.matches("] (log scale)</text>").count()
                + chart.svg.matches("]</text>").count();
            assert!(
                units >= 1,
                "{}: no axis unit in {:?}",
                run.kind.as_str(),
                chart.title
            );
        }
    }
}

#[test]
fn every_layout_opens_with_its_answer_and_ends_with_the_machine() {
    let expected = [
        (RunKind::Bench, "Findings per group"),
        (RunKind::Run, "Verdict: "),
        (RunKind::Trace, "Top calls"),
        (RunKind::Profile, "<iframe class=\"flame\""),
        (
            RunKind::Scale,
            "Wall time by N, with the best fit and the knee",
        ),
        (RunKind::Calls, "Top calls"),
    ];
    for (run, (kind, answer)) in every_kind().iter().zip(expected) {
        assert_eq!(run.kind, kind);
        let html = page(run);
        let at = |needle: &str| html.find(needle).unwrap_or(usize::MAX);
        let (section, first_experiment) =
            (at("id=\"answer\""), at("<section class=\"experiment\""));
        assert!(
            section < at(answer),
            "{}: answer in its section",
            kind.as_str()
        );
        assert!(
            at(answer) < first_experiment,
            "{}: answer before the details",
            kind.as_str()
        );
        assert!(
            at("id=\"summary\"") < section,
            "{}: summary line first",
            kind.as_str()
        );
        assert!(at("noise: ") < section);
        assert!(
            first_experiment < at("<details class=\"machine\""),
            "machine last"
        );
    }
}

/// A profile with two flame graphs (on-CPU and off-CPU, `--both`) shows them side by
/// side in the answer, and neither again in the details.
#[test]
fn two_flame_graphs_sit_side_by_side_in_the_answer() {
    let mut run = every_kind().remove(3);
    assert_eq!(run.kind, RunKind::Profile);
    let mut second = run.results[0].artifacts.clone();
    second.retain(|a| a.name == "flamegraph");
    for a in &mut second {
        a.name = "off-cpu flamegraph".into();
        a.media_type = "image/svg+xml".into();
    }
    run.results[0].artifacts.extend(second);
    let html = page(&run);
    // The pair is in the answer.
    assert_in_order(&html, &["id=\"answer\"", "class=\"flames pair\""]);
    assert_eq!(html.matches("<iframe class=\"flame\"").count(), 2);
}

/// An off-CPU profile's top blocked stacks are in the answer, above the details.
#[test]
fn blocked_stacks_of_an_off_cpu_profile_are_in_the_answer() {
    let run = profile_with_offcpu(vec![Finding::new(
        "blocked_1",
        "97% of off-CPU time blocked in nap_here (sleep/timer)".into(),
        Some(0.97),
    )]);
    let html = page(&run);
    // The blocked stack is in the answer.
    let order = ["id=\"answer\"", "nap_here", "<section class=\"experiment\""];
    assert_in_order(&html, &order);
}

/// A profile that lost records says so first: the first line of the HTML answer, and the
/// line under the title in the terminal, above the CPU half of `--both`.
#[test]
fn a_loss_is_the_first_line_of_the_answer_and_under_the_terminal_title() {
    let run = profile_with_offcpu(
        [
            ("lost", "Incomplete: 47 of 117 records lost (40%)"),
            ("blocked_1", "97% of off-CPU time blocked in nap_here"),
        ]
        .map(|(key, text)| Finding::new(key, text.into(), None))
        .to_vec(),
    );
    let html = page(&run);
    // The loss leads the answer.
    let order = ["id=\"answer\"", "Incomplete: 47 of 117", "nap_here"];
    assert_in_order(&html, &order);
    let text = crate::report::render(&run, crate::report::Format::Text, false)
        .unwrap_or_else(|e| panic!("text failed: {e}"));
    let second = text.lines().nth(1).unwrap_or_default();
    assert!(
        second.starts_with("warning: Incomplete: 47 of 117"),
        "under the title: {text}"
    );
}
