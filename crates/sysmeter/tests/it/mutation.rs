//! Seeded mutation of a run record (issue 13): 10 000 corrupted JSON files — truncated,
//! bytes deleted, replaced or inserted, values of the wrong type, keys removed — fed to
//! `report` and `compare`. Every one is a usage error (exit 2), never a panic. A mutation
//! that happens to leave a valid record is not counted as corrupted; the first
//! [`VALID_RUNS`] of those are run too (rendering and bootstrapping a whole record is what
//! costs time here) and must not panic either.
//!
//! To stay fast the commands run in-process (the same `cli` parse and `commands` function
//! `main` calls, with `main`'s exit-code rule); a sample also goes through the binary.

use std::path::Path;

use clap::Parser;
use serde_json::Value;
use sysmeter::cli::{Cli, Command};
use sysmeter::commands::{self, Outcome};
use sysmeter::model::RunRecord;
use sysmeter::model::fixture::sample_run;

use crate::support::sysmeter;

const CORRUPTED: usize = 10_000;
const SEED: u64 = 13;
const VALID_RUNS: usize = 100;

/// `args` parsed as `main` parses them (once: every mutation is written to the same file).
fn parse(args: &[&str]) -> Cli {
    Cli::try_parse_from(std::iter::once("sysmeter").chain(args.iter().copied()))
        .expect("arguments parse")
}

/// The exit code `main` gives for `cli`, run in-process; `None` when it panicked.
fn exit_code(cli: &Cli) -> Option<i32> {
    let ran = std::panic::catch_unwind(|| match &cli.command {
        Command::Report(a) => commands::report(a),
        Command::Compare(a) => commands::compare(a),
        other => panic!("not a command of this test: {other:?}"),
    });
    Some(match ran.ok()? {
        Ok(Outcome::Success) => 0,
        Ok(Outcome::MeasurementFailed) => 1,
        Ok(Outcome::Interrupted) => 130,
        Ok(Outcome::Code(c)) => i32::from(c),
        Err(e) if commands::is_usage_error(&e) => 2,
        Err(_) => 1,
    })
}

/// A scratch directory, on tmpfs where there is one: ext4 flushes a file rewritten in place
/// on close, which made 10 000 rewrites wait on the disk.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("tempdir")
}

/// Bytes that break JSON's structure or types when put in the wrong place.
const JUNK: &[u8] = b"{}[]:,\"\\-0.eE tfn\x00\xff";

/// One seeded mutation of `text`.
fn mutate(rng: &mut fastrand::Rng, text: &str, tree: &Value) -> String {
    let mut bytes = text.as_bytes().to_vec();
    let at = rng.usize(..bytes.len());
    match rng.u8(..6) {
        0 => bytes.truncate(at),
        1 => {
            bytes.remove(at);
        }
        2 => bytes[at] = JUNK[rng.usize(..JUNK.len())],
        3 => bytes.insert(at, JUNK[rng.usize(..JUNK.len())]),
        _ => return mutate_tree(rng, tree).to_string(),
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// A random path into `tree` (a JSON pointer), stopping at a random depth.
fn random_pointer(rng: &mut fastrand::Rng, tree: &Value) -> String {
    let (mut node, mut pointer) = (tree, String::new());
    while rng.u8(..4) != 0 {
        let (step, child) = match node {
            Value::Object(map) if !map.is_empty() => {
                let (k, v) = map.iter().nth(rng.usize(..map.len())).expect("in range");
                (k.replace('~', "~0").replace('/', "~1"), v)
            }
            Value::Array(items) if !items.is_empty() => {
                let i = rng.usize(..items.len());
                (i.to_string(), &items[i])
            }
            _ => break,
        };
        pointer = format!("{pointer}/{step}");
        node = child;
    }
    pointer
}

/// The record with one value replaced by one of another type, or one key removed.
fn mutate_tree(rng: &mut fastrand::Rng, tree: &Value) -> Value {
    let mut tree = tree.clone();
    let pointer = random_pointer(rng, &tree);
    let Some(node) = tree.pointer_mut(&pointer) else {
        return tree;
    };
    if let Value::Object(map) = node
        && !map.is_empty()
        && rng.bool()
    {
        let key = map
            .keys()
            .nth(rng.usize(..map.len()))
            .cloned()
            .unwrap_or_default();
        map.remove(&key);
        return tree;
    }
    let replacements = [
        Value::Null,
        Value::Bool(true),
        Value::from(-1),
        Value::from(1e300),
        Value::from("x"),
        Value::Array(vec![]),
        serde_json::json!({}),
    ];
    *node = replacements[rng.usize(..replacements.len())].clone();
    tree
}

/// The fixture run with a few samples per metric: every kind of field is still there, but
/// the text is small enough to parse 30 000 times in seconds in a debug build.
fn small_run() -> RunRecord {
    let mut run = sample_run();
    for result in &mut run.results {
        for metric in &mut result.metrics {
            metric.samples.truncate(4);
        }
    }
    run
}

fn parses(text: &str) -> bool {
    serde_json::from_str::<RunRecord>(text).is_ok()
}

#[test]
fn ten_thousand_corrupted_run_records_are_usage_errors_never_panics() {
    let dir = scratch();
    let text = serde_json::to_string(&small_run()).expect("json");
    let tree: Value = serde_json::from_str(&text).expect("tree");
    let valid = dir.path().join("valid.json");
    std::fs::write(&valid, &text).expect("write");
    let valid = valid.to_str().expect("utf-8");
    let html = dir.path().join("out.html");
    let html = html.to_str().expect("utf-8");
    let file = dir.path().join("mutated.json");
    let path = file.to_str().expect("utf-8");
    let commands = [
        parse(&["report", path, "--html", html]),
        parse(&["compare", path, valid]),
    ];
    let mut rng = fastrand::Rng::with_seed(SEED);
    let (mut corrupted, mut still_valid, mut failures) = (0, 0, Vec::new());
    while corrupted < CORRUPTED {
        let mutated = mutate(&mut rng, &text, &tree);
        std::fs::write(&file, &mutated).expect("write");
        let is_valid = parses(&mutated);
        if is_valid && still_valid >= VALID_RUNS {
            still_valid += 1;
            continue;
        }
        for cli in &commands {
            let code = exit_code(cli);
            let ok = match is_valid {
                false => code == Some(2),
                true => matches!(code, Some(0 | 2)),
            };
            if !ok && failures.len() < 10 {
                failures.push(format!("{cli:?} exit {code:?} on:\n{mutated:.300}"));
            }
        }
        match is_valid {
            true => still_valid += 1,
            false => corrupted += 1,
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    println!(
        "{corrupted} corrupted and {still_valid} still-valid mutations of {} bytes: no panic",
        text.len()
    );
}

#[test]
fn corrupted_run_records_exit_2_through_the_binary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = serde_json::to_string(&small_run()).expect("json");
    let tree: Value = serde_json::from_str(&text).expect("tree");
    let mut rng = fastrand::Rng::with_seed(SEED + 1);
    let mut tried = 0;
    while tried < 40 {
        let mutated = mutate(&mut rng, &text, &tree);
        if parses(&mutated) {
            continue;
        }
        tried += 1;
        let file = dir.path().join("m.json");
        std::fs::write(&file, &mutated).expect("write");
        let html = dir.path().join("m.html");
        for args in [
            vec![
                "report".as_ref(),
                file.as_os_str(),
                "--html".as_ref(),
                html.as_os_str(),
            ],
            vec!["compare".as_ref(), file.as_os_str(), file.as_os_str()],
        ] {
            let out = sysmeter().args(&args).output().expect("run");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
            assert_eq!(
                stderr.lines().filter(|l| l.starts_with("error:")).count(),
                1
            );
            assert!(!Path::new(&html).exists(), "no report from a corrupted run");
        }
    }
}
