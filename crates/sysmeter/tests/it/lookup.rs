//! Path-name lookup: `bench --only os.lookup` (the depth series and its fit, the miss as
//! root or its stated skip) and the lookups `trace` reports for a fixture that searches a
//! fake 20-directory `PATH` 1 000 times (tests/fixtures/programs/lookup_path.c), checked
//! against `strace -c -e trace=%file` on counts; the lookups `run` traces for the same
//! fixture (counts, time, share, failures, and the top path, compared with `trace`'s); and
//! the dentry cache in `run`'s timeline.
//! Capabilities: `cc`, `strace`, `root` (the miss, run's path probes), `tracepoints`.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::support::needs::tracepoints;
use crate::support::observing::{Event, Observing, observing};
use crate::support::skip::{Cap, Missing};
use crate::support::{
    assert_says, bench_json, compile_fixture, finding, is_root, median, need, not_a_result,
};
use crate::support::{result, skip};
use crate::trace::{calls_of, trace_json};

#[test]
fn bench_os_lookup_fits_a_positive_cost_per_component() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let run = bench_json(&["--only", "os.lookup"]);
    let r = result(&run, "os.lookup");
    assert_eq!(r["status"], "ok", "{r}");
    let series = &r["series"][0];
    assert_eq!(series["name"], "stat by path depth");
    let xs: Vec<f64> = series["points"]
        .as_array()
        .expect("points")
        .iter()
        .filter_map(|p| p["x"].as_f64())
        .collect();
    assert_eq!(xs, [1.0, 2.0, 4.0, 8.0, 16.0, 32.0]);
    let d1 = median(r, "stat, 1 component").expect("depth 1");
    let d32 = median(r, "stat, 32 components").expect("depth 32");
    assert!(
        d32 > d1,
        "32 components ({d32} ns) not dearer than 1 ({d1} ns)"
    );
    let per = finding(r, "cost_per_component").expect("the fit")["value"]
        .as_f64()
        .expect("a");
    assert!(per > 0.0, "cost per component {per}");
    assert!(
        finding(r, "component_fit_nrms")
            .and_then(|f| f["value"].as_f64())
            .is_some_and(|v| v >= 0.0)
    );
    assert!(finding(r, "component_fit_intercept").is_some());
    for key in [
        "negative_vs_positive",
        "path_search",
        "cost_per_symlink",
        "relative_vs_absolute",
    ] {
        assert!(finding(r, key).is_some(), "{key} missing: {r}");
    }
    miss_or_stated_skip(r);
}

const MISS_NAME: &str = "dentry-cache miss: stat, 8 components";
const HIT_NAME: &str = "dentry-cache hit: stat, 8 components (same pass)";

/// As root the miss is measured, verified and dearer than the hit; elsewhere a finding says
/// why it was skipped.
fn miss_or_stated_skip(r: &Value) {
    if !is_root() {
        let why = finding(r, "miss_skipped").expect("a stated skip")["text"].to_string();
        assert!(why.contains("root"), "{why}");
        Missing::new(Cap::Root, "the dentry-cache miss needs root").skip_part("miss vs hit");
        return;
    }
    let (miss, hit) = (median(r, MISS_NAME), median(r, HIT_NAME));
    match (miss, hit) {
        (Some(m), Some(h)) => assert!(m > h, "miss {m} ns not above hit {h} ns"),
        _ => panic!(
            "as root the miss must be measured: {}",
            finding(r, "miss_skipped").map_or(Value::Null, |f| f.clone())
        ),
    }
    // A finding never quotes a metric marked not a result (a CI spanning a decade).
    let quotable = ![MISS_NAME, HIT_NAME].iter().any(|n| not_a_result(r, n));
    assert_eq!(finding(r, "miss_vs_hit").is_some(), quotable, "miss_vs_hit");
    let text = finding(r, "miss_verified").expect("miss_verified")["text"].to_string();
    assert!(text.contains("verified"), "{text}");
}

/// A fake PATH of `dirs` empty directories `p0 … p{dirs-1}` under `root`.
fn fake_path(root: &Path, dirs: usize) {
    for i in 0..dirs {
        std::fs::create_dir(root.join(format!("p{i}"))).expect("mkdir");
    }
}

/// (calls, errors) per call name from `strace -c` output.
fn strace_counts(text: &str) -> BTreeMap<String, (u64, u64)> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let t: Vec<&str> = line.split_whitespace().collect();
        if !(5..=6).contains(&t.len()) || t[0].parse::<f64>().is_err() || t[t.len() - 1] == "total"
        {
            continue;
        }
        let calls = t[3].parse().expect("calls");
        let errors = if t.len() == 6 {
            t[4].parse().expect("errors")
        } else {
            0
        };
        out.insert(t[t.len() - 1].to_string(), (calls, errors));
    }
    out
}

fn strace_file(cmd: &[&str], dir: &Path) -> Option<BTreeMap<String, (u64, u64)>> {
    let out = dir.join("strace.txt");
    let status = std::process::Command::new("strace")
        .args(["-c", "-e", "trace=%file", "-o"])
        .arg(&out)
        .args(cmd)
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?;
    assert!(status.success(), "strace failed: {status}");
    Some(strace_counts(
        &std::fs::read_to_string(&out).expect("strace output"),
    ))
}

/// The fixture and a fake PATH of 20 directories, in a directory of their own.
struct Search {
    dir: tempfile::TempDir,
    args: Vec<String>,
}

impl Search {
    /// Builds the fixture and the fake PATH; `Err` when the fixture cannot be built.
    fn new() -> Result<Search, Missing> {
        let dir = tempfile::tempdir().expect("tempdir");
        let bin = compile_fixture("lookup_path", dir.path(), &[])?;
        let root = dir.path().join("root");
        std::fs::create_dir(&root).expect("mkdir");
        fake_path(&root, 20);
        let args = [
            bin.to_string_lossy().as_ref(),
            root.to_string_lossy().as_ref(),
            "20",
            "1000",
            "cmd",
        ]
        .map(String::from)
        .to_vec();
        Ok(Search { dir, args })
    }

    /// The command line searching the fake PATH 1 000 times for a command that is in none
    /// of its 20 directories (20 000 failing lookups).
    fn cmd(&self) -> Vec<&str> {
        self.args.iter().map(String::as_str).collect()
    }

    fn dir(&self) -> &Path {
        self.dir.path()
    }
}

#[test]
fn ptrace_reports_failing_lookups_and_top_paths_like_strace() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let search = need!(Search::new());
    let cmd = search.cmd();
    let (r, stdout, code) = trace_json(&["--backend", "ptrace"], &cmd, search.dir());
    assert_eq!((stdout.as_str(), code), ("found 0\n", 0));
    let (n, errors) = calls_of(&r, "access").expect("access counted");
    assert!(
        n >= 20_000 && errors >= 20_000,
        "access {n} calls, {errors} errors"
    );
    let share = finding(&r, "lookups").expect("lookups")["value"]
        .as_f64()
        .expect("share");
    assert!(share > 0.5 && share <= 1.0, "share {share}");
    let top = finding(&r, "top_lookup").expect("top_lookup");
    let p0 = format!("{}/root/p0/cmd", search.dir().display());
    let text = top["text"].as_str().expect("text");
    assert!(
        text.contains(&p0) && text.contains("1000 times") && text.contains("ENOENT"),
        "{text}"
    );
    assert_eq!(top["value"].as_f64(), Some(1000.0));
    let artifact = r["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["name"] == "lookups"))
        .expect("lookups artifact");
    assert!(
        artifact["content"]
            .as_str()
            .is_some_and(|c| c.contains(&format!("1000\t1000\t{p0}")))
    );
    let Some(reference) = strace_file(&cmd, search.dir()) else {
        skip!(Strace, "strace is not installed (apt-get install strace)");
    };
    assert!(
        reference.get("access").is_some_and(|&(n, _)| n >= 20_000),
        "{reference:?}"
    );
    for (name, counts) in &reference {
        assert_eq!(
            calls_of(&r, name),
            Some(*counts),
            "{name}: sysmeter vs strace -c -e trace=%file"
        );
    }
}

/// What a test of the tracepoints needs: the `raw_syscalls` events to itself, the
/// tracepoints, and the search.
fn traced_search() -> Result<(Observing, Search), Missing> {
    let on = observing(&[Event::RawSyscalls]);
    tracepoints()?;
    Ok((on, Search::new()?))
}

#[test]
fn tracepoints_count_lookups_but_say_they_cannot_show_paths() {
    let (_on, search) = need!(traced_search());
    let cmd = search.cmd();
    let (r, _, code) = trace_json(&["--backend", "tracepoint"], &cmd, search.dir());
    assert_eq!(code, 0);
    assert_eq!(
        calls_of(&r, "access").map(|c| c.1 >= 20_000),
        Some(true),
        "{r}"
    );
    assert!(finding(&r, "lookups").is_some());
    assert!(finding(&r, "top_lookup").is_none());
    let why = finding(&r, "lookup_paths_unavailable").expect("says why")["text"].to_string();
    assert!(why.contains("--backend ptrace"), "{why}");
}

#[test]
fn run_timeline_shows_the_dentry_cache() {
    let _on = crate::support::observing(&[crate::support::Event::RawSyscalls]);
    let (run, _) = crate::run::run_json(&["--interval", "50"], &["sleep", "0.3"]);
    let series = run["results"][0]["series"].as_array().expect("series");
    let level = |name: &str| {
        let s = series.iter().find(|s| s["name"] == name);
        let points = s.and_then(|s| s["points"].as_array()).expect(name);
        assert!(points.len() >= 3, "{name}: {} points", points.len());
        points[0]["summary"]["median"].as_f64().expect("value")
    };
    assert!(level("dentries in use") > 0.0);
    assert!(level("dentries unused") >= 0.0);
    let state = std::fs::read_to_string("/proc/sys/fs/dentry-state").expect("dentry-state");
    if state.split_whitespace().count() >= 6 {
        assert!(level("negative dentries") >= 0.0);
    }
}

/// The first line of the `lookups` artifact (the most looked-up path), if any.
fn top_artifact_line(r: &Value) -> Option<String> {
    let a = r["artifacts"]
        .as_array()?
        .iter()
        .find(|a| a["name"] == "lookups")?;
    Some(a["content"].as_str()?.lines().nth(1)?.to_string())
}

fn metric(r: &Value, name: &str) -> Option<f64> {
    let m = r["metrics"]
        .as_array()?
        .iter()
        .find(|m| m["name"] == name)?;
    m["samples"][0].as_f64()
}

#[test]
fn run_traces_lookup_times_failures_and_paths_like_trace() {
    let (_on, search) = need!(traced_search());
    if !is_root() {
        skip!(Root, "run's path probes (uprobes in tracefs) need root");
    }
    let cmd = search.cmd();
    let (run, code) = crate::run::run_json(&["--lookups", "paths"], &cmd);
    assert_eq!(code, Some(0));
    let r = &run["results"][0];
    let failed = metric(r, "failed path lookups").unwrap_or_else(|| panic!("no lookups: {r}"));
    assert!(failed >= 20_000.0, "{failed} failed lookups");
    let time = metric(r, "path lookup time").expect("time");
    let share = metric(r, "path lookup share").expect("share");
    assert!(time > 0.0 && share > 0.0, "time {time} ns, share {share}%");
    let f = finding(r, "lookups").unwrap_or_else(|| panic!("no lookups finding: {r}"));
    let text = f["text"].as_str().expect("text");
    assert!(text.contains("access 20.0k (20.0k failed)"), "{text}");
    assert!(text.contains("of the program's system time"), "{text}");
    let p0 = format!("{}/root/p0/cmd", search.dir().display());
    let top = finding(r, "top_lookup").unwrap_or_else(|| panic!("no top path: {r}"));
    assert_eq!(top["value"].as_f64(), Some(1000.0), "{top}");
    let (t, _, _) = trace_json(&["--backend", "ptrace"], &cmd, search.dir());
    let from_trace = top_artifact_line(&t).expect("trace's top path");
    assert_eq!(from_trace, format!("1000\t1000\t{p0}"));
    assert_eq!(
        top_artifact_line(r),
        Some(from_trace),
        "run vs trace --backend ptrace"
    );
}

#[test]
fn run_lookups_calls_keeps_counts_and_time_and_says_why_no_paths() {
    let (_on, search) = need!(traced_search());
    let cmd = search.cmd();
    let (run, code) = crate::run::run_json(&["--lookups", "calls"], &cmd);
    assert_eq!(code, Some(0));
    let r = &run["results"][0];
    assert!(
        metric(r, "path lookups").is_some_and(|n| n >= 20_000.0),
        "{r}"
    );
    assert!(metric(r, "path lookup time").is_some_and(|t| t > 0.0));
    let why = finding(r, "lookup_paths_unavailable").expect("one line on the paths");
    assert_says(why, "--lookups");
    assert!(finding(r, "top_lookup").is_none() && top_artifact_line(r).is_none());
    let (off, _) = crate::run::run_json(&["--lookups", "off"], &["true"]);
    let r = &off["results"][0];
    assert!(metric(r, "path lookups").is_none() && finding(r, "lookups").is_none());
}
