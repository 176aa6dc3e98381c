//! Integration tests of the concise terminal view and "this machine at a glance" on a real
//! `bench --quick cpu.loop os.syscall mem.latency` run: `bench` and `show` print the concise
//! view ending with the summary, `--full` the complete tables, `show --summary` the summary
//! alone (one Markdown table with `--format markdown`), and the JSON is the same whatever the
//! terminal showed.

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
