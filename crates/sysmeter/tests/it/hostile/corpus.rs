//! What the fuzzers start from and how long they run (issue 47): the committed seed corpus
//! `crates/sysmeter/tests/fuzz-corpus/` — small run records each holding one kind of hostile
//! content (a value past any chart, subnormals, integers past 2^63, control characters, bidi
//! overrides, nesting deeper than a parser's limit, a record cut short, wrong types); see its
//! README — run as they are before anything is mutated; then mutated copies, drawn with a
//! fixed seed, until the time budget is spent (and at least a minimum number, so what a
//! fuzzer asserts about its outcomes holds on a slow machine).
//!
//! `SYSMETER_FUZZ_SECS` sets each fuzzer's budget (default [`DEFAULT_SECS`]) and
//! `SYSMETER_FUZZ_SEED` its seed, so a longer run is
//! `SYSMETER_FUZZ_SECS=600 cargo test -p sysmeter --test it fuzz` (docs/fleet.md).

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Each fuzzer's time for mutations in the default suite, seconds.
const DEFAULT_SECS: u64 = 3;

/// One record of the corpus: its file name and bytes, as committed.
pub struct Seed {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The corpus, in file-name order.
pub fn seeds() -> Vec<Seed> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus");
    let mut seeds: Vec<Seed> = std::fs::read_dir(&dir)
        .expect("the committed fuzz corpus")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| Seed {
            name: p.file_name().expect("name").to_string_lossy().into_owned(),
            bytes: std::fs::read(&p).expect("read a seed"),
        })
        .collect();
    seeds.sort_by(|a, b| a.name.cmp(&b.name));
    assert!(seeds.len() >= 6, "the corpus in {} is gone", dir.display());
    seeds
}

/// A number from the environment variable `name`, else `default`.
fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The generator of a fuzzer whose default seed is `default`.
pub fn rng(default: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(env_or("SYSMETER_FUZZ_SEED", default))
}

/// When a fuzzer stops mutating: after at least `min` rounds, once its budget is spent.
pub struct Budget {
    until: Instant,
    min: usize,
    rounds: usize,
}

impl Budget {
    /// The budget of `SYSMETER_FUZZ_SECS`, from now, of at least `min` rounds.
    pub fn new(min: usize) -> Budget {
        let secs = env_or("SYSMETER_FUZZ_SECS", DEFAULT_SECS);
        Budget {
            until: Instant::now() + Duration::from_secs(secs),
            min,
            rounds: 0,
        }
    }

    /// Whether another round runs (counting it).
    pub fn another(&mut self) -> bool {
        let more = self.rounds < self.min || Instant::now() < self.until;
        self.rounds += usize::from(more);
        more
    }

    /// The rounds run so far.
    pub fn rounds(&self) -> usize {
        self.rounds
    }
}
