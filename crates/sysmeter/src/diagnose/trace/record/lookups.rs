//! The path-lookup part of a trace, in the spirit of the 4.2BSD `namei` measurement: how
//! many path-taking calls (strace's `%file` class) the program made, their time and share
//! of the traced system-call time, how many failed, and — with ptrace, which reads the path
//! arguments — the most looked-up paths with their failures. The tracepoint backend sees
//! call numbers only and says so. Findings plus a `lookups` text artifact (top paths).

use super::super::classes;
use super::super::lookups::{Lookups, PathStats};
use super::super::run::Outcome;
use super::super::summary::CallStats;
use super::super::{Backend, errno};
use crate::model::units::{count, duration_ns, percent};
use crate::model::{Artifact, Finding};

/// Paths named in the finding; the artifact lists [`ARTIFACT_PATHS`].
const FINDING_PATHS: usize = 5;
const ARTIFACT_PATHS: usize = 50;

/// `1 234×` with the failures: `1 234× (1 200 failed: ENOENT×1 200)`.
fn path_line(path: &str, s: &PathStats) -> String {
    let failed = s.failed();
    if failed == 0 {
        return format!("{path} {}×", count(s.count as f64));
    }
    let why = s
        .errors
        .iter()
        .map(|(&e, &n)| format!("{}×{}", errno::name(e), count(n as f64)))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{path} {}× ({} failed: {why})",
        count(s.count as f64),
        count(failed as f64)
    )
}

/// The findings about lookups (none when the program made no path-taking call).
pub(super) fn findings(out: &Outcome, calls: &[(String, &CallStats)]) -> Vec<Finding> {
    let file = classes::members("file").unwrap_or_default();
    let all_ns: f64 = calls.iter().map(|(_, s)| s.total_ns).sum();
    let mine: Vec<&(String, &CallStats)> = calls
        .iter()
        .filter(|(n, _)| file.contains(&n.as_str()))
        .collect();
    let n: u64 = mine.iter().map(|(_, s)| s.count).sum();
    if n == 0 {
        return Vec::new();
    }
    let ns: f64 = mine.iter().map(|(_, s)| s.total_ns).sum();
    let failed: u64 = mine.iter().map(|(_, s)| s.error_count()).sum();
    let share = if all_ns > 0.0 { ns / all_ns } else { 0.0 };
    let mut by_count: Vec<_> = mine.iter().map(|(n, s)| (n.as_str(), s.count)).collect();
    by_count.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let list = by_count
        .iter()
        .map(|(n, c)| format!("{n} {}", count(*c as f64)))
        .collect::<Vec<_>>()
        .join(", ");
    let mut v = vec![Finding::new(
        "lookups",
        format!(
            "path lookups took {} of system-call time: {} path-taking calls ({list}) in {}, {} \
             of them failed",
            percent(share),
            count(n as f64),
            duration_ns(ns),
            count(failed as f64)
        ),
        Some(share),
    )];
    match out.backend {
        Backend::Ptrace => {
            let lead = format!("path lookups took {} of system-call time", percent(share));
            v.extend(paths(&out.collector.lookups, &lead));
        }
        Backend::Tracepoint => v.push(Finding::new(
            "lookup_paths_unavailable",
            "the looked-up paths are not shown: the tracepoint backend records call numbers and \
             return values, not path strings (a syscall tracepoint holds only the pointer, and \
             the program's memory has moved on when the records are read); rerun with \
             --backend ptrace to see which paths were looked up"
                .into(),
            None,
        )),
        Backend::Bpf => v.push(Finding::new(
            "lookup_paths_unavailable",
            "the looked-up paths are not shown: the in-kernel backend keeps counts per call, \
             not path strings; rerun with --backend ptrace to see which paths were looked up"
                .into(),
            None,
        )),
    }
    v
}

/// The findings about the paths: the most looked-up one (after `lead`, e.g. "path lookups
/// took 27% of system-call time"), the top [`FINDING_PATHS`], and what could not be read.
pub(in crate::diagnose) fn paths(l: &Lookups, lead: &str) -> Vec<Finding> {
    let top = l.top(FINDING_PATHS);
    let Some((path, s)) = top.first() else {
        return Vec::new();
    };
    let failing = match s.failed() {
        0 => String::new(),
        f => format!(", {} of them failing ({})", count(f as f64), fails(s)),
    };
    let mut v = vec![Finding::new(
        "top_lookup",
        format!(
            "{lead}; {path} was looked up {} times{failing}",
            count(s.count as f64)
        ),
        Some(s.count as f64),
    )];
    v.push(Finding::new(
        "top_lookup_paths",
        format!(
            "most looked-up paths ({} lookups of {} distinct paths): {}",
            count(l.total() as f64),
            count(l.distinct() as f64),
            top.iter()
                .map(|(p, s)| path_line(p, s))
                .collect::<Vec<_>>()
                .join("; ")
        ),
        Some(l.distinct() as f64),
    ));
    if l.unreadable + l.untracked > 0 {
        v.push(Finding::new(
            "lookup_paths_incomplete",
            format!(
                "{} path arguments could not be read from the program's memory and {} lookups \
                 of paths beyond the first {} distinct ones were counted without their path",
                l.unreadable,
                l.untracked,
                super::super::lookups::MAX_PATHS
            ),
            None,
        ));
    }
    v
}

fn fails(s: &PathStats) -> String {
    s.errors
        .iter()
        .map(|(&e, _)| errno::name(e).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `lookups` artifact: the most looked-up paths, one per line (ptrace only).
pub(super) fn artifact(out: &Outcome) -> Option<Artifact> {
    match out.backend {
        Backend::Ptrace => paths_artifact(&out.collector.lookups),
        Backend::Tracepoint | Backend::Bpf => None,
    }
}

/// The `lookups` artifact of a tally: the most looked-up paths, one per line; `None` when no
/// path was seen.
pub(in crate::diagnose) fn paths_artifact(l: &Lookups) -> Option<Artifact> {
    if l.distinct() == 0 {
        return None;
    }
    let mut text = String::from("lookups\tfailed\tpath\n");
    for (p, s) in l.top(ARTIFACT_PATHS) {
        text.push_str(&format!("{}\t{}\t{p}\n", s.count, s.failed()));
    }
    Some(Artifact {
        name: "lookups".into(),
        media_type: "text/tab-separated-values".into(),
        content: text,
    })
}
