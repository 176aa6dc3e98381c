//! The callgrind format (valgrind's, read by KCachegrind and `callgrind_annotate`) of a
//! `calls --functions` run: one `fn=` block per function of the program with its exact self
//! time, and under it one `cfn=` / `calls=N` pair per callee with the exact call count of
//! that edge and the inclusive time of those calls. Times are the record's (the hooks' cost
//! removed), in whole nanoseconds. Reads only the run record's typed call graph
//! (`model::callgraph`).

use std::collections::HashMap;
use std::fmt::Write;

use super::ExportError;
use crate::model::callgraph::{self, CallGraph, FUNCTIONS_ID};
use crate::model::{RunKind, RunRecord};

/// The callgrind file of `run`, a `calls --functions` run.
pub fn encode(run: &RunRecord) -> Result<Vec<u8>, ExportError> {
    let wrong = |kind: String| ExportError::WrongKind {
        format: "callgrind",
        kind,
        fits: "`calls --functions`",
    };
    if run.kind != RunKind::Calls {
        return Err(wrong(run.kind.as_str().into()));
    }
    let result = run
        .results
        .iter()
        .find(|r| r.id == FUNCTIONS_ID)
        .ok_or_else(|| wrong("`calls` (library calls)".into()))?;
    let graph = callgraph::read(result).ok_or_else(|| {
        ExportError::Missing(format!(
            "run {} has no call graph (stored by an older sysmeter, or its calls were not \
             counted); measure again with `sysmeter calls --functions -- CMD`",
            run.id
        ))
    })?;
    Ok(text(&graph, &result.about.measures, &run.tool_version).into_bytes())
}

/// Whole nanoseconds of a time (never below zero).
fn ns(t: f64) -> u64 {
    t.max(0.0).round() as u64
}

/// The file: a header, then each function with its self cost and its calls.
fn text(graph: &CallGraph, measures: &str, version: &str) -> String {
    // Name compression: each name written once in full as `(N) name`, then as `(N)`.
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut name = |n: &str| -> String {
        let next = ids.len() + 1;
        match ids.get(n) {
            Some(id) => format!("({id})"),
            None => {
                ids.insert(n.to_string(), next);
                // A line break would end the name line early.
                format!("({next}) {}", n.replace(['\n', '\r'], " "))
            }
        }
    };
    let total: u64 = graph.functions.iter().map(|f| ns(f.self_time.ns)).sum();
    let mut out = String::new();
    let cmd = measures.lines().next().unwrap_or_default();
    let _ = writeln!(out, "# callgrind format");
    let _ = writeln!(out, "version: 1");
    let _ = writeln!(out, "creator: sysmeter {version} (calls --functions)");
    let _ = writeln!(out, "cmd: {cmd}");
    let _ = writeln!(out, "positions: line");
    let _ = writeln!(out, "event: ns : Time (ns), the hooks' cost removed");
    let _ = writeln!(out, "events: ns");
    let _ = writeln!(out, "summary: {total}");
    let _ = writeln!(out, "totals: {total}");
    let _ = writeln!(out, "\nfl=(1) ???");
    for f in &graph.functions {
        let _ = writeln!(out, "\nfn={}", name(&f.name));
        let _ = writeln!(out, "0 {}", ns(f.self_time.ns));
        let mut edges: Vec<_> = graph.edges.iter().filter(|e| e.caller == f.name).collect();
        edges.sort_by(|a, b| a.callee.cmp(&b.callee));
        for e in edges {
            let _ = writeln!(out, "cfn={}", name(&e.callee));
            let _ = writeln!(out, "calls={} 0", e.calls);
            let _ = writeln!(out, "0 {}", ns(e.total.ns));
        }
    }
    // Edges from `<spontaneous>` (no instrumented caller) are left out: their callees are
    // the roots, as in a callgrind file of a whole program.
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::callgraph::{EdgeRow, FunctionRow, SPONTANEOUS, Timed};

    fn timed(ns: f64) -> Timed {
        Timed {
            ns,
            resolution_ns: 1.0,
        }
    }

    fn function(name: &str, calls: u64, own: f64, total: f64) -> FunctionRow {
        FunctionRow {
            name: name.into(),
            calls,
            recursive: 0,
            self_time: timed(own),
            total: timed(total),
            share: 0.0,
            unwound: 0,
            timed: calls,
        }
    }

    fn edge(caller: &str, callee: &str, calls: u64, total: f64) -> EdgeRow {
        EdgeRow {
            caller: caller.into(),
            callee: callee.into(),
            calls,
            self_time: timed(total),
            total: timed(total),
            timed: calls,
        }
    }

    #[test]
    fn each_edge_is_a_call_line_under_its_caller_with_names_written_once() {
        let graph = CallGraph {
            functions: vec![
                function("main", 1, 100.0, 400.4),
                function("leaf", 3, 300.0, 300.0),
            ],
            edges: vec![
                edge(SPONTANEOUS, "main", 1, 400.4),
                edge("main", "leaf", 3, 300.0),
            ],
        };
        let t = text(&graph, "`./tree`", "1.0");
        assert!(t.starts_with("# callgrind format\n"), "{t}");
        assert!(
            t.contains("events: ns\n") && t.contains("totals: 400\n"),
            "{t}"
        );
        assert!(t.contains("fn=(1) main\n0 100\ncfn=(2) leaf\ncalls=3 0\n0 300\n"));
        assert!(t.contains("fn=(2)\n0 300\n"), "{t}");
        assert!(!t.contains(SPONTANEOUS), "{t}");
    }
}
