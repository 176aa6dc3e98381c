//! The threads' calling-context trees summed into the gprof views: per function (flat
//! profile), per caller → callee edge (call graph) and per calling context (the folded
//! stacks of the flame graph, weighted by exact self time in ns). Counts are added as the
//! hooks counted them; tick sums are converted and the hooks' calibrated cost removed from
//! each sum ([`Cost::remove`]), so every time carries its resolution.
//!
//! Pure. Depends on `model::callgraph` and the siblings `calibration` and
//! `inproc::funcs_region`.

use std::collections::{BTreeMap, HashMap};

use super::super::inproc::funcs_region::{Node, Thread};
use super::calibration::Cost;
use crate::model::callgraph::{CallGraph, EdgeRow, FunctionRow, SPONTANEOUS, Timed};

/// Sums of nodes.
#[derive(Debug, Clone, Default)]
struct Acc {
    calls: u64,
    timed: u64,
    self_ns: f64,
    kids: u64,
    incl_ns: f64,
    outer: u64,
    outer_desc: u64,
    unwound: u64,
}

impl Acc {
    fn add(&mut self, n: &Node, ns_per_tick: f64) {
        self.calls += n.count;
        self.timed += n.timed;
        self.self_ns += n.self_ticks as f64 * ns_per_tick;
        self.kids += n.kids;
        self.incl_ns += n.incl_ticks as f64 * ns_per_tick;
        self.outer += n.outer;
        self.outer_desc += n.outer_desc;
        self.unwound += n.unwound;
    }

    /// The self time; never above the inclusive time it is part of (a larger figure is
    /// the removal's error, within the resolution).
    fn self_time(&self, cost: &Cost) -> Timed {
        let (ns, resolution_ns) = cost.remove(self.self_ns, self.timed, self.kids, false);
        let ns = if self.outer > 0 {
            ns.min(self.total(cost).ns)
        } else {
            ns
        };
        Timed { ns, resolution_ns }
    }

    fn total(&self, cost: &Cost) -> Timed {
        let (ns, resolution_ns) = cost.remove(self.incl_ns, self.outer, self.outer_desc, true);
        Timed { ns, resolution_ns }
    }
}

/// The views of a run.
#[derive(Debug, Clone, Default)]
pub struct Views {
    /// Flat profile and call graph.
    pub graph: CallGraph,
    /// `main;a;b NS` lines: exact self time per calling context.
    pub folded: String,
    /// Calls counted, all functions.
    pub calls: u64,
    /// Calls left by longjmp.
    pub unwound: u64,
}

/// The path of names from the root to node `i` of `t`.
fn path(t: &Thread, i: usize, name: &dyn Fn(u64) -> String) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = Some(i);
    while let Some(k) = at.filter(|_| out.len() <= t.nodes.len()) {
        let n = &t.nodes[k];
        out.push(name(n.fn_addr));
        at = (n.parent as usize)
            .checked_sub(1)
            .filter(|&p| p < t.nodes.len());
    }
    out.reverse();
    out
}

/// Node sums by function, by (caller, callee) and by calling context.
#[derive(Default)]
struct Sums {
    fns: BTreeMap<String, Acc>,
    edges: BTreeMap<(String, String), Acc>,
    stacks: BTreeMap<Vec<String>, Acc>,
}

fn sum(threads: &[Thread], names: &HashMap<(u64, u64), String>, ns_per_tick: f64) -> Sums {
    let mut s = Sums::default();
    for t in threads {
        let name = |a: u64| {
            names
                .get(&(t.base, a))
                .cloned()
                .unwrap_or_else(|| format!("{:#x}", a.wrapping_sub(t.base)))
        };
        for (i, n) in t.nodes.iter().enumerate().filter(|(_, n)| n.fn_addr != 0) {
            let p = path(t, i, &name);
            let callee = p.last().cloned().unwrap_or_default();
            let caller = p
                .len()
                .checked_sub(2)
                .map_or(SPONTANEOUS.to_string(), |k| p[k].clone());
            s.fns.entry(callee.clone()).or_default().add(n, ns_per_tick);
            s.edges
                .entry((caller, callee))
                .or_default()
                .add(n, ns_per_tick);
            s.stacks.entry(p).or_default().add(n, ns_per_tick);
        }
    }
    s
}

fn function_rows(s: &Sums, cost: &Cost) -> Vec<FunctionRow> {
    let recursive = |f: &str| {
        s.edges
            .get(&(f.to_string(), f.to_string()))
            .map_or(0, |a| a.calls)
    };
    let all_self: f64 = s.fns.values().map(|a| a.self_time(cost).ns).sum();
    let mut rows: Vec<FunctionRow> = s
        .fns
        .iter()
        .map(|(name, a)| {
            let self_time = a.self_time(cost);
            FunctionRow {
                name: name.clone(),
                calls: a.calls - recursive(name),
                recursive: recursive(name),
                share: if all_self > 0.0 {
                    self_time.ns / all_self
                } else {
                    0.0
                },
                self_time,
                total: a.total(cost),
                unwound: a.unwound,
                timed: a.timed,
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.self_time
            .ns
            .total_cmp(&a.self_time.ns)
            .then(a.name.cmp(&b.name))
    });
    rows
}

/// Sums the trees of `threads`, named by `names` (keyed by load bias and address).
pub fn views(
    threads: &[Thread],
    names: &HashMap<(u64, u64), String>,
    cost: &Cost,
    ns_per_tick: f64,
) -> Views {
    let s = sum(threads, names, ns_per_tick);
    let functions = function_rows(&s, cost);
    let edges = s
        .edges
        .iter()
        .map(|((caller, callee), a)| EdgeRow {
            caller: caller.clone(),
            callee: callee.clone(),
            calls: a.calls,
            self_time: a.self_time(cost),
            total: a.total(cost),
            timed: a.timed,
        })
        .collect();
    let folded = s
        .stacks
        .iter()
        .map(|(p, a)| (p.join(";"), a.self_time(cost).ns.round() as u64))
        .filter(|(_, w)| *w > 0)
        .map(|(p, w)| format!("{p} {w}\n"))
        .collect();
    Views {
        calls: s.fns.values().map(|a| a.calls).sum(),
        unwound: s.fns.values().map(|a| a.unwound).sum(),
        graph: CallGraph { functions, edges },
        folded,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(fn_addr: u64, parent: u32, count: u64, self_ticks: u64) -> Node {
        Node {
            fn_addr,
            parent,
            count,
            timed: count,
            self_ticks,
            outer: count,
            incl_ticks: self_ticks,
            ..Node::default()
        }
    }

    #[test]
    fn contexts_sum_into_functions_and_edges() {
        // main → a (3) → b (12); main → b (1); main → r (1) → r (1).
        let nodes = vec![
            node(0x10, 0, 1, 100),
            node(0x20, 1, 3, 30),
            node(0x30, 2, 12, 120),
            node(0x30, 1, 1, 10),
            node(0x40, 1, 1, 5),
            node(0x40, 5, 1, 5),
        ];
        let t = Thread {
            nodes,
            ..Thread::default()
        };
        let names: HashMap<(u64, u64), String> =
            [(0x10, "main"), (0x20, "a"), (0x30, "b"), (0x40, "r")]
                .iter()
                .map(|&(a, n)| ((0, a), n.to_string()))
                .collect();
        let v = views(&[t], &names, &Cost::default(), 1.0);
        let g = &v.graph;
        assert_eq!(g.edge("a", "b").map(|e| e.calls), Some(12));
        assert_eq!(g.edge("main", "b").map(|e| e.calls), Some(1));
        assert_eq!(g.edge(SPONTANEOUS, "main").map(|e| e.calls), Some(1));
        let b = g.function("b").expect("b");
        assert_eq!((b.calls, b.recursive, b.self_time.ns), (13, 0, 130.0));
        let r = g.function("r").expect("r");
        assert_eq!((r.calls, r.recursive), (1, 1));
        assert!(v.folded.contains("main;a;b 120\n"), "{}", v.folded);
        assert_eq!(v.calls, 19);
    }
}
