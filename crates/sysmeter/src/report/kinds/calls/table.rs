//! The `strace -c`-style table of a `trace` or `calls` result: per system call (or library
//! function) the share of the total time, the total, mean and median time per call, the
//! count, and the errors with their errno breakdown (`trace`) or the calling threads
//! (`calls`), in the order the result holds them (by total time), and a total row; a
//! "cost here" column when the calls were priced (`diagnose::price`). The text and markdown
//! renderers use it instead of the generic metric table for results with id `trace` or
//! `calls`; JSON and CSV carry the same numbers as ordinary metrics and notes.
//!
//! Pure: strings from the result. Depends on `model` and `model::units`.

use crate::model::call_note::CallNote;
use crate::model::units;

use crate::model::{ExperimentResult, Metric};

/// The result id of `trace`.
pub const TRACE_ID: &str = "trace";
/// The result id of `calls`.
pub const CALLS_ID: &str = "calls";

const TRACE_HEADERS: [&str; 8] = [
    "% time",
    "total",
    "mean",
    "median",
    "calls",
    "errors",
    "syscall",
    "errors by errno",
];

const CALLS_HEADERS: [&str; 7] = [
    "% time", "total", "mean", "median", "calls", "threads", "function",
];

/// The column every priced call fills (see `diagnose::price`).
const COST: &str = "cost here";

fn total_ns(m: &Metric) -> f64 {
    m.summary.mean * m.summary.n as f64
}

fn headers(r: &ExperimentResult, priced: bool) -> Vec<String> {
    let base: &[&str] = if r.id == CALLS_ID {
        &CALLS_HEADERS
    } else {
        &TRACE_HEADERS
    };
    let mut h: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    if priced {
        h.push(COST.into());
    }
    h
}

fn row(r: &ExperimentResult, m: &Metric, share: String, priced: bool) -> Vec<String> {
    let note = CallNote::of(m);
    let mut cells = vec![
        share,
        units::duration_ns(total_ns(m)),
        units::duration_ns(m.summary.mean),
        note.median_cell(m.summary.median),
        m.summary.n.to_string(),
    ];
    if r.id == CALLS_ID {
        cells.push(note.threads.unwrap_or("").to_string());
        cells.push(m.name.clone());
    } else {
        cells.push(match note.errors {
            0 => String::new(),
            e => e.to_string(),
        });
        cells.push(m.name.clone());
        cells.push(note.breakdown.to_string());
    }
    if priced {
        cells.push(note.cost.unwrap_or("").to_string());
    }
    cells
}

fn rows(r: &ExperimentResult, priced: bool) -> Vec<Vec<String>> {
    let sum: f64 = r.metrics.iter().map(total_ns).sum();
    let share = |t: f64| {
        if sum > 0.0 {
            format!("{:.2}", 100.0 * t / sum)
        } else {
            "0.00".to_string()
        }
    };
    let mut rows: Vec<Vec<String>> = r
        .metrics
        .iter()
        .map(|m| row(r, m, share(total_ns(m)), priced))
        .collect();
    let calls: usize = r.metrics.iter().map(|m| m.summary.n).sum();
    let mean = if calls > 0 { sum / calls as f64 } else { 0.0 };
    let mut total = vec![
        "100.00".into(),
        units::duration_ns(sum),
        units::duration_ns(mean),
        String::new(),
        calls.to_string(),
    ];
    if r.id == CALLS_ID {
        total.extend([String::new(), "total".into()]);
    } else {
        let errs: u64 = r.metrics.iter().map(|m| CallNote::of(m).errors).sum();
        total.extend([errs.to_string(), "total".into(), String::new()]);
    }
    if priced {
        total.push(String::new());
    }
    rows.push(total);
    rows
}

fn is_table(r: &ExperimentResult) -> Option<bool> {
    (r.id == TRACE_ID || r.id == CALLS_ID)
        .then(|| r.metrics.iter().any(|m| CallNote::of(m).cost.is_some()))
}

/// The terminal table of a `trace` or `calls` result; `None` for any other result.
pub fn text(r: &ExperimentResult) -> Option<String> {
    let priced = is_table(r)?;
    Some(crate::report::table::render(
        headers(r, priced),
        rows(r, priced),
        0..=5,
    ))
}

/// The markdown table of a `trace` or `calls` result; `None` for any other result.
pub fn markdown(r: &ExperimentResult) -> Option<String> {
    let priced = is_table(r)?;
    let line = |cells: &[String]| format!("| {} |", cells.join(" | ").replace('\n', " "));
    let h = headers(r, priced);
    let align: Vec<&str> = (0..h.len())
        .map(|i| if i <= 5 { "--:" } else { "---" })
        .collect();
    let mut lines = vec![line(&h), format!("|{}|", align.join("|"))];
    lines.extend(rows(r, priced).iter().map(|r| line(r)));
    Some(lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{About, Summary, Unit};

    fn metric(name: &str, n: usize, mean: f64, note: Option<&str>) -> Metric {
        let summary = Summary {
            n,
            mean,
            median: mean,
            ..Summary::default()
        };
        Metric {
            note: note.map(str::to_string),
            ..Metric::new(name, Unit::Ns, summary)
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
