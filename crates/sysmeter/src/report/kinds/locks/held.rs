//! mutrace's whole table in a `locks` result: per pthread lock of a launched program (the
//! in-process table, `model::held`) how often it was taken, how often its owner changed and
//! it had to wait, the total, mean and longest wait and hold, where it was first taken and
//! where its longest hold began. Locks that never go through the pthread functions are in
//! the futex table above it, and so are the locks both saw: one lock, one row (the futex
//! table's, with this table's counts in its `in process` column). Pure. Depends on `model`, `model::units` and the futex table's
//! renderers (`table.rs`).

use crate::model::ExperimentResult;
use crate::model::held::{HeldRow, held_rows};
use crate::model::locks;
use crate::model::units;
use crate::report::html::view::TableView;
use crate::report::table::{self, render};

/// Rows shown at most (the JSON artifact keeps every lock).
const SHOWN: usize = 20;

const HEADERS: [&str; 11] = [
    "kind",
    "first taken at",
    "locked",
    "owner changed",
    "contended",
    "total wait",
    "longest wait",
    "total held",
    "mean held",
    "longest held",
    "longest hold taken at",
];

fn cells(r: &HeldRow) -> [String; 11] {
    let held = |ns: f64| match r.kind.as_str() {
        "condvar" => "–".to_string(),
        _ => units::duration_ns(ns),
    };
    [
        r.kind.clone(),
        r.site.clone(),
        units::count(r.locked as f64),
        units::count(r.owner_changes as f64),
        units::count(r.contended as f64),
        units::duration_ns(r.wait_ns as f64),
        units::duration_ns(r.wait_max_ns as f64),
        held(r.hold_ns as f64),
        held(r.hold_mean_ns()),
        held(r.hold_max_ns as f64),
        r.longest_hold_site.clone(),
    ]
}

const TITLE: &str = "pthread locks of the program (in process; a condition variable's \
                     \"locked\" counts its waits, \"contended\" its signals):";
/// The title when some locks are already rows of the futex table.
const TITLE_OTHERS: &str = "Other pthread locks of the program (in process; a condition \
                     variable's \"locked\" counts its waits, \"contended\" its signals; \
                     the locks the futex table shows are its rows):";

/// The title and the rows shown: every lock of the in-process table but those the futex
/// table above already shows as its own rows (a lock is one row); `None` without any.
fn shown(r: &ExperimentResult) -> Option<(&'static str, Vec<Vec<String>>)> {
    let rows = held_rows(r).filter(|rows| !rows.is_empty())?;
    let merged: Vec<String> = locks::rows(r)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(_, l)| l.in_process)
        .collect();
    let title = if merged.is_empty() {
        TITLE
    } else {
        TITLE_OTHERS
    };
    let others = rows.iter().filter(|h| !merged.contains(&h.lock));
    let cells: Vec<Vec<String>> = others.take(SHOWN).map(|row| cells(row).to_vec()).collect();
    (!cells.is_empty()).then_some((title, cells))
}

/// The terminal table; `None` without an in-process table.
pub fn text(r: &ExperimentResult) -> Option<String> {
    let (title, shown) = shown(r)?;
    Some(format!(
        "{title}\n{}",
        render(HEADERS.to_vec(), shown, 2..=9)
    ))
}

/// The markdown table; `None` as for [`text`].
pub fn markdown(r: &ExperimentResult) -> Option<String> {
    let (title, shown) = shown(r)?;
    let table = table::markdown(&HEADERS, shown, 2..=9);
    Some(format!("{title}\n\n{table}"))
}

/// The HTML table (below the answer, in place of the generic metric table); `None` without
/// an in-process table.
pub fn html(r: &ExperimentResult) -> Option<TableView> {
    let (title, shown) = shown(r)?;
    Some(TableView::plain(title, HEADERS, shown))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::held::held_artifact;
    use crate::model::locks::LOCKS_ID;

    fn result(rows: &[HeldRow]) -> ExperimentResult {
        let mut r = ExperimentResult::new(LOCKS_ID, Default::default());
        r.artifacts.extend(held_artifact(rows));
        r
    }

    #[test]
    fn the_table_shows_every_column_of_each_lock_and_no_hold_for_a_condvar() {
        let mutex = HeldRow {
            kind: "mutex".into(),
            lock: "42:0x1000".into(),
            site: "hold_hot (locks_hold.c:29)".into(),
            locked: 100,
            owner_changes: 70,
            contended: 71,
            wait_ns: 314_000_000,
            wait_max_ns: 13_300_000,
            hold_ns: 111_000_000,
            hold_max_ns: 1_760_000,
            longest_hold_site: "hold_hot (locks_hold.c:29)".into(),
        };
        let cond = HeldRow {
            kind: "condvar".into(),
            hold_ns: 0,
            ..mutex.clone()
        };
        let shown = text(&result(&[mutex, cond])).expect("a table");
        for cell in [
            "owner changed",
            "hold_hot (locks_hold.c:29)",
            "100",
            "70",
            "71",
        ] {
            assert!(shown.contains(cell), "{cell} in {shown}");
        }
        assert!(
            shown.contains("1.11 ms") && shown.contains("314 ms"),
            "{shown}"
        );
        let condvar_line = shown
            .lines()
            .find(|l| l.contains("condvar"))
            .expect("condvar row");
        assert!(condvar_line.contains('–'), "{condvar_line}");
        let md = markdown(&result(&[])).is_none();
        assert!(md, "no table without rows");
        assert!(text(&ExperimentResult::new(LOCKS_ID, Default::default())).is_none());
    }
}
