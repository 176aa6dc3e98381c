//! Tests of the whole page on the fixture run: structure and order, escaping, no network
//! references, drawable charts, embedded flame graphs.

use super::render;
use crate::model::fixture::sample_run;
use crate::model::{Artifact, Metric, RunRecord};

/// The HTML page of `run` (also used by the per-kind tests).
pub(super) fn page(run: &RunRecord) -> String {
    match render(run) {
        Ok(html) => html,
        Err(e) => panic!("render failed: {e}"),
    }
}

/// Position of `needle` in `hay` after `from`, or a panic naming it.
fn pos(hay: &str, needle: &str, from: usize) -> usize {
    match hay[from..].find(needle) {
        Some(i) => from + i,
        None => panic!("{needle:?} not found after byte {from}"),
    }
}

#[test]
fn sections_come_in_the_documented_order() {
    let html = page(&sample_run());
    assert!(html.starts_with("<!DOCTYPE html>"));
    let summary = pos(&html, "id=\"summary\"", 0);
    pos(&html, "bench-01 · Linux ", summary);
    let answer = pos(&html, "id=\"answer\"", summary);
    pos(&html, "Findings per group", answer);
    let exp = pos(&html, "id=\"exp-os-syscall\"", answer);
    let about = pos(&html, "The cost of entering and leaving the kernel.", exp);
    let method = pos(&html, "<h3>Methodology</h3>", about);
    let estimate = pos(&html, "<h3>Estimate</h3>", method);
    let table = pos(&html, "<td>null (getppid)</td>", estimate);
    let chart = pos(&html, "<svg class=\"chart\"", table);
    let findings = pos(&html, "<h3>Findings</h3>", chart);
    let next = pos(&html, "id=\"exp-mem-latency\"", findings);
    assert!(next > findings);
    let skipped = pos(&html, "id=\"exp-fs-direct\"", next);
    pos(&html, "O_DIRECT is not supported on tmpfs (/tmp)", skipped);
    pos(&html, "pass --dir on a disk-backed file system", skipped);
    let failed = pos(&html, "id=\"exp-ipc-pipe\"", skipped);
    pos(&html, "too many open files (EMFILE)", failed);
    // The machine description comes last, collapsed.
    let machine = pos(&html, "<details class=\"machine\" id=\"machine\">", failed);
    pos(&html, "AMD EPYC 7B13 64-Core Processor", machine);
    pos(&html, "<h4>Caches</h4>", machine);
    pos(&html, "<h4>Capabilities</h4>", machine);
    pos(&html, "<footer>", machine);
    assert!(html.contains("Noise warnings about this machine"));
}

#[test]
fn markup_in_names_is_escaped_everywhere() {
    let mut run = sample_run();
    run.host.hostname = "<b>host</b>".into();
    let r = &mut run.results[0];
    r.metrics[0].name = "<script>alert('m')</script>".into();
    r.findings[0].text = "x < y & \"z\"".into();
    r.about.methodology = "<img src=x onerror=alert(1)>".into();
    let html = page(&run);
    assert!(!html.contains("<script"), "a script element leaked");
    assert!(!html.contains("<img"), "an img element leaked");
    assert!(!html.contains("<b>host"));
    // askama writes `&#60;`, the chart writer and prose `&lt;`: both are escaped text.
    assert!(html.contains("<td>&#60;script&#62;alert(&#39;m&#39;)&#60;/script&#62;</td>"));
    assert!(html.contains(">&lt;script&gt;alert(&#39;m&#39;)&lt;/script&gt;</text>"));
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
}

/// Every `d="…"` of a `<path` and `points="…"` of a `<polyline` in `html` is non-empty.
pub(crate) fn assert_paths_drawn(html: &str) -> usize {
    let mut count = 0;
    for (tag, attr) in [("<path", " d=\""), ("<polyline", " points=\"")] {
        for (i, _) in html.match_indices(tag) {
            let element = &html[i..i + html[i..].find('>').unwrap_or(0)];
            let start = pos(element, attr, 0) + attr.len();
            let value = &element[start..start + element[start..].find('"').unwrap_or(0)];
            assert!(value.trim().len() > 3, "empty geometry in {element}");
            count += 1;
        }
    }
    count
}

#[test]
fn every_chart_path_has_geometry() {
    let html = page(&sample_run());
    assert_eq!(html.matches("<svg class=\"chart\"").count(), 2);
    assert!(assert_paths_drawn(&html) >= 2);
}

#[test]
fn flame_graphs_are_framed_data_urls_and_text_artifacts_previews() {
    let mut run = sample_run();
    let svg = "<?xml version=\"1.0\"?><svg width=\"1200\" height=\"150\" onload=\"init(evt)\">\
               <script><![CDATA[function init(evt) {}]]></script></svg>";
    run.results[0].artifacts = vec![
        Artifact {
            name: "flamegraph".into(),
            media_type: "image/svg+xml".into(),
            content: svg.into(),
        },
        Artifact {
            name: "folded".into(),
            media_type: "text/plain".into(),
            content: "main;<work> 10\n".into(),
        },
    ];
    let html = page(&run);
    assert!(
        !html.contains("<script"),
        "the flame graph's script must stay inside its frame"
    );
    assert!(html.contains("<iframe class=\"flame\""));
    assert!(html.contains("height=\"154\" src=\"data:image/svg+xml;base64,"));
    assert!(html.contains("<pre class=\"artifact\">main;&#60;work&#62; 10\n</pre>"));
}

#[test]
fn empty_and_odd_runs_still_render() {
    let mut run = sample_run();
    run.results.truncate(1);
    run.results[0].metrics = vec![Metric {
        degenerate: None,
        samples: vec![],
        ..run.results[0].metrics[0].clone()
    }];
    run.results[0].metrics[0].summary.median = f64::NAN;
    run.interrupted = true;
    let html = page(&run);
    assert!(html.contains("Interrupted:"));
    assert!(!html.contains("NaN"));
    run.results.clear();
    assert!(page(&run).contains("id=\"machine\""));
}

#[test]
fn a_group_shows_three_findings_and_folds_the_rest() {
    let mut run = sample_run();
    let first = run.results[0].clone();
    for i in 0..5 {
        let mut r = first.clone();
        r.findings = vec![crate::model::Finding::new(
            &format!("f{i}"),
            format!("finding number {i}"),
            None,
        )];
        run.results.push(r);
    }
    let html = page(&run);
    let more = pos(&html, "<details><summary>", 0);
    // The group's first three are shown, the rest folded after them.
    assert!(pos(&html, "finding number 1", 0) < more);
    assert!(pos(&html, "finding number 4", more) > more);
}

#[test]
fn the_summary_opens_a_bench_report_and_only_a_bench_report() {
    let html = page(&sample_run());
    let glance = pos(&html, "<section id=\"glance\">", 0);
    pos(&html, "This machine at a glance", glance);
    // A card per group: its name, its note, its figures as value and label.
    let os = pos(&html, "<h4>os</h4>", glance);
    let figure = "<div class=\"figure\"><div class=\"v\">51.3 ns</div><div class=\"l\">null syscall</div></div>";
    let figure = pos(&html, figure, os);
    pos(
        &html,
        "Noise: machine state not probed; 1 host warning",
        figure,
    );
    // Before the run and machine description, before the experiments.
    assert!(glance < pos(&html, "id=\"machine\"", 0));
    let mut profile = sample_run();
    profile.kind = crate::model::RunKind::Profile;
    assert!(!page(&profile).contains("id=\"glance\""));
}
