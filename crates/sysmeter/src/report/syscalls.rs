//! The `strace -c`-style table of a `trace` result: per system call the share of the total
//! time, the total, mean and median time per call, the count and the errors (with their
//! errno breakdown), in the order the result holds them (by total time), and a total row.
//! The text and markdown renderers use it instead of the generic metric table for results
//! with id `trace`; JSON and CSV carry the same numbers as ordinary metrics.
//!
//! Pure: strings from the result. Depends on `model` and `model::units`.

use crate::model::units;
use comfy_table::{CellAlignment, Table, presets::UTF8_FULL_CONDENSED};

use crate::model::{ExperimentResult, Metric};

/// The result id this table is for.
pub const TRACE_ID: &str = "trace";

const HEADERS: [&str; 8] = [
    "% time",
    "total",
    "mean",
    "median",
    "calls",
    "errors",
    "syscall",
    "errors by errno",
];

fn total_ns(m: &Metric) -> f64 {
    m.summary.mean * m.summary.n as f64
}

/// Number of failed calls, read back from the note `N error(s): …`.
fn errors(m: &Metric) -> u64 {
    m.note
        .as_deref()
        .and_then(|n| n.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn breakdown(m: &Metric) -> String {
    m.note
        .as_deref()
        .and_then(|n| n.split_once(": "))
        .map_or_else(String::new, |(_, b)| b.to_string())
}

fn rows(r: &ExperimentResult) -> Vec<[String; 8]> {
    let sum: f64 = r.metrics.iter().map(total_ns).sum();
    let share = |t: f64| {
        if sum > 0.0 {
            format!("{:.2}", 100.0 * t / sum)
        } else {
            "0.00".to_string()
        }
    };
    let mut rows: Vec<[String; 8]> = r
        .metrics
        .iter()
        .map(|m| {
            [
                share(total_ns(m)),
                units::duration_ns(total_ns(m)),
                units::duration_ns(m.summary.mean),
                units::duration_ns(m.summary.median),
                m.summary.n.to_string(),
                match errors(m) {
                    0 => String::new(),
                    e => e.to_string(),
                },
                m.name.clone(),
                breakdown(m),
            ]
        })
        .collect();
    let calls: usize = r.metrics.iter().map(|m| m.summary.n).sum();
    let errs: u64 = r.metrics.iter().map(errors).sum();
    let mean = if calls > 0 { sum / calls as f64 } else { 0.0 };
    rows.push([
        "100.00".into(),
        units::duration_ns(sum),
        units::duration_ns(mean),
        String::new(),
        calls.to_string(),
        errs.to_string(),
        "total".into(),
        String::new(),
    ]);
    rows
}

/// The terminal table of a `trace` result; `None` for any other result.
pub fn text(r: &ExperimentResult) -> Option<String> {
    if r.id != TRACE_ID {
        return None;
    }
    let mut table = Table::new();
    table
        .force_no_tty()
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(HEADERS.to_vec());
    for row in rows(r) {
        table.add_row(row.to_vec());
    }
    for index in 0..=5 {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    Some(table.to_string())
}

/// The markdown table of a `trace` result; `None` for any other result.
pub fn markdown(r: &ExperimentResult) -> Option<String> {
    if r.id != TRACE_ID {
        return None;
    }
    let line = |cells: &[String]| format!("| {} |", cells.join(" | ").replace('\n', " "));
    let mut lines = vec![
        line(&HEADERS.map(str::to_string)),
        "|--:|--:|--:|--:|--:|--:|---|---|".to_string(),
    ];
    lines.extend(rows(r).iter().map(|r| line(r)));
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{About, Summary, Unit};

    fn metric(name: &str, n: usize, mean: f64, note: Option<&str>) -> Metric {
        Metric {
            degenerate: None,
            core_cycles: None,
            rounds: None,
            name: name.into(),
            unit: Unit::Ns,
            summary: Summary {
                n,
                mean,
                median: mean,
                ..Summary::default()
            },
            cycles: None,
            subtracted_overhead_ns: 0.0,
            ops_per_sample: 1,
            note: note.map(str::to_string),
            samples: Vec::new(),
        }
    }

    fn result(id: &str) -> ExperimentResult {
        let mut r = ExperimentResult::new(id, About::default());
        r.metrics = vec![
            metric("read", 300, 1000.0, None),
            metric("openat", 10, 1000.0, Some("4 errors: ENOENT×4")),
        ];
        r
    }

    #[test]
    fn trace_results_get_the_strace_table_with_a_total_row() {
        let t = text(&result("trace")).unwrap();
        assert!(t.contains("% time") && t.contains("syscall"), "{t}");
        let read = t.lines().find(|l| l.contains("read")).unwrap();
        assert!(read.contains("96.77") && read.contains("300"), "{read}");
        let openat = t.lines().find(|l| l.contains("openat")).unwrap();
        assert!(
            openat.contains("ENOENT×4") && openat.contains(" 4 "),
            "{openat}"
        );
        let total = t.lines().find(|l| l.contains("100.00")).unwrap();
        assert!(total.contains("310") && total.contains("total"), "{total}");
        let md = markdown(&result("trace")).unwrap();
        assert_eq!(md.lines().count(), 2 + 3);
    }

    #[test]
    fn other_results_are_left_to_the_generic_table() {
        assert!(text(&result("os.syscall")).is_none());
        assert!(markdown(&result("os.syscall")).is_none());
    }
}
