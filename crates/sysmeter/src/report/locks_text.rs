//! The `mutrace`-style table of a `locks` result: per contended lock and call site the
//! contended acquisitions, total, mean and longest wait, the waiting threads, the futex word
//! and where the waiters were woken from, hottest lock first (locks, then waits for events).
//! Text and Markdown use it instead of the generic metric table for results with id `locks`;
//! JSON and CSV carry the same numbers as ordinary metrics (name `lock N kind: site`, note
//! `word · N threads · max … · woken from …`).
//!
//! Pure: strings from the result. Depends on `model` and `model::units`.

use comfy_table::{CellAlignment, Table, presets::UTF8_FULL_CONDENSED};

use crate::model::units;
use crate::model::{ExperimentResult, Metric};

/// The result id this table is for.
pub const LOCKS_ID: &str = "locks";

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

fn row(m: &Metric) -> [String; 9] {
    let (head, site) = m.name.split_once(": ").unwrap_or((&m.name, ""));
    let mut words = head.split_whitespace();
    let lock = [words.next(), words.next()]
        .iter()
        .flatten()
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let kind = words.collect::<Vec<_>>().join(" ");
    let note = m.note.clone().unwrap_or_default();
    let parts: Vec<&str> = note.split(" · ").collect();
    let word = parts.first().copied().unwrap_or_default();
    let threads = parts.get(1).copied().unwrap_or_default();
    let woken = parts
        .iter()
        .find_map(|p| p.strip_prefix("woken from "))
        .unwrap_or_default();
    [
        lock,
        kind,
        site.to_string(),
        units::count(m.summary.n as f64),
        units::duration_ns(m.summary.mean * m.summary.n as f64),
        units::duration_ns(m.summary.mean),
        units::duration_ns(m.summary.max),
        format!("{threads} · {word}"),
        woken.to_string(),
    ]
}

/// The terminal table of a `locks` result; `None` for any other result or no rows.
pub fn text(r: &ExperimentResult) -> Option<String> {
    if r.id != LOCKS_ID || r.metrics.is_empty() {
        return None;
    }
    let mut table = Table::new();
    table
        .force_no_tty()
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(HEADERS.to_vec());
    for m in &r.metrics {
        table.add_row(row(m).to_vec());
    }
    for index in 3..=6 {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    Some(table.to_string())
}

/// The markdown table of a `locks` result; `None` for any other result or no rows.
pub fn markdown(r: &ExperimentResult) -> Option<String> {
    if r.id != LOCKS_ID || r.metrics.is_empty() {
        return None;
    }
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} |", cells.join(" | "))
    };
    let mut lines = vec![
        line(&HEADERS.map(str::to_string)),
        "|---|---|---|--:|--:|--:|--:|---|---|".to_string(),
    ];
    lines.extend(r.metrics.iter().map(|m| line(&row(m))));
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{About, Summary, Unit};

    fn result() -> ExperimentResult {
        let mut r = ExperimentResult::new(LOCKS_ID, About::default());
        r.metrics.push(Metric {
            name: "lock 1 mutex: worker (fx.c:42)".into(),
            unit: Unit::Ns,
            summary: Summary {
                n: 4,
                mean: 2_000_000.0,
                max: 5_000_000.0,
                ..Summary::default()
            },
            cycles: None,
            subtracted_overhead_ns: 0.0,
            ops_per_sample: 1,
            note: Some("0x5500 · 4 threads · max 5 ms · woken from worker (fx.c:44) 100%".into()),
            samples: Vec::new(),
            core_cycles: None,
            rounds: None,
            degenerate: None,
        });
        r
    }

    #[test]
    fn rows_split_the_name_and_the_note() {
        let cells = row(&result().metrics[0]);
        assert_eq!(cells[0], "lock 1");
        assert_eq!(cells[1], "mutex");
        assert_eq!(cells[2], "worker (fx.c:42)");
        assert_eq!(cells[7], "4 threads · 0x5500");
        assert_eq!(cells[8], "worker (fx.c:44) 100%");
        let text = text(&result()).unwrap();
        assert!(text.contains("8.00 ms") || text.contains("8 ms"), "{text}");
        assert!(markdown(&result()).unwrap().contains("| lock 1 | mutex |"));
        let mut other = result();
        other.id = "trace".into();
        assert!(text_of(&other).is_none());
    }

    fn text_of(r: &ExperimentResult) -> Option<String> {
        text(r)
    }
}
