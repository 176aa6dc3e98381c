//! A `calls --functions` result read as gprof reads: the flat profile (% time, self, total,
//! calls, self/call, total/call, name) and the call graph (per function its callers with
//! `called/total`, itself with `called+self`, its callees), in the terminal, in Markdown
//! and as the HTML answer with the flame graph. Every time cell is the time or
//! `< resolution (±X)` (`model::callgraph::Timed::cell`), never a number below resolution.
//!
//! Pure: reads the typed rows (`model::callgraph`). Depends on `model` and the HTML views.

use std::collections::HashMap;
use std::fmt::Write;

use crate::model::callgraph::{CallGraph, EdgeRow, FunctionRow, SPONTANEOUS, Timed, read};
use crate::model::{Artifact, ExperimentResult, units};

const FLAT_HEADERS: [&str; 7] = [
    "% time",
    "self",
    "total",
    "calls",
    "self/call",
    "total/call",
    "name",
];

/// `calls` or `calls+self` (gprof's column).
fn called(f: &FunctionRow) -> String {
    if f.recursive > 0 {
        format!("{}+{}", f.calls, f.recursive)
    } else {
        f.calls.to_string()
    }
}

fn flat_rows(g: &CallGraph) -> Vec<Vec<String>> {
    g.functions
        .iter()
        .map(|f| {
            // Per timed call: a call left by longjmp has no time of its own.
            vec![
                units::percent(f.share),
                f.self_time.cell_of(f.timed),
                f.total.cell_of(f.timed),
                called(f),
                f.self_time.per(f.timed).cell_of(f.timed),
                f.total.per(f.calls.min(f.timed)).cell_of(f.timed),
                f.name.clone(),
            ]
        })
        .collect()
}

fn children(total: &Timed, own: &Timed) -> Timed {
    Timed {
        ns: (total.ns - own.ns).max(0.0),
        resolution_ns: total.resolution_ns,
    }
}

/// One call-graph line: index, % time, self, children, called, name.
type Line = [String; 6];

fn edge_line(e: &EdgeRow, of: u64, name: &str, index: &HashMap<&str, usize>) -> Line {
    let idx = index.get(name).map_or(String::new(), |i| format!(" [{i}]"));
    let t = if e.timed == 0 { 0 } else { 1 };
    [
        String::new(),
        String::new(),
        e.self_time.cell_of(t),
        children(&e.total, &e.self_time).cell_of(t),
        format!("{}/{of}", e.calls),
        format!("    {name}{idx}"),
    ]
}

/// The lines of one function's entry: callers, itself, callees.
fn entry(
    g: &CallGraph,
    f: &FunctionRow,
    i: usize,
    index: &HashMap<&str, usize>,
    all: f64,
) -> Vec<Line> {
    let mut lines: Vec<Line> = Vec::new();
    let others = |e: &&EdgeRow| e.caller != e.callee;
    for e in g.edges.iter().filter(|e| e.callee == f.name).filter(others) {
        if e.caller == SPONTANEOUS {
            let mut l: Line = Default::default();
            l[5] = format!("    {SPONTANEOUS}");
            lines.push(l);
        } else {
            lines.push(edge_line(e, f.calls, &e.caller, index));
        }
    }
    let share = if all > 0.0 { f.total.ns / all } else { 0.0 };
    lines.push([
        format!("[{i}]"),
        units::percent(share.min(1.0)),
        f.self_time.cell_of(f.timed),
        children(&f.total, &f.self_time).cell_of(f.timed),
        called(f),
        format!("{} [{i}]", f.name),
    ]);
    for e in g.edges.iter().filter(|e| e.caller == f.name).filter(others) {
        let of = g.function(&e.callee).map_or(e.calls, |c| c.calls);
        lines.push(edge_line(e, of, &e.callee, index));
    }
    lines
}

/// The call graph in gprof's layout, functions by total time.
pub fn call_graph(g: &CallGraph) -> String {
    let mut order: Vec<&FunctionRow> = g.functions.iter().collect();
    order.sort_by(|a, b| b.total.ns.total_cmp(&a.total.ns).then(a.name.cmp(&b.name)));
    let index: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i + 1))
        .collect();
    let all: f64 = g.functions.iter().map(|f| f.self_time.ns).sum();
    let head: Line = ["index", "% time", "self", "children", "called", "name"].map(String::from);
    let mut blocks = vec![vec![head]];
    for (i, f) in order.iter().enumerate() {
        blocks.push(entry(g, f, i + 1, &index, all));
    }
    let mut width = [0usize; 6];
    for l in blocks.iter().flatten() {
        for (w, c) in width.iter_mut().zip(l) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = String::new();
    let rule = "-".repeat(width.iter().sum::<usize>() + 10);
    for (k, block) in blocks.iter().enumerate() {
        for l in block {
            let pad = |c: &str, w: usize| format!("{}{c}", " ".repeat(w - c.chars().count()));
            let cells: Vec<String> = (0..5).map(|j| pad(&l[j], width[j])).collect();
            let _ = writeln!(out, "{}  {}", cells.join("  "), l[5]);
        }
        if k > 0 {
            let _ = writeln!(out, "{rule}");
        }
    }
    out
}

/// The terminal text of a `calls --functions` result; `None` for any other result.
pub fn text(r: &ExperimentResult) -> Option<String> {
    let g = read(r)?;
    let table = crate::report::table::render(FLAT_HEADERS.to_vec(), flat_rows(&g), 0..=5);
    Some(format!(
        "Flat profile (exact calls; hooks' cost removed):\n{table}\n\nCall graph:\n{}",
        call_graph(&g)
    ))
}

/// The Markdown of a `calls --functions` result.
pub fn markdown(r: &ExperimentResult) -> Option<String> {
    let g = read(r)?;
    let line = |cells: &[String]| format!("| {} |", cells.join(" | "));
    let h: Vec<String> = FLAT_HEADERS.iter().map(|s| s.to_string()).collect();
    let mut lines = vec![line(&h), "|--:|--:|--:|--:|--:|--:|---|".to_string()];
    lines.extend(flat_rows(&g).iter().map(|r| line(r)));
    Some(format!(
        "{}\n\nCall graph:\n\n```\n{}```",
        lines.join("\n"),
        call_graph(&g)
    ))
}

/// The flat profile as the HTML answer's table, and the call graph as an open text.
pub fn html_parts(r: &ExperimentResult) -> Option<(Vec<String>, Vec<Vec<String>>, Artifact)> {
    let g = read(r)?;
    let headers = FLAT_HEADERS.iter().map(|s| s.to_string()).collect();
    let text = Artifact {
        name: "call graph (gprof layout)".into(),
        media_type: "text/plain".into(),
        content: call_graph(&g),
    };
    Some((headers, flat_rows(&g), text))
}
