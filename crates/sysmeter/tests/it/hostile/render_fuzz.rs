//! The renderer fuzzer (issue 47): corrupted copies of one real run record, each of a random
//! run kind, rendered straight from the file (no `import` in between to refuse anything) as
//! every page: Markdown and HTML (`report`), and the comparison's terminal text and HTML
//! (`compare`, of the record with itself). The hostile values are the import
//! fuzzer's (`fuzz.rs`: integers past 2^63, subnormal and huge floats, control characters,
//! wrong types) plus ±f64::MAX. Each render runs under a 1 GiB address-space limit and must
//! end with the page (exit 0) or one `error:` sentence (exit 2: not a record), never a
//! panic or an abort, and nothing it writes may hold a raw control or bidi character. The
//! committed corpus (`corpus.rs`) is rendered first as it is, then mutated copies for the
//! fuzzers' time budget (at least 12), drawn with a fixed seed, so a run repeats; longer:
//! `SYSMETER_FUZZ_SECS=600 cargo test -p sysmeter --test it render_fuzz`.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use super::corpus;
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

/// Every page of record file `r`: Markdown and HTML of `report`, and `compare` of it with
/// itself as text and HTML (`html` the page's path). How many rendered.
fn every_page(r: &str, html: &Path) -> usize {
    let page = s(html);
    [
        &["report", r, "--markdown", "-"][..],
        &["report", r, "--html", page],
        &["compare", r, r],
        &["compare", r, r, "--html", page],
    ]
    .into_iter()
    .map(|args| usize::from(render(args, html)))
    .sum()
}

/// A copy of the real record of a random kind with one to three hostile changes.
fn mutated(base: &Value, rng: &mut fastrand::Rng) -> Value {
    let mut doc = base.clone();
    doc["kind"] = json!(KINDS[rng.usize(..KINDS.len())]);
    for _ in 0..rng.usize(1..4) {
        match rng.usize(..4) {
            0 => doc["results"][0]["metrics"][0]["summary"]["median"] = json!(f64::MAX),
            1 => doc["results"][0]["metrics"][0]["summary"]["min"] = json!(-f64::MAX),
            2 => doc["host"]["hostname"] = hostile_value(rng),
            _ => mutate_value(&mut doc, rng),
        }
    }
    doc
}

#[test]
fn render_fuzz_records_of_every_kind_render_every_page_bounded_and_escaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let page = dir.path().join("page.html");
    let (mut rendered, mut pages) = (0, 0);
    // The corpus as it is, first.
    for seed in corpus::seeds() {
        let record = dir.path().join(&seed.name);
        std::fs::write(&record, &seed.bytes).expect("write seed");
        rendered += every_page(s(&record), &page);
        pages += 4;
    }
    // Then mutated copies of the real record, or of a record of the corpus, for the budget.
    let mut rng = corpus::rng(47);
    let mut bases = vec![serde_json::to_value(host_run(0)).expect("record")];
    let seeds = corpus::seeds().into_iter();
    bases.extend(seeds.filter_map(|s| serde_json::from_slice::<Value>(&s.bytes).ok()));
    let mut budget = corpus::Budget::new(12);
    while budget.another() {
        let base = match rng.bool() {
            true => &bases[0],
            false => &bases[rng.usize(..bases.len())],
        };
        let record = dir.path().join(format!("r{}.json", budget.rounds()));
        std::fs::write(&record, mutated(base, &mut rng).to_string()).expect("write record");
        rendered += every_page(s(&record), &page);
        pages += 4;
    }
    println!("{rendered} of {pages} pages rendered");
    assert!(
        rendered * 3 > pages,
        "only {rendered} of {pages} pages rendered: the fuzzer tests little"
    );
}
