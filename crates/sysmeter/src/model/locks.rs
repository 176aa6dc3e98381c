//! The typed rows of a `locks` result: per contended lock (or waited-for event) and acquiring
//! call site, its class and rank, the kind of wait, the site, the futex word, the waiting
//! threads and where the waiters were woken from. `diagnose::locks` writes them as the
//! result's [`LOCK_ROWS`] artifact (a JSON array, one row per metric, in metric order), which
//! the store keeps like every artifact; renderers read them with [`rows`] and never parse a
//! metric's name or note.
//!
//! Records written before the artifact existed hold only the metrics (named `lock N kind:
//! site`, noted `word · N threads · max … · woken from site P%, …`): [`rows`] recovers their
//! rows from those strings, here and nowhere else. Depends on `model` types, serde and
//! serde_json (the artifact's encoding) only.

use serde::{Deserialize, Serialize};

use super::{Artifact, ExperimentResult, Metric};

/// The result id of `locks`.
pub const LOCKS_ID: &str = "locks";
/// The name of the artifact that holds the typed rows.
pub const LOCK_ROWS: &str = "lock rows";

/// Whether a row is a contended lock or a wait for an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockClass {
    /// A lock (mutex, rwlock, spinlock falling back to the kernel): contention.
    Lock,
    /// A wait for an event (condition variable, join, semaphore): not contention.
    Wait,
}

impl LockClass {
    /// `lock` or `wait`, the first word of the metric name.
    pub fn as_str(self) -> &'static str {
        match self {
            LockClass::Lock => "lock",
            LockClass::Wait => "wait",
        }
    }
}

/// Where waiters were woken from, and which share of the row's waits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Waker {
    /// The waking call site (the holder's release), or why there was none.
    pub site: String,
    /// Share of the row's waits woken from there, 0–1.
    pub share: f64,
}

/// One (lock, call site) row; the counts and times are its metric's summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LockRow {
    /// Lock or event wait.
    pub class: LockClass,
    /// Rank of the lock among its class by total wait, from 1.
    pub rank: usize,
    /// Kind of wait (`mutex`, `condvar`, …).
    pub kind: String,
    /// Where the waiting threads took the lock.
    pub site: String,
    /// The futex word's address.
    pub word: u64,
    /// Distinct waiting threads at this site.
    pub threads: usize,
    /// Up to three waking sites, most first.
    pub woken_from: Vec<Waker>,
    /// The same lock's key in the in-process table (`model::held::lock_key`), when that
    /// table saw it too: the two views' numbers are shown as one row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_process: Option<String>,
}

/// The rows as the [`LOCK_ROWS`] artifact; `None` if they cannot be encoded.
pub fn artifact(rows: &[LockRow]) -> Option<Artifact> {
    let content = serde_json::to_string(rows).ok()?;
    Some(Artifact {
        name: LOCK_ROWS.into(),
        media_type: "application/json".into(),
        content,
    })
}

/// Each metric of a `locks` result with its typed row: from the [`LOCK_ROWS`] artifact, or
/// for a record without it (written before it existed) from the metric names and notes.
/// `None` for another result, no metrics, or rows that do not match the metrics.
pub fn rows(r: &ExperimentResult) -> Option<Vec<(&Metric, LockRow)>> {
    if r.id != LOCKS_ID || r.metrics.is_empty() {
        return None;
    }
    let rows: Vec<LockRow> = match r.artifact(LOCK_ROWS) {
        Some(json) => serde_json::from_str(json).ok()?,
        None => r.metrics.iter().map(legacy).collect::<Option<_>>()?,
    };
    (rows.len() == r.metrics.len()).then(|| r.metrics.iter().zip(rows).collect())
}

/// The row of a metric written without the artifact: name `lock N kind: site`, note
/// `0xWORD · N thread(s) · max … · woken from SITE P%, SITE P%`.
fn legacy(m: &Metric) -> Option<LockRow> {
    let (head, site) = m.name.split_once(": ")?;
    let mut words = head.split_whitespace();
    let class = match words.next()? {
        "lock" => LockClass::Lock,
        "wait" => LockClass::Wait,
        _ => return None,
    };
    let rank = words.next()?.parse().ok()?;
    let kind = words.collect::<Vec<_>>().join(" ");
    let note = m.note.as_deref()?;
    let parts: Vec<&str> = note.split(" · ").collect();
    let word = u64::from_str_radix(parts.first()?.strip_prefix("0x")?, 16).ok()?;
    let threads = parts.get(1)?.split_whitespace().next()?.parse().ok()?;
    let woken = parts.iter().find_map(|p| p.strip_prefix("woken from "))?;
    Some(LockRow {
        class,
        rank,
        kind,
        site: site.to_string(),
        word,
        threads,
        woken_from: wakers(woken)?,
        in_process: None,
    })
}

/// `SITE P%, SITE P%` (each share as `units::percent` wrote it).
fn wakers(text: &str) -> Option<Vec<Waker>> {
    if text.is_empty() {
        return Some(Vec::new());
    }
    let items = text.strip_suffix('%')?.split("%, ");
    items
        .map(|item| {
            let (site, written) = item.rsplit_once(' ')?;
            let mut p: f64 = written.parse().ok()?;
            // `10.0%` was written for a share just under 10% (≥ 10% is written `10%`).
            if p >= 10.0 && written.contains('.') {
                p = 9.99;
            }
            Some(Waker {
                site: site.to_string(),
                share: p / 100.0,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{About, Summary, Unit, units};

    fn metric(name: &str, note: &str) -> Metric {
        Metric {
            note: Some(note.into()),
            ..Metric::new(name, Unit::Ns, Summary::default())
        }
    }

    fn result() -> ExperimentResult {
        let mut r = ExperimentResult::new(LOCKS_ID, About::default());
        r.metrics.push(metric(
            "lock 1 mutex: worker (fx.c:42)",
            "0x5500 · 4 threads · max 5 ms · woken from worker (fx.c:44) 66%, a, b (x.c:1) 9.5%",
        ));
        r.metrics.push(metric(
            "wait 2 condvar: consumer (fx.c:9)",
            "0xab · 1 thread · max 1 ms · woken from ",
        ));
        r
    }

    #[test]
    fn old_records_read_their_rows_from_names_and_notes() {
        let r = result();
        let rows = rows(&r).expect("rows");
        let (_, first) = &rows[0];
        assert_eq!((first.class, first.rank), (LockClass::Lock, 1));
        assert_eq!(
            (first.kind.as_str(), first.site.as_str()),
            ("mutex", "worker (fx.c:42)")
        );
        assert_eq!((first.word, first.threads), (0x5500, 4));
        let sites: Vec<&str> = first.woken_from.iter().map(|w| w.site.as_str()).collect();
        assert_eq!(sites, ["worker (fx.c:44)", "a, b (x.c:1)"]);
        assert_eq!(rows[1].1.class, LockClass::Wait);
        assert!(rows[1].1.woken_from.is_empty());
        let mut other = result();
        other.id = "trace".into();
        assert!(super::rows(&other).is_none());
    }

    #[test]
    fn the_artifact_wins_and_must_match_the_metrics() {
        let mut r = result();
        let mut typed: Vec<LockRow> = rows(&r).expect("rows").into_iter().map(|p| p.1).collect();
        typed[0].site = "typed site".into();
        r.artifacts.push(artifact(&typed).expect("encodes"));
        assert_eq!(rows(&r).expect("rows")[0].1.site, "typed site");
        r.artifacts[0] = artifact(&typed[..1]).expect("encodes");
        assert!(rows(&r).is_none());
    }

    #[test]
    fn every_written_percentage_reads_back_to_the_same_text() {
        let written = (0..1000).map(|i| i as f64 / 10_000.0);
        let written = written.chain((10..=100).map(|i| i as f64 / 100.0));
        for share in written {
            let text = units::percent(share);
            let back = wakers(&format!("s {text}")).expect("parses");
            assert_eq!(units::percent(back[0].share), text, "{share}");
        }
    }
}
