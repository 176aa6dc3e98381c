//! The `mutrace`-style table of a `locks` result: per contended lock and call site the
//! contended acquisitions, total, mean and longest wait, the waiting threads, the futex word
//! and where the waiters were woken from, hottest lock first (locks, then waits for events).
//! Text and Markdown use it instead of the generic metric table; JSON and CSV carry the same
//! numbers as ordinary metrics, and the typed rows as the `lock rows` artifact.
//!
//! Pure: strings from the typed rows (`model::locks::rows`, which also reads records written
//! before the artifact) and the metrics' summaries. Depends on `model` and `model::units`.

use crate::model::held::{HeldRow, held_rows};
use crate::model::locks::{self, LockRow};
use crate::model::units;
use crate::model::{ExperimentResult, Metric};
use crate::report::table::{self, render};

/// The column of the in-process table's count of the same lock.
pub(super) const IN_PROCESS: &str = "in process: contended of locked";

const HEADERS: [&str; 9] = [
    "lock",
    "kind",
    "call site",
    "contended",
    "total wait",
    "mean",
    "longest",
    "threads · word",
    "woken from",
];

fn row(m: &Metric, l: &LockRow) -> [String; 9] {
    let woken: Vec<String> = l
        .woken_from
        .iter()
        .map(|w| format!("{} {}", w.site, units::percent(w.share)))
        .collect();
    [
        format!("{} {}", l.class.as_str(), l.rank),
        l.kind.clone(),
        l.site.clone(),
        units::count(m.summary.n as f64),
        units::duration_ns(m.summary.mean * m.summary.n as f64),
        units::duration_ns(m.summary.mean),
        units::duration_ns(m.summary.max),
        format!(
            "{} thread{} · 0x{:x}",
            l.threads,
            if l.threads == 1 { "" } else { "s" },
            l.word
        ),
        woken.join(", "),
    ]
}

/// The in-process cell of a row: the table's count of the same lock, when it saw it.
fn in_process(l: &LockRow, held: &[HeldRow]) -> Option<String> {
    let key = l.in_process.as_deref()?;
    let h = held.iter().find(|h| h.lock == key)?;
    Some(format!(
        "{} of {} contended · longest {}",
        units::count(h.contended as f64),
        units::count(h.locked as f64),
        units::duration_ns(h.wait_max_ns as f64)
    ))
}

/// The `in process` column, one cell per row in metric order, when the in-process table saw
/// one of the locks (its row is then the futex table's: `held` leaves it out below).
pub(super) fn in_process_column(r: &ExperimentResult) -> Option<Vec<String>> {
    let rows = locks::rows(r)?;
    let held = held_rows(r)?;
    let column: Vec<Option<String>> = rows.iter().map(|(_, l)| in_process(l, &held)).collect();
    column.iter().any(Option::is_some).then(|| {
        let dash = || "–".to_string();
        column.into_iter().map(|c| c.unwrap_or_else(dash)).collect()
    })
}

/// The headers and cells of every row, with the `in process` column when there is one.
fn cells(r: &ExperimentResult) -> Option<(Vec<&'static str>, Vec<Vec<String>>)> {
    let rows = locks::rows(r)?;
    let mut headers = HEADERS.to_vec();
    let mut cells: Vec<Vec<String>> = rows.iter().map(|(m, l)| row(m, l).to_vec()).collect();
    if let Some(column) = in_process_column(r) {
        headers.push(IN_PROCESS);
        for (cells, cell) in cells.iter_mut().zip(column) {
            cells.push(cell);
        }
    }
    Some((headers, cells))
}

/// The terminal table of a `locks` result; `None` for any other result, no rows, or rows
/// that cannot be read (the generic table then).
pub fn text(r: &ExperimentResult) -> Option<String> {
    let (headers, cells) = cells(r)?;
    Some(render(headers, cells, 3..=6))
}

/// The markdown table of a `locks` result; `None` as for [`text`].
pub fn markdown(r: &ExperimentResult) -> Option<String> {
    let (headers, cells) = cells(r)?;
    Some(table::markdown(&headers, cells, 3..=6))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::locks::{LOCKS_ID, LockClass, Waker};
    use crate::model::{About, Summary, Unit};

    fn result() -> ExperimentResult {
        let mut r = ExperimentResult::new(LOCKS_ID, About::default());
        r.metrics.push(Metric {
            note: Some("0x5500 · 4 threads · max 5 ms · woken from worker (fx.c:44) 100%".into()),
            ..Metric::new(
                "lock 1 mutex: worker (fx.c:42)",
                Unit::Ns,
                Summary {
                    n: 4,
                    mean: 2_000_000.0,
                    max: 5_000_000.0,
                    ..Summary::default()
                },
            )
        });
        r
    }

    fn typed() -> LockRow {
        LockRow {
            class: LockClass::Lock,
            rank: 1,
            kind: "mutex".into(),
            site: "worker (fx.c:42)".into(),
            word: 0x5500,
            threads: 4,
            woken_from: vec![Waker {
                site: "worker (fx.c:44)".into(),
                share: 1.0,
            }],
            in_process: None,
        }
    }

    #[test]
    fn rows_show_the_typed_fields() {
        let r = result();
        let cells = row(&r.metrics[0], &typed());
        assert_eq!(cells[0], "lock 1");
        assert_eq!(cells[1], "mutex");
        assert_eq!(cells[2], "worker (fx.c:42)");
        assert_eq!(cells[7], "4 threads · 0x5500");
        assert_eq!(cells[8], "worker (fx.c:44) 100%");
        let text = text(&r).unwrap();
        assert!(text.contains("8.00 ms") || text.contains("8 ms"), "{text}");
        assert!(markdown(&r).unwrap().contains("| lock 1 | mutex |"));
        let mut other = result();
        other.id = "trace".into();
        assert!(super::text(&other).is_none());
    }

    #[test]
    fn a_record_with_the_artifact_reads_the_same_as_one_without() {
        let old = result();
        let mut new = result();
        new.artifacts.extend(locks::artifact(&[typed()]));
        assert_eq!(text(&old), text(&new));
        assert_eq!(markdown(&old), markdown(&new));
    }
}
