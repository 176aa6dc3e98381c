//! One lock seen by both of a launched command's views: the futex view (the kernel's waits
//! on a word) and the in-process table (the preload library's counts of pthread calls). A
//! mutex's futex word is its first field, so the two meet by address (`pid:0xADDR`); a
//! condition variable waits on words inside it and is never matched. What each counts
//! differs, and the finding here says how, with both numbers, so they never look
//! contradictory. Pure; depends on the result's `Lock` and `model::held`.

use super::Lock;
use crate::model::Finding;
use crate::model::held::{HeldRow, lock_key};
use crate::model::units;

/// The in-process table's row of the same lock, if it saw it (never a condition variable).
pub fn in_process<'a>(lock: &Lock, held: &'a [HeldRow]) -> Option<&'a HeldRow> {
    let key = lock_key(lock.pid, lock.uaddr);
    held.iter().find(|h| h.kind != "condvar" && h.lock == key)
}

/// What the two views count, with their numbers, for the hottest lock both saw (`locks`
/// are the contended locks, hottest first; `rank` is a lock's place among them, from 1).
pub fn both_views(locks: &[&Lock], held: &[HeldRow]) -> Option<Finding> {
    let (rank, lock, row) = locks
        .iter()
        .enumerate()
        .find_map(|(i, l)| in_process(l, held).map(|h| (i + 1, l, h)))?;
    let site = lock.rows.first().map_or("[unknown]", |r| r.site.as_str());
    let text = format!(
        "lock {rank} ({} at {site}) is the in-process table's {} first taken at {}: the futex \
         view counts {} kernel waits (each futex(2) call that asked to sleep, longest {}), the \
         table {} contended attempts of {} (each lock call that found it taken, from the call \
         to its return, longest {}). One attempt can wait in the kernel several times (woken, \
         it may find the lock taken again), and a wait whose word changed before it slept \
         returns at once.",
        lock.kind,
        row.kind,
        row.site,
        units::count(lock.waits as f64),
        units::duration_ns(lock.max_ns as f64),
        units::count(row.contended as f64),
        units::count(row.locked as f64),
        units::duration_ns(row.wait_max_ns as f64),
    );
    Some(Finding::new("both_views", text, None))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::locks::result::Row;

    fn held(lock: &str, kind: &str) -> HeldRow {
        HeldRow {
            kind: kind.into(),
            lock: lock.into(),
            site: "worker (fx.c:8)".into(),
            locked: 800_000,
            owner_changes: 40,
            contended: 34,
            wait_ns: 90_000_000,
            wait_max_ns: 27_500_000,
            hold_ns: 1,
            hold_max_ns: 1,
            longest_hold_site: "worker (fx.c:8)".into(),
        }
    }

    #[test]
    fn a_mutex_seen_by_both_is_one_lock_with_both_counts_explained() {
        let lock = Lock {
            pid: 42,
            uaddr: 0x5500,
            kind: "mutex",
            waits: 96,
            max_ns: 13_900_000,
            rows: vec![Row {
                site: "worker (fx.c:8)".into(),
                ..Row::default()
            }],
            ..Lock::default()
        };
        let other = Lock {
            uaddr: 0x6600,
            ..lock.clone()
        };
        let table = [held("42:0x6601", "mutex"), held("42:0x5500", "mutex")];
        assert!(in_process(&other, &table).is_none());
        assert_eq!(in_process(&lock, &table), Some(&table[1]));
        assert!(in_process(&lock, &[held("42:0x5500", "condvar")]).is_none());
        let f = both_views(&[&other, &lock], &table).expect("a finding");
        for part in [
            "lock 2 (mutex at worker (fx.c:8))",
            "96 kernel waits",
            "13.9 ms",
        ] {
            assert!(f.text.contains(part), "{part}: {}", f.text);
        }
        for part in ["34 contended attempts of 800k", "27.5 ms"] {
            assert!(f.text.contains(part), "{part}: {}", f.text);
        }
        assert!(both_views(&[&other], &table).is_none());
    }
}
