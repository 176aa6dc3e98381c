//! The view of one window as `model::live::LiveView`: the seconds, each thread's share of
//! them on a CPU, waiting for one and blocked, the flame graph as a tree (paths under
//! [`FLAME_MIN_SHARE`] of the window folded into their caller, so its size is bounded
//! whatever the program does), the top functions and the system calls. Every name from the
//! program passes `model::live::shown`.
//!
//! Depends on [`super::window`] and `model::live`.

use std::collections::HashMap;

use super::window::{Second, Window};
use crate::diagnose::observe::sampled::stacks::Stacks;
use crate::model::live::{
    CountRow, FlameNode, FunctionRow, LiveView, SecondRow, Split, ThreadRow, shown,
};

/// Paths of the flame graph with fewer samples than this share of the window are left out.
pub const FLAME_MIN_SHARE: f64 = 0.002;

/// Rows of the top functions and of the system calls.
const TOP_ROWS: usize = 20;

/// The view of the last `span` seconds of `w` (`None`: since the start; the per-second
/// rows then cover every second kept).
pub fn build(w: &Window, span: Option<u64>) -> LiveView {
    let seconds: Vec<&Second> = w.last(span).collect();
    let analysis = w.analysis(span);
    let samples_window = analysis.stacks.total();
    LiveView {
        window_s: span,
        samples_total: w.samples_total,
        samples_window,
        lost: w.lost,
        seconds: seconds.iter().map(|s| second_row(s)).collect(),
        threads: threads(w, &seconds),
        split: split(&seconds),
        flame: flame(&analysis.stacks),
        top: top(&analysis.stacks),
        syscalls: syscalls(&seconds),
        ..LiveView::default()
    }
}

fn second_row(s: &Second) -> SecondRow {
    SecondRow {
        t: s.t,
        samples: s.samples(),
        syscalls: s.syscalls_counted.then(|| s.syscalls.values().sum::<u64>()),
        own_cpu: s.own_cpu_ns as f64 / s.length_ns.max(1) as f64,
    }
}

/// Each thread seen in `seconds`, busiest first.
fn threads(w: &Window, seconds: &[&Second]) -> Vec<ThreadRow> {
    let mut rows: HashMap<i32, ThreadRow> = HashMap::new();
    let wall: f64 = seconds.iter().map(|s| s.length_ns as f64).sum();
    for (i, s) in seconds.iter().enumerate() {
        let length = s.length_ns.max(1) as f64;
        for t in &s.threads {
            let row = rows.entry(t.tid).or_insert_with(|| ThreadRow {
                tid: t.tid,
                name: shown(w.names.get(&t.tid).map_or("", String::as_str)),
                cpu: vec![0.0; seconds.len()],
                runq: vec![0.0; seconds.len()],
                ..ThreadRow::default()
            });
            row.cpu[i] = (t.cpu_ns as f64 / length).min(1.0);
            row.runq[i] = (t.runq_ns as f64 / length).min(1.0);
            row.cpu_share += t.cpu_ns as f64 / wall.max(1.0);
            row.runq_share += t.runq_ns as f64 / wall.max(1.0);
        }
    }
    let mut rows: Vec<ThreadRow> = rows.into_values().collect();
    for r in &mut rows {
        r.cpu_share = r.cpu_share.min(1.0);
        r.runq_share = r.runq_share.min(1.0 - r.cpu_share);
        r.blocked_share = (1.0 - r.cpu_share - r.runq_share).max(0.0);
    }
    rows.sort_by(|a, b| b.cpu_share.total_cmp(&a.cpu_share).then(a.tid.cmp(&b.tid)));
    rows
}

/// Thread-seconds on a CPU, waiting for one, and blocked (a thread's time in a second it
/// was seen in, less the first two).
fn split(seconds: &[&Second]) -> Split {
    let mut out = Split::default();
    for s in seconds {
        for t in &s.threads {
            let on = t.cpu_ns.min(s.length_ns);
            let runq = t.runq_ns.min(s.length_ns - on);
            out.on_cpu_s += on as f64 / 1e9;
            out.runq_s += runq as f64 / 1e9;
            out.blocked_s += (s.length_ns - on - runq) as f64 / 1e9;
        }
    }
    out
}

/// The flame graph of `stacks` as a tree of callees, most samples first.
pub fn flame(stacks: &Stacks) -> FlameNode {
    let total = stacks.total();
    let min = (total as f64 * FLAME_MIN_SHARE).ceil() as u64;
    let mut root = Tree::default();
    for (stack, count) in stacks.counts() {
        let mut node = &mut root;
        node.value += count;
        for &id in stack {
            node = node.children.entry(id).or_default();
            node.value += count;
        }
    }
    root.node("all".into(), stacks, min.max(1))
}

#[derive(Default)]
struct Tree {
    value: u64,
    children: HashMap<u32, Tree>,
}

impl Tree {
    fn node(self, name: String, stacks: &Stacks, min: u64) -> FlameNode {
        let mut c: Vec<FlameNode> = self
            .children
            .into_iter()
            .filter(|(_, t)| t.value >= min)
            .map(|(id, t)| t.node(shown(&stacks.frame(id).folded_name()), stacks, min))
            .collect();
        c.sort_by(|a, b| b.v.cmp(&a.v).then_with(|| a.n.cmp(&b.n)));
        FlameNode {
            n: name,
            v: self.value,
            c,
        }
    }
}

fn top(stacks: &Stacks) -> Vec<FunctionRow> {
    stacks
        .flat()
        .into_iter()
        .take(TOP_ROWS)
        .map(|row| {
            let f = stacks.frame(row.frame);
            FunctionRow {
                function: shown(&f.name),
                module: shown(&f.module),
                self_samples: row.self_samples,
                total_samples: row.total_samples,
            }
        })
        .collect()
}

fn syscalls(seconds: &[&Second]) -> Vec<CountRow> {
    let mut counts: HashMap<&str, u64> = HashMap::new();
    for s in seconds {
        for (name, &n) in &s.syscalls {
            *counts.entry(name).or_default() += n;
        }
    }
    let mut rows: Vec<CountRow> = counts
        .into_iter()
        .map(|(name, count)| CountRow {
            name: shown(name),
            count,
        })
        .collect();
    rows.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.name.cmp(&b.name)));
    rows.truncate(TOP_ROWS);
    rows
}

#[cfg(test)]
mod tests {
    use super::super::window::ThreadTick;
    use super::*;
    use crate::diagnose::observe::sampled::aggregate::Analysis;
    use crate::diagnose::observe::sampled::stacks::Frame;

    fn analysis(stacks: &[(&[&str], u64)]) -> Analysis {
        let mut s = Stacks::default();
        for (names, count) in stacks {
            let ids = names
                .iter()
                .map(|n| {
                    s.intern(Frame {
                        name: n.to_string(),
                        module: "m".into(),
                        kernel: false,
                        known: true,
                    })
                })
                .collect();
            s.add(ids, *count);
        }
        Analysis {
            stacks: s,
            ..Analysis::default()
        }
    }

    #[test]
    fn the_view_holds_the_hot_path_threads_and_split_of_its_window() {
        let mut w = Window::default();
        w.names.insert(7, "work\u{1b}er".into());
        let second = |t| Second {
            t,
            length_ns: 1_000_000_000,
            threads: vec![ThreadTick {
                tid: 7,
                cpu_ns: 750_000_000,
                runq_ns: 50_000_000,
            }],
            ..Second::default()
        };
        w.push(
            &analysis(&[(&["main", "hot"], 99), (&["main", "cold"], 1)]),
            second(1),
        );
        w.push(&analysis(&[(&["main", "hot"], 100)]), second(2));
        let v = build(&w, Some(10));
        assert_eq!((v.samples_window, v.seconds.len()), (200, 2));
        assert_eq!(v.flame.v, 200);
        assert_eq!(v.flame.c[0].n, "main");
        assert_eq!(v.flame.c[0].c[0].n, "hot");
        assert_eq!(v.top[0].function, "hot");
        assert_eq!(v.threads[0].name, "work\\u001ber", "escaped");
        assert!((v.threads[0].cpu_share - 0.75).abs() < 1e-9);
        assert!((v.threads[0].blocked_share - 0.2).abs() < 1e-9);
        assert!((v.split.on_cpu_s - 1.5).abs() < 1e-9);
        assert_eq!(build(&w, Some(1)).samples_window, 100);
    }
}
