//! Prices the calls of a `calls` or `trace` result with this machine's own measured costs:
//! each function or system call is mapped to one metric of a stored bench run ([`MAPPING`]:
//! `time` → `cpu.timer` "time()", `malloc` → half of `cpu.ops` "malloc+free 64 B",
//! `read` → `os.syscall` "read 1 B /dev/zero", `clone` → `os.task` …; any other system call
//! → `os.syscall` "null (getppid)", a lower bound). Each priced metric's note gains
//! `cost here: …`, and a `priced` finding says what the calls cost in all, as a share of
//! the program's CPU time when known, and what removing or caching the top one would save
//! at most. Without a bench run, the finding names the `bench --only …` that would price
//! them. The unit price is the bench metric's median.
//!
//! Pure: depends on `model` only.

use crate::model::call_note;
use crate::model::{ExperimentResult, Finding, RunRecord, units};

/// Which result this applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Library functions (`calls`).
    Library,
    /// System calls (`trace`).
    Syscall,
}

/// `(kind, names, bench experiment, bench metric, share of the metric one call costs)`.
pub const MAPPING: &[(Kind, &[&str], &str, &str, f64)] = &[
    (Kind::Library, &["time"], "cpu.timer", "time()", 1.0),
    (
        Kind::Library,
        &["gettimeofday"],
        "cpu.timer",
        "gettimeofday",
        1.0,
    ),
    (
        Kind::Library,
        &["clock_gettime"],
        "cpu.timer",
        "clock_gettime(CLOCK_MONOTONIC)",
        1.0,
    ),
    (
        Kind::Library,
        &["malloc", "calloc", "realloc", "free"],
        "cpu.ops",
        "malloc+free 64 B",
        0.5,
    ),
    (
        Kind::Library,
        &["strlen", "strnlen"],
        "cpu.ops",
        "strlen 64 B",
        1.0,
    ),
    (
        Kind::Library,
        &["memcpy", "memmove", "memset"],
        "cpu.ops",
        "memcpy 64 B",
        1.0,
    ),
    (
        Kind::Library,
        &[
            "pthread_mutex_lock",
            "pthread_mutex_unlock",
            "pthread_mutex_trylock",
        ],
        "cpu.ops",
        "mutex lock+unlock (uncontended)",
        0.5,
    ),
    (
        Kind::Syscall,
        &["read", "pread64", "readv"],
        "os.syscall",
        "read 1 B /dev/zero",
        1.0,
    ),
    (
        Kind::Syscall,
        &["write", "pwrite64", "writev"],
        "os.syscall",
        "write 1 B /dev/null",
        1.0,
    ),
    (
        Kind::Syscall,
        &[
            "stat",
            "lstat",
            "newfstatat",
            "statx",
            "access",
            "faccessat",
        ],
        "os.syscall",
        "stat (cached file)",
        1.0,
    ),
    (Kind::Syscall, &["fstat"], "os.syscall", "fstat", 1.0),
    (
        Kind::Syscall,
        &["open", "openat", "close"],
        "os.syscall",
        "open+close /dev/null",
        0.5,
    ),
    (
        Kind::Syscall,
        &["clone", "clone3"],
        "os.task",
        "thread create+join",
        1.0,
    ),
    (
        Kind::Syscall,
        &["fork", "vfork"],
        "os.task",
        "fork+exit+wait",
        1.0,
    ),
    (
        Kind::Syscall,
        &["execve"],
        "os.task",
        "fork+exec /bin/true + wait",
        1.0,
    ),
    (
        Kind::Syscall,
        &["fsync"],
        "fs.write",
        "4 KiB write + fsync",
        1.0,
    ),
    (
        Kind::Syscall,
        &["fdatasync"],
        "fs.write",
        "4 KiB write + fdatasync",
        1.0,
    ),
];

/// The mapping of `name`: `(experiment, metric, share)`; system calls not listed fall back
/// to the null system call.
pub fn mapping(kind: Kind, name: &str) -> Option<(&'static str, &'static str, f64)> {
    MAPPING
        .iter()
        .find(|(k, names, ..)| *k == kind && names.contains(&name))
        .map(|&(_, _, e, m, s)| (e, m, s))
        .or((kind == Kind::Syscall).then_some(("os.syscall", "null (getppid)", 1.0)))
}

/// The unit price of `name` from `bench`: `(ns per call, "experiment metric")`.
pub fn unit_price(bench: &RunRecord, kind: Kind, name: &str) -> Option<(f64, String)> {
    let (exp, metric, share) = mapping(kind, name)?;
    let r = bench.results.iter().find(|r| r.id == exp)?;
    let m = r.metrics.iter().find(|m| m.name == metric)?;
    (m.summary.n > 0).then(|| (m.summary.median * share, format!("{exp} \"{metric}\"")))
}

/// One priced call: name, count, ns each, ns in all, the metric used.
struct Priced {
    name: String,
    count: f64,
    each: f64,
    total: f64,
    source: String,
}

/// Adds `cost here` to the notes of `result`'s metrics and the `priced` finding, from
/// `bench` (the latest bench run of this host, if any); `cpu_ns` is the program's CPU time.
pub fn price(
    result: &mut ExperimentResult,
    kind: Kind,
    bench: Option<&RunRecord>,
    cpu_ns: Option<f64>,
) {
    let Some(bench) = bench else {
        result
            .findings
            .push(Finding::new("priced", no_bench(result, kind), None));
        return;
    };
    let mut priced = Vec::new();
    for m in &mut result.metrics {
        let Some((each, source)) = unit_price(bench, kind, &m.name) else {
            continue;
        };
        let count = m.summary.n as f64;
        let texts = (
            units::count(count),
            units::duration_ns(each),
            units::duration_ns(each * count),
        );
        call_note::add_cost(m, (&texts.0, &texts.1, &texts.2), &source);
        priced.push(Priced {
            name: m.name.clone(),
            count,
            each,
            total: each * count,
            source,
        });
    }
    if kind == Kind::Library {
        result.findings.extend(agreement(&result.metrics, &priced));
    }
    let text = finding_text(&priced, &bench.id, cpu_ns);
    let total = priced.iter().map(|p| p.total).sum();
    result
        .findings
        .push(Finding::new("priced", text, Some(total)));
}

/// Whether each priced call's measured time and the bench's price agree: a time below
/// resolution agrees when the price lies under its bound; a time agrees within a factor of
/// 3 (the bench times the call alone in a tight loop, the program in its own context). One
/// finding per run, naming the functions that disagree and which number to trust.
fn agreement(metrics: &[crate::model::Metric], priced: &[Priced]) -> Option<Finding> {
    let mut agree = Vec::new();
    let mut differ = Vec::new();
    for p in priced {
        let Some(m) = metrics.iter().find(|m| m.name == p.name) else {
            continue;
        };
        let note = call_note::CallNote::of(m);
        if note.untimed {
            continue;
        }
        let measured = m.summary.median;
        let ok = match note.below_resolution {
            Some(_) => p.each <= measured,
            None => measured > 0.0 && p.each / measured <= 3.0 && measured / p.each <= 3.0,
        };
        let text = format!(
            "{} {} measured vs {} priced",
            p.name,
            note.median_cell(measured),
            units::duration_ns(p.each)
        );
        if ok {
            agree.push(text)
        } else {
            differ.push(text)
        }
    }
    if agree.is_empty() && differ.is_empty() {
        return None;
    }
    let text = if differ.is_empty() {
        format!(
            "The measured times and the bench's prices agree: {}.",
            agree.join("; ")
        )
    } else {
        format!(
            "The measured times and the bench's prices disagree for {}: trust the bench for \
             what the call costs alone (a tight loop, no hook) and the measured time for what \
             it cost in this program (its sizes, cache state and contention).",
            differ.join("; ")
        )
    };
    Some(Finding::new(
        "price_vs_measured",
        text,
        Some(differ.len() as f64),
    ))
}

fn finding_text(priced: &[Priced], bench_id: &str, cpu_ns: Option<f64>) -> String {
    let Some(top) = priced.iter().max_by(|a, b| a.total.total_cmp(&b.total)) else {
        return format!(
            "None of these calls has a price in bench run {bench_id} (docs/calls.md lists the mapping)."
        );
    };
    let share = |ns: f64| match cpu_ns.filter(|c| *c > 0.0) {
        Some(cpu) => format!(", {} of the program's CPU time", units::percent(ns / cpu)),
        None => String::new(),
    };
    let all: f64 = priced.iter().map(|p| p.total).sum();
    format!(
        "Priced with this machine's bench run {bench_id}: these calls cost about {} here{}. \
         {} was called {} times ({} each on this machine by {}: {}{}) — removing or \
         caching it would save at most that.",
        units::duration_ns(all),
        share(all),
        top.name,
        units::count(top.count),
        units::duration_ns(top.each),
        top.source,
        units::duration_ns(top.total),
        share(top.total),
    )
}

fn no_bench(result: &ExperimentResult, kind: Kind) -> String {
    let mut groups: Vec<&str> = result
        .metrics
        .iter()
        .filter_map(|m| mapping(kind, &m.name).map(|(e, ..)| e))
        .collect();
    groups.sort_unstable();
    groups.dedup();
    if groups.is_empty() {
        return "No bench run of this host is stored, and none of these calls has a price \
                (docs/calls.md lists the mapping)."
            .into();
    }
    format!(
        "No bench run of this host is stored, so the calls are not priced: run \
         `sysmeter bench --only {}` once, and the next run gives each call its cost here.",
        groups.join(",")
    )
}

#[cfg(test)]
mod tests;
