//! Integration tests of the concise terminal view and "this machine at a glance" on a real
//! `bench --quick cpu.loop os.syscall mem.latency` run: `bench` and `show` print the concise
//! view ending with the summary, `--full` the complete tables, `show --summary` the summary
//! alone (one Markdown table with `--format markdown`), and the JSON is the same whatever the
//! terminal showed; and a stored full default run (tests/fixtures/runs/default-bench.json)
//! reads in at most 150 lines with every experiment and series, and keeps its JSON.

use std::path::Path;

use serde_json::Value;

use crate::support::{json_of, stderr_of, stdout_of, sysmeter};

fn path_arg(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// `show ARGS --db DB` (must succeed): its stdout.
fn show(db: &Path, args: &[&str]) -> String {
    stdout_of(
        sysmeter()
            .arg("show")
            .args(args)
            .args(["--db", path_arg(db)]),
    )
}

/// How many Markdown tables `md` holds, parsed as a viewer would.
fn markdown_tables(md: &str) -> usize {
    use pulldown_cmark::{Event, Options, Parser, Tag};
    Parser::new_ext(md, Options::ENABLE_TABLES)
        .filter(|e| matches!(e, Event::Start(Tag::Table(_))))
        .count()
}

#[test]
fn bench_and_show_are_concise_full_on_request_and_the_json_is_unchanged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("runs.db");
    let printed = {
        let _alone = crate::support::exclusive();
        stdout_of(
            sysmeter()
                .args(["bench", "--quick", "--rounds", "1", "--db", path_arg(&db)])
                .args(["cpu.loop", "os.syscall", "mem.latency"]),
        )
    };
    let json_before: Value = json_of(show(&db, &["--format", "json"]).as_bytes());
    // bench printed the concise view, which ends with the summary; show prints the same.
    assert!(printed.contains("This machine at a glance"), "{printed}");
    assert!(printed.contains("null syscall"), "{printed}");
    assert!(printed.contains(" by working set: "), "{printed}");
    assert!(
        !printed.contains('┌'),
        "no tables in the concise view:\n{printed}"
    );
    let concise = show(&db, &[]);
    assert_eq!(concise.lines().count(), printed.lines().count());
    let full = show(&db, &["--full"]);
    assert!(full.contains('┌') && full.contains("This machine at a glance"));
    assert!(
        concise.lines().count() * 2 < full.lines().count(),
        "{concise}\n{full}"
    );
    assert_eq!(show(&db, &["-v"]), full);
    // Every view leaves the record alone: the JSON is what it was.
    let json_after: Value = json_of(show(&db, &["--format", "json"]).as_bytes());
    assert_eq!(json_before, json_after);
    let summary = show(&db, &["--summary"]);
    assert!(summary.starts_with("This machine at a glance"), "{summary}");
    assert!(summary.lines().count() <= 12, "{summary}");
    let md = show(&db, &["--summary", "--format", "markdown"]);
    assert_eq!(markdown_tables(&md), 1, "{md}");
    assert!(md.contains("| os | null syscall "), "{md}");
}

#[test]
fn summary_in_json_is_a_usage_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("none.db");
    let err = stderr_of(
        sysmeter().args([
            "show",
            "--summary",
            "--format",
            "json",
            "--db",
            path_arg(&db),
        ]),
        2,
    );
    assert!(err.contains("--summary prints text or markdown"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// The stored record of a real default `bench` on the development machine (2 vCPU KVM
/// guest, release build, 2026-11-23), in tests/fixtures/runs/default-bench.json: each
/// metric's samples cut to its first 10 (2.2 MB → 0.45 MB; the views read the summaries,
/// and the full file's view was byte-identical) and nothing else changed.
fn default_run_file() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/runs/default-bench.json")
}

/// Every experiment `sysmeter list` names.
fn listed_ids() -> Vec<String> {
    let listed = stdout_of(sysmeter().args(["list"]));
    listed
        .lines()
        .filter(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|w| w.contains('.'))
        .map(str::to_string)
        .collect()
}

/// (experiment, series name, x label) of every series in a record's results.
fn series_of(results: &[Value]) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for r in results {
        for s in r["series"].as_array().into_iter().flatten() {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            out.push((text(&r["id"]), text(&s["name"]), text(&s["x_label"])));
        }
    }
    out
}

#[test]
fn a_full_default_run_reads_in_150_lines_and_its_json_keeps_everything() {
    let file = default_run_file();
    let original: Value = json_of(&std::fs::read(&file).expect("the stored run"));
    let results = original["results"].as_array().expect("results");
    // The file is a full default run: every experiment, with its series.
    let ids: Vec<&str> = results.iter().filter_map(|r| r["id"].as_str()).collect();
    for id in listed_ids() {
        assert!(
            ids.contains(&id.as_str()),
            "{id} missing from the stored run"
        );
    }
    let series = series_of(results);
    assert!(series.len() >= 15, "{} series", series.len());
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("runs.db");
    stdout_of(sysmeter().args(["import", "--db", path_arg(&db), path_arg(&file)]));
    let concise = show(&db, &[]);
    let lines = concise.lines().count();
    assert!(lines <= 150, "{lines} lines:\n{concise}");
    assert!(concise.contains("This machine at a glance"), "{concise}");
    for id in &ids {
        assert!(
            concise.contains(&format!("== {id} ")),
            "{id} not in the view:\n{concise}"
        );
    }
    // Every series is one line (mem.latency's levels line stands for its curves' knees).
    for (id, name, x) in &series {
        let line = format!("  {name} by {x}: ");
        assert!(
            concise.contains(&line),
            "{id}: no line {line:?}:\n{concise}"
        );
    }
    // Nothing is lost: the stored and shown JSON has every result as the file had it, and
    // gains only the run-to-run interval of each metric (computed when shown, never stored).
    let mut shown: Value = json_of(show(&db, &["--format", "json"]).as_bytes());
    let metrics = (shown["results"].as_array_mut().expect("results").iter_mut())
        .flat_map(|r| r["metrics"].as_array_mut().expect("metrics").iter_mut());
    for m in metrics {
        let gained = m.as_object_mut().and_then(|o| o.remove("run_to_run"));
        assert!(gained.is_some() || m.get("degenerate").is_some(), "{m}");
    }
    assert_eq!(shown["results"], original["results"]);
    assert!(show(&db, &["--full"]).lines().count() > 2 * lines);
}
