//! The import fuzzer: corrupted copies of one real run record, imported in batches of up to
//! 500 per `import`, leave no partial run. Half are damaged as text (bytes flipped, cut,
//! duplicated), half as JSON (one value anywhere in the record replaced by a hostile one:
//! integers past 2^63, negative counts, subnormal and huge floats, control characters, wrong
//! types). Every file is accounted for once (imported, skipped as a repeated id, or refused in
//! one `error:` line naming it; exit 2 for a batch with a refusal), and every stored run is
//! whole: `history` lists it and `show` reads it with as many results as the record held, and
//! ended as the record says (a record of a run that never finished is stored as one). 200
//! records run in the default suite; the 10 000 of issue 29 are an ignored test:
//! `cargo test -p sysmeter --test it -- --ignored import_fuzz`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::s;
use crate::support::fleet::host_run;
use crate::support::{json_out, sysmeter};

const BATCH: usize = 500;

/// The hostile values a JSON mutation puts in place of one leaf.
pub(super) fn hostile_value(rng: &mut fastrand::Rng) -> Value {
    match rng.usize(..12) {
        0 => json!(u64::MAX),
        1 => json!(i64::MIN),
        2 => json!(-1),
        3 => json!(5e-324),
        4 => json!(1.7e308),
        5 => json!("\u{1b}]0;pwned\u{7}"),
        6 => json!("\u{9b}2J"),
        7 => Value::Null,
        8 => json!([]),
        9 => json!({}),
        10 => json!(true),
        _ => json!("x".repeat(rng.usize(..300))),
    }
}

/// Replaces one value of `doc`, picked by a random walk down from the root, with a hostile
/// one.
pub(super) fn mutate_value(doc: &mut Value, rng: &mut fastrand::Rng) {
    let descend = rng.usize(..8) != 0;
    match doc {
        Value::Object(map) if descend && !map.is_empty() => {
            let i = rng.usize(..map.len());
            if let Some((_, child)) = map.iter_mut().nth(i) {
                mutate_value(child, rng);
            }
        }
        Value::Array(items) if descend && !items.is_empty() => {
            let i = rng.usize(..items.len());
            mutate_value(&mut items[i], rng);
        }
        _ => *doc = hostile_value(rng),
    }
}

/// Damages `text` as bytes: a flip, a cut or a repeated span.
fn mutate_text(text: &str, rng: &mut fastrand::Rng) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    let at = rng.usize(..bytes.len());
    match rng.usize(..3) {
        0 => bytes[at] ^= 1 << rng.u8(..8),
        1 => bytes.truncate(at),
        _ => {
            let end = (at + rng.usize(1..64)).min(bytes.len());
            let span = bytes[at..end].to_vec();
            bytes.splice(at..at, span);
        }
    }
    bytes
}

/// What a record says of itself: its id, number of results and end (`None`: a record of a
/// run that never finished, which is stored as such), when its text is a JSON object.
fn what_it_holds(bytes: &[u8]) -> Option<(String, (usize, Option<i64>))> {
    let doc: Value = serde_json::from_slice(bytes).ok()?;
    let results = doc["results"].as_array()?.len();
    let id = doc["id"].as_str()?.to_string();
    Some((id, (results, doc["finished_ns"].as_i64())))
}

/// What a record says of itself, by id (see [`what_it_holds`]).
type Holds = HashMap<String, (usize, Option<i64>)>;

/// Writes batch `batch` of `size` corrupted copies of `base` into `dir`, noting what each
/// holds.
fn write_batch(
    dir: &Path,
    base: &Value,
    (batch, size): (usize, usize),
    rng: &mut fastrand::Rng,
    expected: &mut Holds,
) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for i in 0..size {
        let mut doc = base.clone();
        doc["id"] = json!(format!("fuzz-{batch}-{i}"));
        let bytes = match rng.bool() {
            true => {
                mutate_value(&mut doc, rng);
                doc.to_string().into_bytes()
            }
            false => mutate_text(&doc.to_string(), rng),
        };
        let path = dir.join(format!("r{i}.json"));
        std::fs::write(&path, &bytes).expect("write record");
        if let Some((id, holds)) = what_it_holds(&bytes) {
            expected.entry(id).or_insert(holds);
        }
        files.push(path);
    }
    files
}

/// Imports `files` into `db` at once; (refused, skipped as already stored). Every file is
/// accounted for exactly once: imported or skipped on stdout, or refused in one `error:`
/// line on stderr naming it; the exit code is 2 when one was refused, else 0.
fn import_batch(db: &Path, files: &[PathBuf]) -> (usize, usize) {
    let out = sysmeter()
        .args(["import", "--db", s(db)])
        .args(files.iter().map(|f| s(f)))
        .output()
        .expect("run import");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && !err.contains("bug"), "{err}");
    let errors = err.lines().filter(|l| l.starts_with("error:")).count();
    assert!(err.lines().all(|l| l.starts_with("error:")), "{err}");
    let code = if errors > 0 { 2 } else { 0 };
    assert_eq!(out.status.code(), Some(code), "{err}");
    let out = String::from_utf8_lossy(&out.stdout);
    for file in files {
        let named = |l: &&str| l.contains(s(file));
        let said = out.lines().chain(err.lines()).filter(named).count();
        assert_eq!(
            said,
            1,
            "{} is not accounted for once:\n{out}\n{err}",
            s(file)
        );
    }
    // A mutated id can repeat another record's: that one is skipped as already stored.
    let skipped = out.lines().filter(|l| l.ends_with(": already stored"));
    (errors, skipped.count())
}

/// `show ID --format json` of a stored run: its number of results and its end.
fn shown(db: &Path, id: &str) -> (usize, Option<i64>) {
    let run = json_out(sysmeter().args(["show", id, "--format", "json", "--db", s(db)]));
    let results = run["results"].as_array().map_or(usize::MAX, Vec::len);
    (results, run["finished_ns"].as_i64())
}

/// Imports `records` corrupted copies of one real run record, in batches, and checks each
/// was refused or stored whole (`history` and `show` read it as the record says); returns
/// (stored, refused, skipped as a repeated id).
fn fuzz(records: usize, seed: u64) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("fuzz.db");
    let mut rng = fastrand::Rng::with_seed(seed);
    let base = serde_json::to_value(host_run(0)).expect("record");
    let mut expected = Holds::new();
    let (mut refused, mut skipped) = (0, 0);
    for batch in 0..records.div_ceil(BATCH) {
        let size = BATCH.min(records - batch * BATCH);
        let files = write_batch(dir.path(), &base, (batch, size), &mut rng, &mut expected);
        let (r, k) = import_batch(&db, &files);
        refused += r;
        skipped += k;
    }
    let limit = records.to_string();
    let listed = json_out(
        sysmeter()
            .args(["history", "--format", "json", "--limit", &limit])
            .args(["--db", s(&db)]),
    );
    let runs = listed.as_array().expect("runs");
    for run in runs {
        let id = run["id"].as_str().expect("id");
        let holds = expected.get(id).copied();
        let experiments = run["experiments"]
            .as_u64()
            .map_or(usize::MAX, |n| n as usize);
        let listed = (experiments, run["finished_ns"].as_i64());
        assert_eq!(Some(listed), holds, "not stored whole: {run}");
        assert_eq!(
            Some(shown(&db, id)),
            holds,
            "`show {id}` does not read it whole"
        );
    }
    assert_eq!(
        runs.len() + refused + skipped,
        records,
        "every record stored or refused"
    );
    (runs.len(), refused, skipped)
}

/// 200 records, in the default suite (a few seconds).
#[test]
fn corrupted_records_are_refused_or_stored_whole() {
    let (stored, refused, skipped) = fuzz(200, 29);
    println!("{stored} stored whole, {refused} refused, {skipped} repeated ids");
    assert!(stored > 5 && refused > 50, "both outcomes are exercised");
}

/// The whole fuzzer, 10 000 records (about 1.5 min of a debug build on two loaded CPUs):
/// `cargo test -p sysmeter --test it -- --ignored import_fuzz`.
#[test]
#[ignore = "10 000 imports: run with -- --ignored import_fuzz"]
fn import_fuzz_ten_thousand_records() {
    let started = std::time::Instant::now();
    let (stored, refused, skipped) = fuzz(10_000, 29);
    println!(
        "{stored} stored whole, {refused} refused, {skipped} repeated ids, in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        stored > 100 && refused > 1000,
        "both outcomes are exercised"
    );
}
