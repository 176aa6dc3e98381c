//! An `alloc` run (a heap profile): in text and Markdown, the top allocation sites by bytes
//! and the leaks with their stacks instead of the generic metric table; in HTML, the flame
//! graphs of bytes and of counts and the live heap beside RSS first, then the sites.
//! The rows arrive typed (`model::alloc`).
//!
//! Pure. Depends on `model`, `model::units` and `report` (the HTML views).

use super::TableKind;
use crate::model::alloc::{ALLOC_ID, AllocSite, sites};
use crate::model::{ExperimentResult, units};
use crate::report::html::answer::{AnswerView, finding_lines};
use crate::report::html::view::{ExperimentView, TableView};

/// The view of `alloc`.
pub(super) const ALLOC: TableKind = TableKind {
    text,
    markdown,
    answer,
};

/// Sites shown in the tables (all are in the JSON).
const TOP: usize = 15;
/// Frames of a leak's stack shown in text.
const LEAK_FRAMES: usize = 6;

const HEADERS: [&str; 7] = [
    "bytes",
    "% bytes",
    "allocations",
    "mean size",
    "temporary",
    "live at end",
    "site",
];

fn cells(r: &AllocSite, all_bytes: f64) -> Vec<String> {
    let share = if all_bytes > 0.0 {
        r.bytes as f64 / all_bytes
    } else {
        0.0
    };
    let live = match r.leaked {
        0 => String::new(),
        n => format!(
            "{} ({})",
            units::count(n as f64),
            units::size(r.leaked_bytes)
        ),
    };
    vec![
        units::size(r.bytes),
        units::percent(share),
        units::count(r.allocations as f64),
        units::bytes(r.mean_size()),
        units::count(r.temporary as f64),
        live,
        r.site.clone(),
    ]
}

fn table_rows(r: &ExperimentResult) -> Option<Vec<Vec<String>>> {
    if r.id != ALLOC_ID {
        return None;
    }
    let rows = sites(r);
    let all: f64 = rows.iter().map(|s| s.bytes as f64).sum();
    Some(rows.iter().take(TOP).map(|s| cells(s, all)).collect())
}

fn leaks_text(rows: &[AllocSite]) -> String {
    let mut leaking: Vec<&AllocSite> = rows.iter().filter(|r| r.leaked > 0).collect();
    if leaking.is_empty() {
        return String::new();
    }
    leaking.sort_by_key(|r| std::cmp::Reverse(r.leaked_bytes));
    // With -p the end is when observation stopped (the `leaks` finding says which).
    let mut out = String::from(
        "\nLive at end (leaks when the program exited; with -p, live when observation \
         stopped), with their stacks:\n",
    );
    for r in leaking.iter().take(TOP) {
        out.push_str(&format!(
            "  {} blocks, {} — {}\n",
            units::count(r.leaked as f64),
            units::size(r.leaked_bytes),
            r.site
        ));
        for f in r.stack.iter().take(LEAK_FRAMES) {
            out.push_str(&format!("      {f}\n"));
        }
    }
    out
}

/// The terminal tables of an `alloc` result; `None` for any other result.
fn text(r: &ExperimentResult) -> Option<String> {
    let rows = table_rows(r)?;
    let table = crate::report::table::render(HEADERS.to_vec(), rows, 0..=5);
    // Anything not kept is said first, under the run's title (`TableKind`'s text).
    Some(format!("{table}\n{}", leaks_text(&sites(r))))
}

/// The Markdown table of an `alloc` result.
fn markdown(r: &ExperimentResult) -> Option<String> {
    let rows = table_rows(r)?;
    let escape = |c: &str| c.replace('|', "\\|");
    let mut out = format!(
        "| {} |\n|{}\n",
        HEADERS.join(" | "),
        "---|".repeat(HEADERS.len())
    );
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    Some(out)
}

/// The flame graphs and the heap over time first, then the sites.
fn answer(r: &ExperimentResult, view: &mut ExperimentView) -> AnswerView {
    let rows = table_rows(r).unwrap_or_default();
    view.texts.retain(|t| t.name == "folded");
    AnswerView {
        heading: "Heap profile".into(),
        lines_html: finding_lines(
            r,
            &["lost", "top_site", "leaks", "peak", "temporary", "priced"],
        ),
        table: Some(TableView::plain("Allocation sites by bytes", HEADERS, rows)),
        flames: std::mem::take(&mut view.flames),
        charts: std::mem::take(&mut view.charts),
        ..AnswerView::default()
    }
}
