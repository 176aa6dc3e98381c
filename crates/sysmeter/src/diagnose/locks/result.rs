//! The `locks` result: waits grouped per lock (futex word of a process) and, inside, per
//! acquiring call site, sorted by total wait; one metric per (lock, site) row with the wait
//! durations as samples, and the findings (`findings`).
//!
//! A row's metric is named `lock N kind: site` (N = the lock's rank by total wait, so two
//! runs compare hottest with hottest whatever the addresses), or `wait N kind: site` for
//! waits on events (condition variables, joins, semaphores), listed after the locks; its note holds the word's
//! address, the waiting threads and where the waiters were woken from (the holders' release
//! sites, with their share). The same rows, typed, are the result's `lock rows` artifact
//! (`model::locks`), which the renderers read. Pure except for naming (symbol files are read).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::events::Recorded;
use super::session::Recording;
use super::sites::{Named, Namer, is_lock};
use super::waits::{Paired, Wait, pair};
use crate::diagnose::observe::maps::AddressSpaces;
use crate::diagnose::observe::target::Target;
use crate::diagnose::observe::witness::{self, Witness};
use crate::model::held::HeldRow;
use crate::model::locks::{self, LockClass, LockRow, Waker};
use crate::model::units;
use crate::model::{About, Artifact, ExperimentResult, Finding, Metric, Unit};

mod findings;
mod views;

/// Wait durations kept per row for the statistics (the count, total and maximum are exact).
const MAX_SAMPLES: usize = 5000;
const SEED: u64 = 1;
/// Rows stored at most (the findings count every lock).
const MAX_ROWS: usize = 60;

/// One (lock, call site) row.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Row {
    /// Where the waiting threads took the lock.
    pub site: String,
    /// Contended acquisitions (waits).
    pub waits: u64,
    /// Total wait, ns.
    pub total_ns: u64,
    /// Longest wait, ns.
    pub max_ns: u64,
    /// Distinct waiting threads.
    pub threads: usize,
    /// Where waiters were woken from, with counts, most first.
    pub holders: Vec<(String, u64)>,
    /// Wait durations (at most `MAX_SAMPLES`), ns.
    pub samples: Vec<f64>,
}

/// One lock.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lock {
    /// Process.
    pub pid: u32,
    /// Futex word.
    pub uaddr: u64,
    /// What kind of wait (`mutex`, `condvar`, …).
    pub kind: &'static str,
    /// Contended acquisitions.
    pub waits: u64,
    /// Total wait, ns.
    pub total_ns: u64,
    /// Longest wait, ns.
    pub max_ns: u64,
    /// Distinct waiting threads.
    pub threads: usize,
    /// Per call site, most wait first.
    pub rows: Vec<Row>,
}

#[derive(Default)]
struct RowAcc {
    row: Row,
    tids: BTreeSet<u32>,
    holders: HashMap<String, u64>,
}

/// Groups `waits` per lock and site; `named` gives each (pid, chain) its site and kind.
pub fn group(waits: &[Wait], named: &HashMap<(u32, u32), Named>) -> Vec<Lock> {
    let unknown = Named {
        site: "[unknown]".into(),
        kind: "futex",
        stack: Vec::new(),
    };
    let mut per: HashMap<(u32, u64), HashMap<String, RowAcc>> = HashMap::new();
    let mut kinds: HashMap<(u32, u64), HashMap<&'static str, u64>> = HashMap::new();
    for w in waits {
        let n = named.get(&(w.pid, w.chain)).unwrap_or(&unknown);
        let key = (w.pid, w.uaddr);
        *kinds.entry(key).or_default().entry(n.kind).or_default() += w.ns();
        let acc = per
            .entry(key)
            .or_default()
            .entry(n.site.clone())
            .or_default();
        acc.row.waits += 1;
        acc.row.total_ns += w.ns();
        acc.row.max_ns = acc.row.max_ns.max(w.ns());
        if acc.row.samples.len() < MAX_SAMPLES {
            acc.row.samples.push(w.ns() as f64);
        }
        acc.tids.insert(w.tid);
        let holder = match (w.waker, w.ret) {
            (Some((_, chain)), _) => named.get(&(w.pid, chain)).map_or("[unknown]", |h| &h.site),
            (None, 0) => "the kernel (thread exit) or an unobserved process",
            (None, -11) => "nowhere: the word changed before it slept (EAGAIN)",
            (None, -110) => "nowhere: a timeout",
            (None, -4) => "nowhere: a signal",
            (None, _) => "nowhere: an error",
        };
        *acc.holders.entry(holder.to_string()).or_default() += 1;
    }
    let mut locks: Vec<Lock> = per
        .into_iter()
        .map(|((pid, uaddr), sites)| lock(pid, uaddr, sites, &kinds[&(pid, uaddr)]))
        .collect();
    locks.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.uaddr.cmp(&b.uaddr)));
    locks
}

fn lock(
    pid: u32,
    uaddr: u64,
    sites: HashMap<String, RowAcc>,
    kinds: &HashMap<&'static str, u64>,
) -> Lock {
    let kind = kinds
        .iter()
        .max_by_key(|(k, ns)| (**ns, std::cmp::Reverse(**k)))
        .map_or("futex", |(k, _)| k);
    let mut tids: BTreeSet<u32> = BTreeSet::new();
    let mut rows: Vec<Row> = sites
        .into_iter()
        .map(|(site, mut acc)| {
            tids.extend(&acc.tids);
            acc.row.site = site;
            acc.row.threads = acc.tids.len();
            let mut holders: Vec<(String, u64)> = acc.holders.into_iter().collect();
            holders.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            acc.row.holders = holders;
            acc.row
        })
        .collect();
    rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.site.cmp(&b.site)));
    Lock {
        pid,
        uaddr,
        kind,
        waits: rows.iter().map(|r| r.waits).sum(),
        total_ns: rows.iter().map(|r| r.total_ns).sum(),
        max_ns: rows.iter().map(|r| r.max_ns).max().unwrap_or(0),
        threads: tids.len(),
        rows,
    }
}

/// The `wait stacks` artifact: every wait's whole stack, outermost frame first, folded
/// (`main;worker;pthread_mutex_lock;… NS`) with the time waited, as flame-graph tools read.
fn wait_stacks(waits: &[Wait], named: &HashMap<(u32, u32), Named>) -> Artifact {
    let mut per: BTreeMap<String, u64> = BTreeMap::new();
    for w in waits {
        let Some(n) = named.get(&(w.pid, w.chain)) else {
            continue;
        };
        let frames: Vec<&str> = n.stack.iter().rev().map(String::as_str).collect();
        *per.entry(frames.join(";")).or_default() += w.ns();
    }
    let content = per.iter().map(|(s, ns)| format!("{s} {ns}\n")).collect();
    Artifact {
        name: "wait stacks".into(),
        media_type: "text/plain".into(),
        content,
    }
}

/// Names the stacks of every wait and waker.
fn name_all(
    paired: &Paired,
    recorded: &Recorded,
    spaces: &AddressSpaces,
) -> HashMap<(u32, u32), Named> {
    let mut keys: HashMap<(u32, u32), u64> = HashMap::new();
    for w in &paired.waits {
        keys.entry((w.pid, w.chain)).or_insert(w.enter);
        if let Some((_, chain)) = w.waker {
            keys.entry((w.pid, chain)).or_insert(w.enter);
        }
    }
    let keys: Vec<(u32, u64, u32)> = keys.into_iter().map(|((p, c), t)| (p, t, c)).collect();
    Namer::new(spaces).name(&keys, &recorded.chains)
}

/// The note of a row: address, threads, and where the waiters were woken from.
pub fn note(lock: &Lock, row: &Row) -> String {
    let woken: Vec<String> = row
        .holders
        .iter()
        .take(3)
        .map(|(site, n)| {
            format!(
                "{site} {}",
                units::percent(*n as f64 / row.waits.max(1) as f64)
            )
        })
        .collect();
    format!(
        "0x{:x} · {} thread{} · max {} · woken from {}",
        lock.uaddr,
        row.threads,
        if row.threads == 1 { "" } else { "s" },
        units::duration_ns(row.max_ns as f64),
        woken.join(", ")
    )
}

fn metric(word: &str, rank: usize, lock: &Lock, row: &Row) -> Metric {
    let mut summary = crate::stats::summarize(&row.samples, SEED).unwrap_or_default();
    summary.n = row.waits as usize;
    summary.mean = row.total_ns as f64 / row.waits.max(1) as f64;
    summary.max = row.max_ns as f64;
    Metric {
        note: Some(note(lock, row)),
        samples: row.samples.clone(),
        ..Metric::new(
            &format!("{word} {rank} {}: {}", lock.kind, row.site),
            Unit::Ns,
            summary,
        )
    }
}

/// The typed row beside a row's metric (what its name and note say, as fields).
fn lock_row(
    (class, rank): (LockClass, usize),
    lock: &Lock,
    row: &Row,
    held: &[HeldRow],
) -> LockRow {
    let woken_from = row.holders.iter().take(3).map(|(site, n)| Waker {
        site: site.clone(),
        share: *n as f64 / row.waits.max(1) as f64,
    });
    LockRow {
        class,
        rank,
        kind: lock.kind.to_string(),
        site: row.site.clone(),
        word: lock.uaddr,
        threads: row.threads,
        woken_from: woken_from.collect(),
        in_process: views::in_process(lock, held).map(|h| h.lock.clone()),
    }
}

fn about(target: &Target) -> About {
    About {
        title: "Lock contention (futex waits)".into(),
        measures: format!(
            "Contended locks of {}: per lock (futex word) and per acquiring call site, the \
             contended acquisitions, total and longest wait, and where the waiters were woken \
             from (the holder's release site)",
            target.describe()
        ),
        methodology: "The syscalls:sys_enter_futex and sys_exit_futex tracepoints, one \
            inherited event pair per CPU (per thread and CPU when attached), with the user \
            registers and the top 2 KiB of the user stack, unwound with the binaries' DWARF \
            CFI (frame pointers where there is none). A wait is a waiting futex operation (WAIT, \
            WAIT_BITSET, LOCK_PI, LOCK_PI2, WAIT_REQUEUE_PI) from entry to exit, so it \
            includes the time until the woken thread ran again. Its waker is the last other \
            thread that called a waking operation on the same word during the wait. Call \
            sites are the first frame outside libc, the loader, sysmeter's preload library \
            and Rust's std; the `wait \
            stacks` artifact has the whole stack of every wait (folded, in ns). Uncontended locks never enter \
            the kernel and are not seen."
            .into(),
        references: vec![
            "mutrace (Lennart Poettering), futex(2), perf_event_open(2)".into(),
            "docs/offcpu.md#locks".into(),
        ],
    }
}

/// The metrics and typed rows of `locks` (locks first, then waits for events; each ranked
/// by total wait), and the finding of a lock both views saw.
fn add_rows(result: &mut ExperimentResult, locks: &[Lock], held: &[HeldRow]) -> Option<Finding> {
    let (contended, events): (Vec<&Lock>, Vec<&Lock>) = locks.iter().partition(|l| is_lock(l.kind));
    let both = views::both_views(&contended, held);
    let mut typed = Vec::new();
    for (class, list) in [(LockClass::Lock, contended), (LockClass::Wait, events)] {
        for (i, lock) in list.iter().enumerate() {
            for row in &lock.rows {
                result
                    .metrics
                    .push(metric(class.as_str(), i + 1, lock, row));
                typed.push(lock_row((class, i + 1), lock, row, held));
            }
        }
    }
    result.metrics.truncate(MAX_ROWS);
    typed.truncate(MAX_ROWS);
    result.artifacts.extend(locks::artifact(&typed));
    both
}

/// The result of a session.
pub fn build(recording: &mut Recording, target: &Target) -> ExperimentResult {
    let paired = match recording.data.paired.take() {
        Some(p) => p,
        None => pair(&mut recording.data.recorded.events),
    };
    let side = &recording.data.recorded.side;
    let maps: Vec<_> = recording
        .maps_at_start
        .iter()
        .chain(&side.maps)
        .cloned()
        .collect();
    let spaces = AddressSpaces::new(&maps, &side.execs, &side.forks);
    let named = name_all(&paired, &recording.data.recorded, &spaces);
    let locks = group(&paired.waits, &named);
    let mut result = ExperimentResult::new("locks", about(target));
    result.elapsed_ns = recording.wall_ns;
    let both = add_rows(&mut result, &locks, &recording.data.held);
    result.artifacts.push(wait_stacks(&paired.waits, &named));
    result
        .artifacts
        .extend(crate::model::held::held_artifact(&recording.data.held));
    // Blinded first, and then no "No lock was contended" from a source that saw nothing.
    let blinded = findings::witness(&paired, recording).and_then(Witness::judge);
    result.findings = witness::lead(
        blinded.as_ref(),
        findings::BLINDED_FIX,
        findings::findings(&locks, &paired, recording),
        &["no_contention"],
    );
    result.findings.extend(findings::held(&recording.data.held));
    result.findings.extend(both);
    let stops = recording.data.recorded.side.stops;
    result.findings.extend(stops.finding("futex"));
    result.findings.extend(recording.exited());
    let lost = recording.data.recorded.lost;
    result.session = Some(recording.end(lost, blinded.as_ref()));
    result
}
