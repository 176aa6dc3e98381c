//! The findings of a `locks` result: the hot lock in one sentence ("one lock, taken at
//! worker (fx.c:42), made 4 threads wait 1.8 s of 2.4 s wall"), the total lock wait, the
//! waits for events that are not contention (condition variables, joins, semaphores), what
//! was observed and lost, and what an empty result means; with the perf backend, the
//! in-process table's contended attempts as the witness of the futex calls received
//! (`observe::witness`: a BPF program on the futex tracepoint may hide them all).

use super::super::session::Recording;
use super::super::sites::is_lock;
use super::super::waits::Paired;
use super::Lock;
use crate::diagnose::observe::witness::Witness;
use crate::model::Finding;
use crate::model::units;

fn ns(x: u64) -> String {
    units::duration_ns(x as f64)
}

/// The hot lock: the lock with the most wait, when it is most of all lock waiting.
fn hot(locks: &[&Lock], all_ns: u64, wall_ns: u64) -> Option<Finding> {
    let top = locks.first()?;
    let row = top.rows.first()?;
    let share = top.total_ns as f64 / all_ns.max(1) as f64;
    let released = row
        .holders
        .first()
        .map(|(site, _)| format!("; waiters were woken mostly from {site}"))
        .unwrap_or_default();
    let count = if locks.len() == 1 {
        "one lock".to_string()
    } else {
        format!(
            "one lock of {} ({} of all lock waiting)",
            locks.len(),
            units::percent(share)
        )
    };
    let text = format!(
        "{count}, a {} at 0x{:x} taken at {}, made {} thread{} wait {} of {} wall \
         ({} contended acquisitions, longest {}){released}.",
        top.kind,
        top.uaddr,
        row.site,
        top.threads,
        if top.threads == 1 { "" } else { "s" },
        ns(top.total_ns),
        ns(wall_ns),
        units::count(top.waits as f64),
        ns(top.max_ns),
    );
    Some(Finding::new("hot_lock", text, Some(top.total_ns as f64)))
}

fn events(others: &[&Lock]) -> Option<Finding> {
    if others.is_empty() {
        return None;
    }
    let mut by_kind: Vec<(&str, u64)> = Vec::new();
    for l in others {
        match by_kind.iter_mut().find(|(k, _)| *k == l.kind) {
            Some((_, t)) => *t += l.total_ns,
            None => by_kind.push((l.kind, l.total_ns)),
        }
    }
    by_kind.sort_by_key(|k| std::cmp::Reverse(k.1));
    let total: u64 = by_kind.iter().map(|(_, t)| t).sum();
    let parts: Vec<String> = by_kind
        .iter()
        .map(|(k, t)| format!("{k} {}", ns(*t)))
        .collect();
    let text = format!(
        "Besides locks, threads waited {} for events ({}): waiting for a condition, a thread \
         or a count is not contention, but says who waits for whom.",
        ns(total),
        parts.join(", ")
    );
    Some(Finding::new("event_waits", text, Some(total as f64)))
}

/// The `lost` finding (its value: the share affected, 0..1): futex records the perf rings
/// dropped against all records sent, or waits the kernel's maps had no room for against all
/// waits; `None` when nothing was lost.
fn lost(paired: &Paired, rec: &Recording) -> Option<Finding> {
    let lost = rec.data.recorded.lost;
    if lost == 0 {
        return None;
    }
    let (kept, what, why) = match rec.data.in_kernel {
        true => (
            paired.waits.len() as u64,
            "waits dropped",
            "the kernel's maps were full",
        ),
        false => (
            rec.data.recorded.events.len() as u64,
            "futex records lost",
            "ring buffers full; `--backend bpf` aggregates in the kernel and loses none",
        ),
    };
    let share = lost as f64 / (lost + kept) as f64;
    Some(Finding::new(
        "lost",
        format!(
            "Incomplete: {} of {} {what} ({}; {why}): the counts and waits below are too low.",
            units::count(lost as f64),
            units::count((lost + kept) as f64),
            units::percent(share)
        ),
        Some(share),
    ))
}

/// All findings.
pub fn findings(locks: &[Lock], paired: &Paired, rec: &Recording) -> Vec<Finding> {
    let (contended, others): (Vec<&Lock>, Vec<&Lock>) = locks.iter().partition(|l| is_lock(l.kind));
    let all_ns: u64 = contended.iter().map(|l| l.total_ns).sum();
    // A loss first: every figure below is a fraction of what happened.
    let mut out: Vec<Finding> = lost(paired, rec).into_iter().collect();
    match hot(&contended, all_ns, rec.wall_ns) {
        Some(f) => {
            out.push(f);
            let waits: u64 = contended.iter().map(|l| l.waits).sum();
            out.push(Finding::new(
                "lock_waits",
                format!(
                    "{} lock{} contended: {} waits, {} in all, in {} wall.",
                    contended.len(),
                    if contended.len() == 1 {
                        " was"
                    } else {
                        "s were"
                    },
                    units::count(waits as f64),
                    ns(all_ns),
                    ns(rec.wall_ns)
                ),
                Some(all_ns as f64),
            ));
        }
        None => out.push(Finding::new(
            "no_contention",
            "No lock was contended: no thread slept on a lock. Uncontended locks never enter \
             the kernel, so they are neither seen nor slowed down."
                .into(),
            Some(0.0),
        )),
    }
    out.extend(events(&others));
    out.push(Finding::new(
        "observed",
        format!(
            "Observed {} futex calls ({} waits, {} wakes) in {} wall; reading them cost this \
             process {} of CPU.",
            units::count(paired.calls as f64),
            units::count(paired.waits.len() as f64),
            units::count(paired.wakes as f64),
            ns(rec.wall_ns),
            ns(rec.own_cpu_ns)
        ),
        Some(paired.calls as f64),
    ));
    out
}

/// The lock held longest in all, from the in-process table (mutrace's question: a lock
/// that is hot, or only long-held?).
pub fn held(rows: &[crate::model::held::HeldRow]) -> Option<Finding> {
    let top = rows
        .iter()
        .filter(|r| r.kind != "condvar")
        .max_by_key(|r| r.hold_ns)?;
    let text = format!(
        "Held longest: the {} first taken at {}: {} acquisitions held {} in all ({} each, \
         longest {} at {}); {} of them had to wait ({} in all), and the owner changed {} \
         times.",
        top.kind,
        top.site,
        units::count(top.locked as f64),
        units::duration_ns(top.hold_ns as f64),
        units::duration_ns(top.hold_mean_ns()),
        units::duration_ns(top.hold_max_ns as f64),
        top.longest_hold_site,
        units::count(top.contended as f64),
        units::duration_ns(top.wait_ns as f64),
        units::count(top.owner_changes as f64),
    );
    Some(Finding::new("held_lock", text, Some(top.hold_ns as f64)))
}

/// How to see anyway, after a blinded run.
pub const BLINDED_FIX: &str = "Stop it (`bpftool perf` lists what sits on a tracepoint) or \
    use `--backend bpf`; the in-process table below is unaffected.";

/// With the perf backend on a launched command whose in-process table was read: its
/// contended lock attempts beside the futex calls the rings received. A contended attempt
/// ends in the kernel almost always (the waiter's FUTEX_WAIT, and the holder's FUTEX_WAKE at
/// its unlock), so a received call may stand for at most four contended attempts before the
/// session calls itself blinded.
pub fn witness(paired: &Paired, rec: &Recording) -> Option<Witness> {
    if rec.data.in_kernel || rec.data.held.is_empty() {
        return None;
    }
    let contended: u64 = rec
        .data
        .held
        .iter()
        .filter(|r| r.kind != "condvar")
        .map(|r| r.contended)
        .sum();
    Some(Witness {
        event: "syscalls:sys_enter_futex",
        seen: paired.calls,
        seen_what: "futex calls",
        lost: rec.data.recorded.lost,
        counted: contended,
        counted_what: "contended lock attempts in the command's in-process table",
        margin: 4,
    })
}
