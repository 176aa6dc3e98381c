//! What `sysmeter run` shows of a launched command's path lookups, from the report of
//! [`super::lookup_trace`]: how many path-taking calls it made, their time and share of its
//! system time, how many failed, and the most looked-up paths. This file turns the report
//! into the metric rows, findings and `lookups` artifact of an
//! [`observe::lookups::LookupSummary`](crate::diagnose::observe::lookups::LookupSummary),
//! the one thing `run` receives; it is pure.

use super::lookup_trace::LookupReport;
use super::record::lookups::{paths as path_findings, paths_artifact};
use crate::diagnose::observe::lookups::{LookupRow, LookupSummary};
use crate::model::Finding;
use crate::model::Unit;
use crate::model::units::{count, duration_ns, percent};

/// The summary `run` stores: metric rows, findings and the paths artifact.
pub fn summarize(r: &LookupReport, system_ns: u64) -> LookupSummary {
    LookupSummary {
        rows: metric_rows(r, system_ns),
        findings: findings(r, system_ns),
        artifact: paths_artifact(&r.lookups),
    }
}

/// Totals over the calls: (calls, failed, time in ns).
fn totals(r: &LookupReport) -> (u64, u64, f64) {
    r.calls.iter().fold((0, 0, 0.0), |(n, f, t), (_, s)| {
        (n + s.count, f + s.error_count(), t + s.total_ns)
    })
}

/// The metric rows (name, unit, value, note) of a traced run.
fn metric_rows(r: &LookupReport, system_ns: u64) -> Vec<LookupRow> {
    let (n, failed, ns) = totals(r);
    let system = system_ns as f64;
    let mut rows = vec![
        (
            "path lookups",
            Unit::Count,
            n as f64,
            "path-taking system calls".to_string(),
        ),
        (
            "failed path lookups",
            Unit::Count,
            failed as f64,
            String::new(),
        ),
        (
            "path lookup time",
            Unit::Ns,
            ns,
            "entry to exit, summed".to_string(),
        ),
    ];
    if system > 0.0 {
        let note = "% of the system time under tracing (a lower bound)";
        rows.push((
            "path lookup share",
            Unit::Count,
            ns / system * 100.0,
            note.to_string(),
        ));
    }
    rows
}

/// `access 20.0k (20.0k failed), openat 3`.
fn call_list(r: &LookupReport) -> String {
    let list = r
        .calls
        .iter()
        .map(|(name, s)| match s.error_count() {
            0 => format!("{name} {}", count(s.count as f64)),
            f => format!(
                "{name} {} ({} failed)",
                count(s.count as f64),
                count(f as f64)
            ),
        })
        .collect::<Vec<_>>()
        .join(", ");
    if list.is_empty() { "none".into() } else { list }
}

/// "at least 27% of the program's system time (…)" (or why no share can be given), of
/// `system` ns measured under tracing: the tracing's own cost is in it (the calibrated
/// `added_ns` per traced call, and with `probed` the path probes' cost, which is not
/// measured), so the share is a lower bound. Subtracting the calibrated cost was tried and
/// dropped: on a loaded machine the calibration's noise, times 20 000 calls, gave shares
/// from 87% to 1540% for a program whose share is about 100%.
fn share_text(ns: f64, system: f64, (added_ns, probed): (f64, bool)) -> String {
    if system <= 0.0 {
        return "an unknown share of the program's system time (none was accounted)".into();
    }
    if ns > system {
        return format!(
            "more than the program's system time ({}: they include time blocked in the calls)",
            duration_ns(system)
        );
    }
    let share = percent(ns / system);
    let added = duration_ns(added_ns);
    match probed {
        true => format!(
            "at least {share} of the program's system time (measured under tracing, which adds \
             about {added} per call and the path probes' cost: --lookups calls leaves the \
             probes out)"
        ),
        false => format!(
            "at least {share} of the program's system time (measured under tracing, which adds \
             about {added} per call)"
        ),
    }
}

/// The findings about lookups.
fn findings(r: &LookupReport, system_ns: u64) -> Vec<Finding> {
    let (n, failed, ns) = totals(r);
    let how = (r.overhead.added_ns(), r.paths.is_ok());
    let lead = format!(
        "path lookups took {}",
        share_text(ns, system_ns as f64, how)
    );
    let mut v = vec![Finding::new(
        "lookups",
        format!(
            "{lead}: {} path-taking system calls in {}, {} of them failed: {}",
            count(n as f64),
            duration_ns(ns),
            count(failed as f64),
            call_list(r)
        ),
        Some(n as f64),
    )];
    match &r.paths {
        Ok(libc) => {
            v.extend(path_findings(&r.lookups, &lead));
            v.extend(unseen(r, n, libc));
        }
        Err(why) => v.push(Finding::new(
            "lookup_paths_unavailable",
            format!(
                "the looked-up paths are not shown: {why}; sysmeter trace --backend ptrace \
                 reads them"
            ),
            None,
        )),
    }
    v.extend(notes(r));
    v
}

/// A finding when the probes saw the paths of only some lookups.
fn unseen(r: &LookupReport, n: u64, libc: &str) -> Option<Finding> {
    let seen = r.lookups.total() + r.lookups.no_path;
    (seen < n).then(|| {
        Finding::new(
            "lookup_paths_incomplete",
            format!(
                "no path was seen for {} of the {} lookups: they did not go through the probed \
                 functions of {libc} (the dynamic loader's own opens, static programs, other C \
                 libraries, less common calls)",
                count((n - seen) as f64),
                count(n as f64)
            ),
            Some((n - seen) as f64),
        )
    })
}

fn notes(r: &LookupReport) -> Vec<Finding> {
    let mut v = Vec::new();
    if r.lost > 0 {
        v.push(Finding::new(
            crate::diagnose::observe::lookups::LOOKUPS_LOST,
            format!(
                "{} trace records were lost (a ring buffer was full): the lookup counts are low",
                count(r.lost as f64)
            ),
            Some(r.lost as f64),
        ));
    }
    for (i, note) in r.notes.iter().enumerate() {
        v.push(Finding::new(
            &format!("lookup_note{}", i + 1),
            note.clone(),
            None,
        ));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::observe::backend::Reason;
    use crate::diagnose::trace::Overhead;
    use crate::diagnose::trace::lookups::Lookups;
    use crate::diagnose::trace::summary::CallStats;

    fn report(paths: Result<String, Reason>) -> LookupReport {
        let access = CallStats {
            count: 20_000,
            errors: [(2, 19_000)].into_iter().collect(),
            total_ns: 30e6,
            ..CallStats::default()
        };
        let openat = CallStats {
            count: 3,
            total_ns: 1e3,
            ..CallStats::default()
        };
        let mut lookups = Lookups::default();
        for _ in 0..1000 {
            lookups.record(b"/p0/cmd", Some(2));
        }
        LookupReport {
            calls: vec![("access".into(), access), ("openat".into(), openat)],
            lookups,
            paths,
            lost: 0,
            overhead: Overhead {
                untraced_ns: 100.0,
                traced_ns: 300.0,
                interval_ns: 150.0,
                calls: 1,
            },
            notes: Vec::new(),
        }
    }

    #[test]
    fn traced_lookups_give_time_share_failures_and_paths() {
        let l = report(Ok("/lib/libc.so.6".into()));
        let rows = metric_rows(&l, 100_000_000);
        let share = rows
            .iter()
            .find(|r| r.0 == "path lookup share")
            .expect("share")
            .2;
        assert!((share - 30.001).abs() < 1e-6, "{share}");
        let f = findings(&l, 100_000_000);
        assert_eq!(f[0].value, Some(20_003.0));
        let lead = "path lookups took at least 30% of the program's system time (measured under \
                    tracing, which adds about 200 ns per call and the path probes' cost";
        assert!(f[0].text.starts_with(lead), "{}", f[0].text);
        assert!(
            f[0].text.contains("access 20.0k (19.0k failed), openat 3"),
            "{}",
            f[0].text
        );
        let top = f.iter().find(|f| f.key == "top_lookup").expect("top path");
        assert!(
            top.text.contains("/p0/cmd was looked up 1000 times"),
            "{}",
            top.text
        );
        let unseen = f
            .iter()
            .find(|f| f.key == "lookup_paths_incomplete")
            .expect("unseen");
        assert_eq!(unseen.value, Some(19_003.0));
        let artifact = summarize(&l, 100_000_000).artifact;
        assert!(artifact.is_some_and(|a| a.content.contains("1000\t1000\t/p0/cmd")));
    }

    #[test]
    fn missing_paths_or_tracing_are_said_in_one_line() {
        let l = report(Err(Reason("it needs root".into())));
        let f = findings(&l, 100_000_000);
        assert!(f[0].text.starts_with("path lookups took at least 30% of"));
        assert!(!f[0].text.contains("probes"), "{}", f[0].text);
        let f = findings(&l, 0);
        assert!(f[0].text.contains("unknown share"), "{}", f[0].text);
        let why = f
            .iter()
            .find(|f| f.key == "lookup_paths_unavailable")
            .expect("why");
        assert!(why.text.contains("it needs root") && !why.text.contains('\n'));
        assert!(f.iter().all(|f| f.key != "top_lookup"));
    }
}
