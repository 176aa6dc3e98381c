//! The call graph in gprof's layout: one entry per hot function (by total samples), its
//! callers above it, its callees below, each line with the samples that went through that
//! call. A sampling profile counts no calls, so where gprof prints `called/total` this
//! prints samples: a caller line is the part of the function's total reached through that
//! caller, a callee line the part of the callee's total reached from this function.
//! `<spontaneous>` counts samples where the function is the outermost frame (an entry point,
//! or a stack that ends early). Pure: text from [`Stacks`].

use std::collections::HashMap;
use std::fmt::Write;

use super::stacks::Stacks;

/// One entry of the call graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Frame id of the function.
    pub frame: u32,
    /// Samples with the function as leaf.
    pub self_samples: u64,
    /// Samples with the function on the stack.
    pub total_samples: u64,
    /// Callers with samples through them, most first.
    pub callers: Vec<(u32, u64)>,
    /// Samples where the function is the outermost frame.
    pub spontaneous: u64,
    /// Callees with samples through them, most first (a recursive call is listed as the
    /// function itself).
    pub callees: Vec<(u32, u64)>,
}

/// Entries for the functions with at least `min_share` of all samples in their total, at
/// most `max`, by total samples (ties: the function nearer the root first, so a chain of
/// equal totals reads top-down; then self samples, then name).
pub fn entries(stacks: &Stacks, min_share: f64, max: usize) -> Vec<Entry> {
    let total = stacks.total();
    let edges = stacks.edges();
    let mut callers: HashMap<u32, Vec<(u32, u64)>> = HashMap::new();
    let mut callees: HashMap<u32, Vec<(u32, u64)>> = HashMap::new();
    for (&(from, to), &count) in &edges {
        callers.entry(to).or_default().push((from, count));
        callees.entry(from).or_default().push((to, count));
    }
    let mut outermost: HashMap<u32, u64> = HashMap::new();
    let mut depth: HashMap<u32, usize> = HashMap::new();
    for (stack, count) in stacks.sorted() {
        *outermost.entry(stack[0]).or_default() += count;
        for (d, &f) in stack.iter().enumerate() {
            let min = depth.entry(f).or_insert(d);
            *min = (*min).min(d);
        }
    }
    let mut rows = stacks.flat();
    rows.sort_by(|a, b| {
        b.total_samples
            .cmp(&a.total_samples)
            .then(depth.get(&a.frame).cmp(&depth.get(&b.frame)))
            .then(b.self_samples.cmp(&a.self_samples))
            .then_with(|| stacks.frame(a.frame).cmp(stacks.frame(b.frame)))
    });
    let by_count = |list: Option<Vec<(u32, u64)>>| {
        let mut list = list.unwrap_or_default();
        list.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| stacks.frame(a.0).cmp(stacks.frame(b.0)))
        });
        list
    };
    rows.into_iter()
        .filter(|r| total > 0 && r.total_samples as f64 >= min_share * total as f64)
        .take(max)
        .map(|r| Entry {
            frame: r.frame,
            self_samples: r.self_samples,
            total_samples: r.total_samples,
            callers: by_count(callers.remove(&r.frame)),
            spontaneous: outermost.get(&r.frame).copied().unwrap_or(0),
            callees: by_count(callees.remove(&r.frame)),
        })
        .collect()
}

/// The call graph as text, gprof style.
pub fn render(stacks: &Stacks, entries: &[Entry]) -> String {
    let total = stacks.total().max(1) as f64;
    let index: HashMap<u32, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.frame, i + 1))
        .collect();
    let name = |f: u32| {
        let frame = stacks.frame(f);
        match index.get(&f) {
            Some(i) => format!("{} [{i}]", frame.name),
            None => frame.name.clone(),
        }
    };
    let mut out = format!(
        "{:<7} {:>7} {:>8} {:>8}  function\n",
        "index", "% total", "self", "total"
    );
    for (i, e) in entries.iter().enumerate() {
        for &(caller, count) in &e.callers {
            related(&mut out, count, &name(caller));
        }
        if e.spontaneous > 0 {
            related(&mut out, e.spontaneous, "<spontaneous>");
        }
        let _ = writeln!(
            out,
            "{:<7} {:>7.1} {:>8} {:>8}  {}",
            format!("[{}]", i + 1),
            100.0 * e.total_samples as f64 / total,
            e.self_samples,
            e.total_samples,
            name(e.frame)
        );
        for &(callee, count) in &e.callees {
            related(&mut out, count, &name(callee));
        }
        out.push_str(&"-".repeat(60));
        out.push('\n');
    }
    out
}

/// A caller or callee line: its sample count in the total column, the name indented.
fn related(out: &mut String, count: u64, name: &str) {
    let _ = writeln!(
        out,
        "{:<7} {:>7} {:>8} {:>8}      {name}",
        "", "", "", count
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::sampled::stacks::Frame;

    fn build(list: &[(&[&str], u64)]) -> Stacks {
        let mut s = Stacks::default();
        for (names, count) in list {
            let ids = names
                .iter()
                .map(|n| {
                    s.intern(Frame {
                        name: (*n).into(),
                        module: "p".into(),
                        kernel: false,
                        known: true,
                    })
                })
                .collect();
            s.add(ids, *count);
        }
        s
    }

    #[test]
    fn entries_list_callers_and_callees_with_samples() {
        let s = build(&[
            (&["main", "driver", "hot_a"], 70),
            (&["main", "driver", "hot_b"], 28),
            (&["main", "other", "hot_b"], 2),
        ]);
        let e = entries(&s, 0.01, 10);
        let name = |f: u32| s.frame(f).name.as_str();
        let named = |arcs: &[(u32, u64)]| -> Vec<(&str, u64)> {
            arcs.iter().map(|&(f, c)| (name(f), c)).collect()
        };
        assert_eq!(name(e[0].frame), "main");
        assert_eq!(e[0].spontaneous, 100);
        let driver = e
            .iter()
            .find(|x| name(x.frame) == "driver")
            .expect("driver");
        assert_eq!(driver.total_samples, 98);
        assert_eq!(named(&driver.callers), [("main", 98)]);
        assert_eq!(named(&driver.callees), [("hot_a", 70), ("hot_b", 28)]);
        let hot_b = e.iter().find(|x| name(x.frame) == "hot_b").expect("hot_b");
        assert_eq!(named(&hot_b.callers), [("driver", 28), ("other", 2)]);
        let text = render(&s, &e);
        assert!(text.contains("driver [2]"), "{text}");
        let chain = build(&[(&["root", "zeta", "alpha"], 5)]);
        let order: Vec<&str> = entries(&chain, 0.0, 10)
            .iter()
            .map(|e| chain.frame(e.frame).name.as_str())
            .collect();
        assert_eq!(
            order,
            ["root", "zeta", "alpha"],
            "equal totals read top-down"
        );
        assert!(text.contains("<spontaneous>"), "{text}");
    }

    #[test]
    fn threshold_and_limit_apply() {
        let s = build(&[(&["main", "a"], 99), (&["main", "b"], 1)]);
        assert_eq!(entries(&s, 0.05, 10).len(), 2);
        assert_eq!(entries(&s, 0.0, 1).len(), 1);
    }
}
