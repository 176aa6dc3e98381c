//! Snapshot tests of the comparison in every format, on the fixture run against a copy with
//! one metric 10% slower, another machine and another profile.

use super::*;
use crate::model::fixture::sample_run;
use crate::stats::compare::{CompareOptions, compare_runs};

/// Candidate run: "null (getppid)" 10% slower, a different kernel, the quick profile and
/// one metric missing.
pub(crate) fn pair() -> (RunRecord, RunRecord) {
    let a = sample_run();
    let mut b = sample_run();
    b.id = "20261123T090000Z-77aa".into();
    b.started_ns += 52_200_000_000_000;
    b.host.kernel = "6.9.0-12-generic".into();
    b.config.profile = "quick".into();
    let null = &mut b.results[0].metrics[1];
    for s in &mut null.samples {
        *s *= 1.1;
    }
    b.results[0].metrics.remove(0);
    (a, b)
}

fn rendered(format: CompareFormat) -> String {
    let (a, b) = pair();
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), Some(0.05));
    render(&cmp, &a, &b, format, TextLayout::default()).unwrap()
}

crate::report::tests::snapshot_tests! {
    compare_text_snapshot: "compare_text", CompareFormat::Text;
    compare_markdown_snapshot: "compare_markdown", CompareFormat::Markdown;
    compare_json_snapshot: "compare_json", CompareFormat::Json;
}

#[test]
fn json_has_the_schema_the_verdicts_and_the_differences() {
    let v: serde_json::Value = serde_json::from_str(&rendered(CompareFormat::Json)).unwrap();
    assert_eq!(v["schema"], COMPARE_SCHEMA);
    assert_eq!(v["machine_differences"][0]["field"], "kernel");
    assert_eq!(v["run_differences"][0]["field"], "profile");
    assert_eq!(v["metrics"][0]["metric"], "null (getppid)");
    assert_eq!(v["metrics"][0]["comparison"]["verdict"], "slower");
    assert_eq!(v["metrics"][0]["regression"], true);
    assert_eq!(v["summary"]["slower"], 1);
    assert_eq!(v["summary"]["regressions"], 1);
    assert_eq!(v["only_in_a"][0]["metric"], "function call");
}

#[test]
fn text_lists_machine_differences_before_the_metrics() {
    let out = rendered(CompareFormat::Text);
    let machine = out.find("Machine differences").unwrap();
    let metrics = out.find("null (getppid)").unwrap();
    assert!(machine < metrics, "{out}");
    assert!(out.contains("slower — REGRESSION"), "{out}");
    assert!(
        out.contains("only in A: os.syscall · function call"),
        "{out}"
    );
    assert!(out.contains("--fail-above 5.0%: 1 regression(s)"), "{out}");
    assert!(!out.contains('\x1b'));
    let (a, b) = pair();
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), None);
    let colored = render(
        &cmp,
        &a,
        &b,
        CompareFormat::Text,
        TextLayout {
            color: true,
            width: None,
        },
    )
    .unwrap();
    assert!(colored.contains("\x1b[1m"));
}

/// A pair with machine-state probes: B's machine 20% slower (speed 0.8) and its os.syscall
/// samples 25% longer, so every metric is "machine slower" after normalising.
fn shifted() -> (RunRecord, RunRecord) {
    let state = crate::model::fixture::steady_machine;
    let mut a = sample_run();
    a.results[0].machine = Some(state(4.5));
    let mut b = sample_run();
    b.id = "20261123T090000Z-77aa".into();
    b.results[0].machine = Some(state(3.6));
    for m in &mut b.results[0].metrics {
        for s in &mut m.samples {
            *s *= 1.25;
        }
    }
    (a, b)
}

#[test]
fn a_shifted_machine_is_shown_and_explains_the_change() {
    let (a, b) = shifted();
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), Some(0.05));
    let text = render(&cmp, &a, &b, CompareFormat::Text, TextLayout::default()).unwrap();
    insta::assert_snapshot!("compare_text_shifted_machine", text);
    assert!(text.contains("Machine speed B/A: 0.80"), "{text}");
    assert!(text.contains("normalised [95% CI]"), "{text}");
    assert!(
        text.contains("machine slower; no change after normalising"),
        "{text}"
    );
    assert!(text.contains("--fail-above 5.0%: no regression"), "{text}");
    let md = render(&cmp, &a, &b, CompareFormat::Markdown, TextLayout::default()).unwrap();
    assert!(md.contains("**Machine speed B/A: 0.80"), "{md}");
    let v: serde_json::Value = serde_json::from_str(
        &render(&cmp, &a, &b, CompareFormat::Json, TextLayout::default()).unwrap(),
    )
    .unwrap();
    assert!((v["machine_ratio"].as_f64().unwrap() - 0.8).abs() < 1e-12);
    assert_eq!(v["metrics"][1]["verdict"], "machine_slower");
    assert_eq!(v["summary"]["machine_slower"], 3);
}

#[test]
fn a_change_put_down_to_the_shared_cache_says_so() {
    let (mut a, mut b) = shifted();
    let cache = |ns: f64| crate::model::CacheShare {
        bytes: 4 << 20,
        count: 4,
        start_ns: ns,
        end_ns: ns,
        min_ns: ns,
        max_ns: ns,
        median_ns: ns,
    };
    // Same clock on both sides: only the shared-cache probe differs (14 vs 95 ns per load).
    b.results[0].machine = a.results[0].machine.clone();
    (a.results[0].machine.as_mut().unwrap()).cache = Some(cache(14.0));
    (b.results[0].machine.as_mut().unwrap()).cache = Some(cache(95.0));
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), Some(0.05));
    let text = render(&cmp, &a, &b, CompareFormat::Text, TextLayout::default()).unwrap();
    assert!(
        text.contains("direction of the shared-cache probe"),
        "{text}"
    );
    assert!(text.contains("B/A 6.79"), "{text}");
    assert!(
        !text.contains("direction of the machine's throughput probe"),
        "{text}"
    );
    assert!(text.contains("--fail-above 5.0%: no regression"), "{text}");
}

#[test]
fn rounds_of_single_runs_are_not_called_runs() {
    // Each side one run of three rounds: tested on the rounds, with the warning that rounds
    // of one run share its moment.
    let (mut a, mut b) = pair();
    for (run, base) in [(&mut a, 51.3), (&mut b, 56.4)] {
        let m = &mut run.results[0]
            .metrics
            .iter_mut()
            .find(|m| m.name == "null (getppid)");
        let m = m.as_mut().expect("the fixture has the null syscall");
        m.rounds = Some(crate::model::RoundStats {
            medians: vec![base, base * 1.01, base * 0.99],
            median: base,
            cv: 0.01,
        });
    }
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), None);
    let text = render(&cmp, &a, &b, CompareFormat::Text, TextLayout::default()).unwrap();
    assert!(
        text.contains("rounds: p and CI from a Welch t-test on the log of the per-round medians"),
        "{text}"
    );
    assert!(!text.contains("sets: p and CI"), "{text}");
}

#[test]
fn a_stored_history_is_named_with_its_size_and_noise() {
    // Six stored runs of A's host and profile whose null syscall moves by a few percent.
    let (a, b) = pair();
    let stored: Vec<RunRecord> = [1.0, 1.04, 0.97, 1.02, 0.99, 1.05]
        .iter()
        .enumerate()
        .map(|(i, &f)| {
            let mut r = sample_run();
            r.id = format!("stored-{i}");
            for s in &mut r.results[0].metrics[1].samples {
                *s *= f;
            }
            r
        })
        .collect();
    let history: Vec<&RunRecord> = stored.iter().collect();
    let opts = CompareOptions::default();
    let cmp = crate::stats::compare::compare_sets(&[&a], &[&b], &history, &opts, None);
    let text = render(&cmp, &a, &b, CompareFormat::Text, TextLayout::default()).unwrap();
    assert!(
        text.contains("history: p and CI from a Welch t-test between runs"),
        "{text}"
    );
    assert!(text.contains("up to 6 stored runs"), "{text}");
    // B is of another profile (quick) without a history of its own: it borrows A's.
    let null = cmp.metrics.iter().find(|m| m.metric == "null (getppid)");
    let null = null.expect("compared");
    assert!(null.run_noise_a.is_some(), "{null:?}");
    assert_eq!(null.run_noise_a, null.run_noise_b, "{null:?}");
    // Without it, no such line.
    let alone = crate::stats::compare::compare_sets(&[&a], &[&b], &[], &opts, None);
    let text = render(&alone, &a, &b, CompareFormat::Text, TextLayout::default()).unwrap();
    assert!(!text.contains("history:"), "{text}");
}

/// The pair, with B's `read 1 byte` measured three times, a thousandth, once and 10⁵ times
/// A's median (its CI runs from about −100% to +10⁷%: unbounded both ways), and the metric
/// names long enough to pass any terminal's width.
fn unbounded_pair() -> (RunRecord, RunRecord) {
    let (mut a, mut b) = pair();
    let long = format!(
        "read 1 byte (/dev/zero) {}",
        "with a long label ".repeat(12)
    );
    for run in [&mut a, &mut b] {
        for m in &mut run.results[0].metrics {
            if m.name.starts_with("read 1 byte") {
                m.name = long.clone();
            }
        }
    }
    let read = b.results[0].metrics.iter_mut().find(|m| m.name == long);
    let read = read.expect("B measures read");
    let v = read.summary.median;
    read.samples = vec![v * 1e-3, v, v * 1e5];
    (a, b)
}

/// The x of the SVG element of `tag` (`<circle` with `cx`, or `<line` with `x1`) whose
/// line holds `marker`.
fn x_of(svg: &str, tag: &str, attr: &str, marker: &str) -> f64 {
    let line = svg
        .lines()
        .find(|l| l.starts_with(tag) && l.contains(marker));
    let x = line.and_then(|l| {
        l.split(&format!("{attr}=\""))
            .nth(1)?
            .split('"')
            .next()?
            .parse()
            .ok()
    });
    x.unwrap_or_else(|| panic!("no {tag} with {marker} in {svg}"))
}

#[test]
fn an_unbounded_interval_is_said_and_kept_out_of_the_chart() {
    let (a, b) = unbounded_pair();
    let cmp = compare_runs(&a, &b, &CompareOptions::default(), None);
    let layout = TextLayout {
        color: false,
        width: Some(100),
    };
    let text = render(&cmp, &a, &b, CompareFormat::Text, layout).unwrap();
    // The cell may wrap between its words at this width.
    assert!(
        text.contains("[unbounded,") && text.contains(" unbounded]"),
        "{text}"
    );
    assert!(
        text.contains("unbounded = a CI end more than 10×"),
        "{text}"
    );
    let verdicts = text.find("Verdicts: ").expect("counts");
    assert!(verdicts < text.find('┌').expect("a table"), "{text}");
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 100, "a line of {widest} columns:\n{text}");
    let full = render(&cmp, &a, &b, CompareFormat::Text, TextLayout::default()).unwrap();
    assert!(
        full.lines().any(|l| l.chars().count() > 100),
        "--full keeps lines whole"
    );
    let md = render(&cmp, &a, &b, CompareFormat::Markdown, layout).unwrap();
    assert!(md.contains("[unbounded, unbounded]"), "{md}");
    // The change chart's axis stays near +10% of `null`: its dot lies well right of zero.
    let page = html::render(&cmp, &a, &b).unwrap();
    let zero = x_of(&page, "<line", "x1", "stroke=\"#666\"");
    let null = x_of(&page, "<circle", "cx", "null (getppid): +10");
    assert!(null - zero > 60.0, "zero at x = {zero}, +10% at x = {null}");
}
