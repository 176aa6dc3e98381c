//! The renderer fuzzer (issue 47): corrupted copies of one real run record, each of a random
//! run kind, rendered straight from the file (no `import` in between to refuse anything) as
//! every page: Markdown and HTML (`report`), and the comparison's terminal text and HTML
//! (`compare`, of the record with itself). The hostile values are the import
//! fuzzer's (`fuzz.rs`: integers past 2^63, subnormal and huge floats, control characters,
//! wrong types) plus ±f64::MAX. Each render runs under a 1 GiB address-space limit and must
//! end with the page (exit 0) or one `error:` sentence (exit 2: not a record), never a
//! panic or an abort, and nothing it writes may hold a raw control or bidi character. The
//! seed is fixed, so the corpus is the same on every run: 40 records in the default suite.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::fuzz::{hostile_value, mutate_value};
use super::s;
use crate::support::fleet::host_run;

/// Every run kind a page has a layout for.
const KINDS: [&str; 8] = [
    "bench", "run", "trace", "calls", "profile", "locks", "alloc", "scale",
];

/// Runs sysmeter with `args` under the memory limit; panics on a crash, a second error line
/// or a raw control character in what it wrote (stdout, stderr, the file `out`). Whether it
/// rendered (exit 0).
fn render(args: &[&str], out: &Path) -> bool {
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    let _ = std::fs::remove_file(out);
    let done = Command::new("sh")
        .args(["-c", "ulimit -v 1048576 && exec \"$0\" \"$@\""])
        .arg(&bin)
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("SYSMETER_DB")
        .output()
        .expect("run report");
    let err = String::from_utf8_lossy(&done.stderr);
    let what = format!("{args:?}");
    match done.status.code() {
        Some(0) => {}
        Some(2) => assert_eq!(err.lines().filter(|l| l.starts_with("error:")).count(), 1),
        other => panic!("{what}: exit {other:?}: {err}"),
    }
    let written = std::fs::read(out).unwrap_or_default();
    for text in [&done.stdout, &done.stderr, &written] {
        let text = String::from_utf8_lossy(text);
        let raw = text.chars().find(|c| {
            (c.is_control() && !"\n\t".contains(*c)) || ('\u{202a}'..='\u{202e}').contains(c)
        });
        assert_eq!(raw, None, "{what}: a raw control or bidi character");
    }
    done.status.success()
}

#[test]
fn corrupted_records_of_every_kind_render_every_page_bounded_and_escaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut rng = fastrand::Rng::with_seed(47);
    let base = serde_json::to_value(host_run(0)).expect("record");
    let page = dir.path().join("page.html");
    let html = s(&page);
    let mut rendered = 0;
    for i in 0..40 {
        let mut doc: Value = base.clone();
        doc["kind"] = json!(KINDS[rng.usize(..KINDS.len())]);
        for _ in 0..rng.usize(1..4) {
            match rng.usize(..4) {
                0 => doc["results"][0]["metrics"][0]["summary"]["median"] = json!(f64::MAX),
                1 => doc["results"][0]["metrics"][0]["summary"]["min"] = json!(-f64::MAX),
                2 => doc["host"]["hostname"] = hostile_value(&mut rng),
                _ => mutate_value(&mut doc, &mut rng),
            }
        }
        let record = dir.path().join(format!("r{i}.json"));
        std::fs::write(&record, doc.to_string()).expect("write record");
        let r = s(&record);
        for args in [
            &["report", r, "--markdown", "-"][..],
            &["report", r, "--html", html],
            &["compare", r, r],
            &["compare", r, r, "--html", html],
        ] {
            rendered += usize::from(render(args, &page));
        }
    }
    assert!(
        rendered > 60,
        "only {rendered} of 160 pages rendered: the fuzzer tests little"
    );
}
