//! Where each figure of "this machine at a glance" comes from: a fixed table of (group,
//! label, experiment, metric-name pattern), the cache levels from `mem.latency`'s hierarchy
//! findings, and a fixed ranking of the findings people ask about first.
//!
//! Pure: reads a [`RunRecord`]; values are formatted with [`crate::model::units`].

use crate::model::units::{size, value};
use crate::model::{ExperimentResult, Metric, RunRecord, Status, Unit};

/// One quoted figure: which experiment, and the metric whose name starts with `prefix` and
/// ends with `suffix` (the last such metric when `last`, e.g. the largest file).
struct Figure {
    group: &'static str,
    label: &'static str,
    exp: &'static str,
    prefix: &'static str,
    suffix: &'static str,
    last: bool,
}

const fn fig(
    group: &'static str,
    label: &'static str,
    exp: &'static str,
    prefix: &'static str,
) -> Figure {
    Figure {
        group,
        label,
        exp,
        prefix,
        suffix: "",
        last: false,
    }
}

/// The figures people quote, in display order (the cache levels are inserted in `memory`).
const FIGURES: &[Figure] = &[
    fig("os", "null syscall", "os.syscall", "null ("),
    fig("os", "context switch", "os.ctxsw", "process context switch"),
    fig("os", "thread create", "os.task", "thread create+join"),
    fig("os", "process create", "os.task", "fork+exit+wait"),
    Figure {
        suffix: " 1 thread",
        ..fig(
            "memory",
            "DRAM read, 1 thread",
            "mem.bandwidth",
            "read, DRAM",
        )
    },
    Figure {
        suffix: " threads",
        last: true,
        ..fig(
            "memory",
            "DRAM read, N threads",
            "mem.bandwidth",
            "read, DRAM",
        )
    },
    fig(
        "memory",
        "page fault",
        "mem.pagefault",
        "minor fault, 4 KiB",
    ),
    fig(
        "ipc",
        "pipe round trip",
        "ipc.pipe",
        "round trip 1 B, same CPU",
    ),
    fig(
        "ipc",
        "pipe bandwidth",
        "ipc.pipe",
        "bandwidth, reader same CPU",
    ),
    fig(
        "ipc",
        "TCP round trip",
        "ipc.tcp",
        "round trip 1 B, same CPU",
    ),
    fig(
        "ipc",
        "TCP bandwidth",
        "ipc.tcp",
        "bandwidth, reader same CPU",
    ),
    fig("ipc", "TCP connect", "ipc.tcp", "connect+accept"),
    Figure {
        last: true,
        ..fig(
            "storage",
            "uncached 4 KiB read",
            "fs.read",
            "uncached random 4 KiB read",
        )
    },
    Figure {
        last: true,
        ..fig(
            "storage",
            "cached 4 KiB read",
            "fs.read",
            "cached random 4 KiB read",
        )
    },
    fig(
        "storage",
        "4 KiB write + fsync",
        "fs.write",
        "4 KiB write + fsync",
    ),
];

/// The groups, in display order.
pub const GROUPS: [&str; 4] = ["os", "memory", "ipc", "storage"];

/// What each group's figures are about, one line (the HTML grid's note under its name).
pub fn note(group: &str) -> &'static str {
    match group {
        "os" => "entering the kernel, creating processes and threads, switching between them",
        "memory" => "latency per cache level and DRAM, bandwidth, a page fault",
        "ipc" => "round trips, bandwidth and connections between processes on this machine",
        "storage" => "reads from the disk and the file cache, a synchronous write",
        _ => "",
    }
}

/// The findings quoted first, best first: (experiment, finding key). A run without them
/// falls back to each measured experiment's first finding.
const TOP_FINDINGS: &[(&str, &str)] = &[
    ("os.syscall", "syscall_vs_call"),
    ("fs.read", "uncached_vs_cached"),
    ("os.task", "process_vs_thread_creation"),
    ("mem.latency", "tlb.miss_cost_ns"),
    ("fs.write", "small_sync_write"),
    ("os.ctxsw", "cross_vs_same_cpu"),
    ("fs.contention", "knee"),
    ("cpu.ops", "branch_mispredict_penalty"),
];

/// Where finding `key` of experiment `exp` stands among the findings quoted first (0 best),
/// `None` when it is not one of them.
pub fn top_rank(exp: &str, key: &str) -> Option<usize> {
    TOP_FINDINGS.iter().position(|&(e, k)| e == exp && k == key)
}

/// Cache levels in the order the hierarchy names them.
const LEVELS: [&str; 4] = ["L1", "L2", "L3", "DRAM"];

fn measured<'a>(run: &'a RunRecord, id: &str) -> Option<&'a ExperimentResult> {
    run.results
        .iter()
        .find(|r| r.id == id && r.status == Status::Ok)
}

/// A metric's value for people, or why it has none.
pub fn shown(m: &Metric) -> String {
    match m.degenerate {
        Some(_) => crate::report::format::NOT_A_RESULT.to_string(),
        None => m.shown(m.figure()),
    }
}

/// `(label, value)` of every figure of `group` that the run measured.
pub fn figures(run: &RunRecord, group: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if group == "memory" {
        out.extend(measured(run, "mem.latency").map(levels).unwrap_or_default());
    }
    for f in FIGURES.iter().filter(|f| f.group == group) {
        let Some(r) = measured(run, f.exp) else {
            continue;
        };
        let mut hits = r
            .metrics
            .iter()
            .filter(|m| m.name.starts_with(f.prefix) && m.name.ends_with(f.suffix));
        let hit = if f.last {
            hits.next_back()
        } else {
            hits.next()
        };
        if let Some(m) = hit {
            // "N threads": the count comes from the metric's own name.
            let label = match m.name.rsplit(", ").next() {
                Some(tail) if f.label.ends_with("N threads") => f.label.replace("N threads", tail),
                _ => f.label.to_string(),
            };
            out.push((label, shown(m)));
        }
    }
    out
}

/// The detected cache levels of a `mem.latency` result: `("L1", "1.09 ns ≤ 32 KiB")`, …,
/// `("DRAM", "93.1 ns")`; a level the curve did not show is left out.
pub fn levels(r: &ExperimentResult) -> Vec<(String, String)> {
    let found = |key: String| {
        r.findings
            .iter()
            .find(|f| f.key == key)
            .and_then(|f| f.value)
    };
    LEVELS
        .iter()
        .filter_map(|&level| {
            let ns = found(format!("hierarchy.{level}.latency_ns")).or_else(|| {
                let m = r
                    .metrics
                    .iter()
                    .find(|m| m.name == format!("{level} latency"))?;
                m.degenerate.is_none().then_some(m.figure())
            })?;
            let lo = found(format!("hierarchy.{level}.end_lo_bytes"));
            let hi = found(format!("hierarchy.{level}.end_hi_bytes"));
            let reach = match (lo, hi) {
                (Some(lo), Some(hi)) if hi > lo * 1.25 => {
                    format!(" ≤ {}–{}", size(lo as u64), size(hi as u64))
                }
                (Some(lo), _) => format!(" ≤ {}", size(lo as u64)),
                _ => String::new(),
            };
            Some((level.to_string(), format!("{}{reach}", value(ns, Unit::Ns))))
        })
        .collect()
}

/// The `n` findings quoted first (see [`TOP_FINDINGS`]).
pub fn top_findings(run: &RunRecord, n: usize) -> Vec<String> {
    let ranked = TOP_FINDINGS.iter().filter_map(|(exp, key)| {
        let r = measured(run, exp)?;
        r.findings.iter().find(|f| f.key == *key)
    });
    let fallback = run
        .results
        .iter()
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| r.findings.iter().find(|f| !f.key.starts_with("machine.")));
    let mut out: Vec<String> = Vec::new();
    for f in ranked.chain(fallback) {
        if out.len() == n {
            break;
        }
        if !out.contains(&f.text) {
            out.push(f.text.clone());
        }
    }
    out
}
