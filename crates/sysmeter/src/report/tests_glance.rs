//! The concise terminal view, "this machine at a glance" and a degenerate metric on the fixed
//! run: what the view keeps and drops, that the summary's Markdown is one table, and that the
//! view chosen never changes the JSON.

use super::{Format, render, render_view, summary};
use crate::model::fixture::sample_run;
use crate::model::{RunRecord, Series, SeriesPoint, Unit};

/// The fixture with a series whose points are also metrics (as fs.contention records them)
/// and one metric the harness flagged.
fn run_with_series_metrics() -> RunRecord {
    let mut run = sample_run();
    let r = &mut run.results[0];
    let points = r.metrics.iter().enumerate().map(|(i, m)| SeriesPoint {
        x: i as f64 + 1.0,
        summary: m.summary,
        cycles: m.cycles,
    });
    r.series.push(Series {
        name: "cost".into(),
        x_label: "threads".into(),
        x_unit: Unit::Count,
        y_unit: Unit::Ns,
        points: points.take(2).collect(),
    });
    r.metrics[2].degenerate = Some("7 of 10 samples are 0".into());
    run
}

#[test]
fn concise_view_shows_series_as_lines_and_drops_their_rows() {
    let run = run_with_series_metrics();
    let out = render(&run, Format::Text, false).unwrap();
    // The two metrics that are series points are not repeated; the third stays, flagged.
    assert!(!out.contains("function call 1.21 ns"), "{out}");
    assert!(
        out.contains("read 1 byte (/dev/zero) not a result"),
        "{out}"
    );
    assert!(
        out.contains("cost by threads: ▁█ 1.21 ns at 1 → 51.3 ns at 2"),
        "{out}"
    );
    assert!(out.contains("load latency by working set: "), "{out}");
    // No table borders, and the summary closes it.
    assert!(!out.contains('┌'), "{out}");
    assert!(out.contains("This machine at a glance (bench-01"), "{out}");
    // The full view keeps every row and still ends with the summary.
    let full = render_view(&run, Format::Text, false, true).unwrap();
    assert!(full.contains("│ function call") && full.contains("not a result: 7 of 10"));
    assert!(full.contains("This machine at a glance"));
    assert!(out.lines().count() < full.lines().count());
}

#[test]
fn the_json_is_the_same_whatever_the_terminal_view() {
    let run = run_with_series_metrics();
    let json = render(&run, Format::Json, false).unwrap();
    for full in [false, true] {
        assert_eq!(render_view(&run, Format::Json, false, full).unwrap(), json);
        assert_eq!(
            render_view(&run, Format::Markdown, false, full).unwrap(),
            render(&run, Format::Markdown, false).unwrap()
        );
    }
    let back: RunRecord = serde_json::from_str(&json).unwrap();
    assert_eq!(
        back.results[0].metrics[2].degenerate.as_deref(),
        Some("7 of 10 samples are 0")
    );
    assert_eq!(
        back.results[0].metrics[2].samples,
        run.results[0].metrics[2].samples
    );
}

#[test]
fn the_summary_quotes_the_syscall_and_the_noise_state() {
    let run = sample_run();
    let text = summary(&run, Format::Text).unwrap();
    assert!(
        text.starts_with("This machine at a glance (bench-01"),
        "{text}"
    );
    assert!(text.contains("  os        null syscall 51.3 ns"), "{text}");
    assert!(
        text.contains("noise     machine state not probed"),
        "{text}"
    );
    assert!(summary(&run, Format::Json).is_none());
}

/// The cells of every table row of `md`, and how many tables it holds (a real Markdown
/// parser: what a viewer renders).
fn tables(md: &str) -> (usize, Vec<Vec<String>>) {
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
    let (mut count, mut rows, mut cell) = (0, Vec::new(), None::<String>);
    for event in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match event {
            Event::Start(Tag::Table(_)) => count += 1,
            Event::Start(Tag::TableHead | Tag::TableRow) => rows.push(Vec::new()),
            Event::Start(Tag::TableCell) => cell = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(c) = cell.as_mut() {
                    c.push_str(&t);
                }
            }
            Event::End(TagEnd::TableCell) => {
                if let (Some(row), Some(c)) = (rows.last_mut(), cell.take()) {
                    row.push(c);
                }
            }
            _ => {}
        }
    }
    (count, rows)
}

#[test]
fn the_markdown_summary_is_one_table() {
    let mut run = sample_run();
    run.results[0].findings[0].text = "a | pipe in a finding".into();
    let md = summary(&run, Format::Markdown).unwrap();
    let (count, rows) = tables(&md);
    assert_eq!(count, 1, "{md}");
    assert_eq!(rows[0], ["group", "figures"]);
    assert!(rows.iter().all(|r| r.len() == 2), "{rows:?}");
    let os = rows.iter().find(|r| r[0] == "os").expect("os row");
    assert!(os[1].contains("null syscall 51.3 ns"), "{os:?}");
    assert!(
        rows.iter()
            .any(|r| r[0] == "finding 1" && r[1] == "a | pipe in a finding")
    );
    assert_eq!(rows.last().map(|r| r[0].as_str()), Some("noise"));
}

#[test]
fn the_glance_and_the_summary_count_the_same_probed_experiments() {
    let mut run = sample_run();
    run.results[0].machine = Some(crate::model::fixture::steady_machine(2.45));
    // A failed experiment the probe watched, the machine moving: counted by both or neither.
    let mut moving = crate::model::fixture::steady_machine(2.45);
    moving.stable = false;
    run.results[3].machine = Some(moving);
    let page = crate::report::html::render(&run).expect("html renders");
    let glance = summary(&run, Format::Text).expect("a glance");
    assert!(
        page.contains("unsteady in 1 of 2 probed"),
        "the HTML summary line"
    );
    assert!(glance.contains("moved in 1 of 2 experiments"), "{glance}");
}
