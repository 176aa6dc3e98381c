//! The import fuzzer: corrupted copies of one real run record, imported in batches of up to
//! 500 per `import`, leave no partial run. Half are damaged as text (bytes flipped, cut,
//! duplicated), half as JSON (one value anywhere in the record replaced by a hostile one:
//! integers past 2^63, negative counts, subnormal and huge floats, control characters, wrong
//! types). Every file is accounted for once (imported, skipped as a repeated id, or refused in
//! one `error:` line naming it; exit 2 for a batch with a refusal), and every stored run is
//! whole: `history` lists it and `show` reads it with as many results as the record held, and
//! ended as the record says (a record of a run that never finished is stored as one). The
//! committed corpus (`corpus.rs`) is imported first as it is, then mutated copies of the
//! record and of the corpus for the fuzzers' time budget (at least 200; issue 29's 10 000:
//! `SYSMETER_FUZZ_SECS=400 cargo test -p sysmeter --test it import_fuzz`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::corpus::{self, Seed};
use super::s;
use crate::support::fleet::host_run;
use crate::support::{json_out, sysmeter};

/// Records per `import`.
const BATCH: usize = 100;

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

/// The bytes of a mutated copy of `base` (a record, or any bytes of the corpus) whose id,
/// when it has one, is `id`: one value replaced or its text damaged.
fn mutated(base: &[u8], id: &str, rng: &mut fastrand::Rng) -> Vec<u8> {
    let Ok(mut doc) = serde_json::from_slice::<Value>(base) else {
        return mutate_text(&String::from_utf8_lossy(base), rng);
    };
    if doc.is_object() {
        doc["id"] = json!(id);
    }
    match rng.bool() {
        true => {
            mutate_value(&mut doc, rng);
            doc.to_string().into_bytes()
        }
        false => mutate_text(&doc.to_string(), rng),
    }
}

/// Writes `records` (name, bytes) into `dir`, noting what each holds.
fn write_files(dir: &Path, records: Vec<(String, Vec<u8>)>, expected: &mut Holds) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for (name, bytes) in records {
        let path = dir.join(name);
        std::fs::write(&path, &bytes).expect("write record");
        if let Some((id, holds)) = what_it_holds(&bytes) {
            expected.entry(id).or_insert(holds);
        }
        files.push(path);
    }
    files
}

/// Batch `batch` of `size` mutated copies: of the real record half the time, else of a
/// record of the corpus.
fn batch_of(
    base: &[u8],
    seeds: &[Seed],
    (batch, size): (usize, usize),
    rng: &mut fastrand::Rng,
) -> Vec<(String, Vec<u8>)> {
    (0..size)
        .map(|i| {
            let from = match rng.bool() {
                true => base,
                false => &seeds[rng.usize(..seeds.len())].bytes[..],
            };
            (
                format!("r{i}.json"),
                mutated(from, &format!("fuzz-{batch}-{i}"), rng),
            )
        })
        .collect()
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

/// Imports the corpus as it is, then mutated copies of one real run record and of the
/// corpus, in batches, until the budget is spent (at least `min` batches); checks each was
/// refused or stored whole (`history` and `show` read it as the record says); returns
/// (stored, refused, skipped as a repeated id).
fn fuzz(min: usize, seed: u64) -> (usize, usize, usize) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("fuzz.db");
    let mut rng = corpus::rng(seed);
    let base = serde_json::to_vec(&host_run(0)).expect("record");
    let seeds = corpus::seeds();
    let mut expected = Holds::new();
    let as_is = seeds
        .iter()
        .map(|s| (format!("seed-{}", s.name), s.bytes.clone()));
    let files = write_files(dir.path(), as_is.collect(), &mut expected);
    let (mut refused, mut skipped) = import_batch(&db, &files);
    let mut records = files.len();
    let mut budget = corpus::Budget::new(min);
    while budget.another() {
        let batch = batch_of(&base, &seeds, (budget.rounds(), BATCH), &mut rng);
        let files = write_files(dir.path(), batch, &mut expected);
        let (r, k) = import_batch(&db, &files);
        refused += r;
        skipped += k;
        records += files.len();
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

/// The corpus and at least 200 mutated records, for the budget of `SYSMETER_FUZZ_SECS`
/// (default a few seconds; `SYSMETER_FUZZ_SECS=600` for ten minutes).
#[test]
fn import_fuzz_corrupted_records_are_refused_or_stored_whole() {
    let started = std::time::Instant::now();
    let (stored, refused, skipped) = fuzz(2, 29);
    println!(
        "{stored} stored whole, {refused} refused, {skipped} repeated ids, in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    assert!(stored > 5 && refused > 50, "both outcomes are exercised");
}
