//! Integration tests of `export --format callgrind|chrome-trace|firefox`, each on a run the
//! test makes and stores: valgrind's `callgrind_annotate` reads the callgrind file of
//! `calls --functions` on the -finstrument-functions tree fixture and shows the exact call
//! count of every edge of its known tree; the Chrome trace of `run` has the trace event
//! format's fields on every event (name, ph, ts, pid, tid; dur on a complete slice) and one
//! counter event per point of the run's timeline, and that of an off-CPU profile one slice
//! per kept interval on each thread's named track; the Firefox Profiler file of
//! `profile --both` has the processed format's top-level fields and its sample weights add
//! up to the run's own on-CPU samples and off-CPU time. A kind a format does not fit is
//! refused with exit 2 and the sentence that names the fix. Perfetto's trace processor is
//! not used: its Python package (`pip install perfetto`) downloads the trace_processor_shell
//! binary from Google's storage at first use, which cannot be fetched offline. Needs `cc`, root (scheduler tracepoints) and valgrind.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::cmd::{stderr_of, stdout_of, sysmeter};
use crate::support::needs::off_cpu;
use crate::support::skip::{Cap, Missing};
use crate::support::{
    Event, artifact, artifact_json, compile_fixture, median, need, observing_alone, result,
};

/// Runs `sysmeter ARGS --db DB --format json --out FILE -- CMD`, which must succeed; its run.
fn measured(db: &Path, args: &[&str], cmd: &[&str]) -> Value {
    let out = db.with_extension("run.json");
    stderr_of(
        sysmeter()
            .args(args)
            .arg("--db")
            .arg(db)
            .args(["--format", "json", "--out"])
            .arg(&out)
            .arg("--")
            .args(cmd),
        0,
    );
    serde_json::from_slice(&std::fs::read(&out).expect("run written")).expect("run JSON")
}

/// The latest run of `kind` exported from `db` in `format` to a file; the file's text.
fn export(db: &Path, kind: &str, format: &str) -> String {
    let file = db.with_extension(format);
    stdout_of(
        sysmeter()
            .args(["export", &format!("latest:{kind}"), "--format", format])
            .arg("--db")
            .arg(db)
            .arg("--out")
            .arg(&file),
    );
    std::fs::read_to_string(&file).expect("export written")
}

/// Exporting the latest run of `kind` in `format` is refused (exit 2); the message.
fn refused(db: &Path, kind: &str, format: &str) -> String {
    let reference = format!("latest:{kind}");
    let args = ["export", &reference, "--format", format, "--db"];
    stderr_of(sysmeter().args(args).arg(db), 2)
}

fn callgrind_annotate() -> Result<(), Missing> {
    match Command::new("callgrind_annotate").arg("--version").output() {
        Ok(_) => Ok(()),
        Err(e) => Err(Missing::new(
            Cap::Valgrind,
            format!("callgrind_annotate cannot run: {e}"),
        )),
    }
}

/// The caller → callee call counts in callgrind_annotate's caller tree: each function's
/// block lists its callers (`< ???:main (3x) []`) above its own line (`*  ???:middle`).
fn caller_tree(text: &str) -> HashMap<(String, String), u64> {
    let name = |s: &str| s.trim().trim_start_matches("???:").to_string();
    let mut edges = HashMap::new();
    let mut callers: Vec<(String, u64)> = Vec::new();
    for line in text.lines() {
        if let Some((_, caller)) = line.split_once("  < ") {
            let (who, count) = caller.rsplit_once(" (").expect("a count");
            let (count, _) = count.split_once("x)").expect("(Nx)");
            callers.push((name(who), count.parse().expect("calls")));
        } else if let Some((_, own)) = line.split_once("  *  ") {
            for (caller, calls) in callers.drain(..) {
                edges.insert((caller, name(own)), calls);
            }
        } else {
            callers.clear();
        }
    }
    edges
}

#[test]
fn callgrind_annotate_shows_the_exact_calls_of_the_known_tree() {
    need!(callgrind_annotate());
    let dir = tempfile::tempdir().expect("tempdir");
    let flags = ["-finstrument-functions", "-pthread"];
    let bin = need!(compile_fixture("funcs_tree", dir.path(), &flags));
    let db = dir.path().join("runs.db");
    let run = measured(
        &db,
        &["calls", "--functions"],
        &[bin.to_str().expect("path")],
    );
    let file = dir.path().join("tree.callgrind");
    std::fs::write(&file, export(&db, "calls", "callgrind")).expect("write");
    let out = Command::new("callgrind_annotate")
        .args(["--inclusive=yes", "--tree=caller", "--threshold=100"])
        .arg(&file)
        .output()
        .expect("callgrind_annotate runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{:?}", out.stderr);
    let shown = caller_tree(&text);
    // The fixture's tree: main calls middle 3 times, each middle calls leaf 4 times, main
    // calls leaf once, and recurse once, which recurses 5 times.
    for (caller, callee, calls) in [
        ("main", "middle", 3),
        ("middle", "leaf", 12),
        ("main", "leaf", 1),
        ("main", "recurse", 1),
        ("recurse", "recurse", 5),
    ] {
        let edge = (caller.to_string(), callee.to_string());
        assert_eq!(
            shown.get(&edge),
            Some(&calls),
            "{caller} → {callee}:\n{text}"
        );
    }
    // And nothing else: every edge of the record's call graph, none made up.
    let graph: Value = artifact_json(result(&run, "calls.functions"), "call graph");
    let stored = graph["edges"].as_array().expect("edges");
    let from_program = stored.iter().filter(|e| e["caller"] != "<spontaneous>");
    assert_eq!(from_program.count(), shown.len(), "{text}");
    // A call graph is no timeline: chrome-trace refuses it and names the fix.
    let why = refused(&db, "calls", "chrome-trace");
    assert!(why.contains("--format callgrind"), "{why}");
}

/// The fields every event of the trace event format has, by its phase.
fn assert_trace_event(e: &Value) {
    let ph = e["ph"].as_str().unwrap_or_else(|| panic!("no ph: {e}"));
    assert!(e["name"].is_string(), "no name: {e}");
    for field in ["ts", "pid", "tid"] {
        assert!(e[field].is_number(), "no {field}: {e}");
    }
    match ph {
        "X" => assert!(e["dur"].as_f64().is_some_and(|d| d >= 0.0), "dur: {e}"),
        "C" => {
            let args = e["args"].as_object().expect("counter args");
            assert!(
                !args.is_empty() && args.values().all(Value::is_number),
                "{e}"
            );
        }
        "M" => assert!(e["args"]["name"].is_string(), "metadata name: {e}"),
        other => panic!("unexpected phase {other}: {e}"),
    }
}

#[test]
fn chrome_trace_of_run_has_every_timeline_point_as_a_counter() {
    let (_dir, db) = crate::support::temp_db();
    let run = measured(&db, &["run", "--interval", "50"], &["sleep", "0.5"]);
    let trace: Value = serde_json::from_str(&export(&db, "run", "chrome-trace")).expect("JSON");
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    events.iter().for_each(assert_trace_event);
    let r = result(&run, "run");
    let series = r["series"].as_array().expect("series");
    let points: usize = series
        .iter()
        .map(|s| s["points"].as_array().map_or(0, Vec::len))
        .sum();
    let counters = events.iter().filter(|e| e["ph"] == "C").count();
    assert!(points > 0, "no timeline: {r}");
    assert_eq!(counters, points);
    // The command's slice lasts its real time (µs), from the record's one value.
    let slice = events.iter().find(|e| e["ph"] == "X").expect("slice");
    let real_ns = median(r, "real time").expect("real time");
    assert!((slice["dur"].as_f64().expect("dur") - real_ns / 1e3).abs() < 1e-3);
    // A run has no stacks for the Firefox Profiler.
    let why = refused(&db, "run", "firefox");
    assert!(why.contains("fits `profile` runs"), "{why}");
    assert_eq!(why.trim_end().lines().count(), 1, "{why}");
}

/// The folded stacks' total of the `offcpu` result of `run`: its blocked time, ns.
fn off_cpu_folded_ns(run: &Value) -> f64 {
    artifact(result(run, "offcpu"), "offcpu folded")
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

/// `sysmeter ARGS -- FIXTURE FIXTURE_ARGS` of an off-CPU fixture, stored in `dir/runs.db`
/// while no other test watches the scheduler: the database and the run. `Missing` where
/// off-CPU profiling or a C compiler is not to be had.
fn off_cpu_run(
    dir: &Path,
    fixture: &str,
    args: &[&str],
    fixture_args: &[&str],
) -> Result<(PathBuf, Value), Missing> {
    off_cpu()?;
    let bin = compile_fixture(fixture, dir, &[])?;
    let db = dir.join("runs.db");
    let mut cmd = vec![bin.to_str().expect("path")];
    cmd.extend(fixture_args);
    let _alone = observing_alone(&[Event::Sched]);
    let run = measured(&db, args, &cmd);
    Ok((db, run))
}

#[test]
fn chrome_trace_of_an_off_cpu_profile_has_each_interval_on_its_threads_track() {
    let dir = tempfile::tempdir().expect("tempdir");
    let args = ["profile", "--off-cpu", "--backend", "perf"];
    let (db, run) = need!(off_cpu_run(dir.path(), "offcpu_pingpong", &args, &["2000"]));
    let trace: Value = serde_json::from_str(&export(&db, "profile", "chrome-trace")).expect("JSON");
    let events = trace["traceEvents"].as_array().expect("traceEvents");
    events.iter().for_each(assert_trace_event);
    let slices: Vec<&Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    let per_thread: Value = artifact_json(result(&run, "offcpu"), "thread stacks");
    let kept = per_thread["intervals"].as_array().expect("intervals").len();
    assert_eq!(slices.len(), kept);
    // Both threads block on their pipe, each on its own named track.
    let tids: std::collections::HashSet<u64> =
        slices.iter().filter_map(|e| e["tid"].as_u64()).collect();
    assert_eq!(tids.len(), 2, "{tids:?}");
    let named = |tid: &u64| {
        events
            .iter()
            .any(|e| e["name"] == "thread_name" && e["tid"] == *tid)
    };
    assert!(tids.iter().all(named), "a thread without its name");
    assert!(slices.iter().any(|e| e["name"] == "pipe"), "no pipe slice");
    // Nothing dropped (a few thousand intervals): the slices are all the blocked time.
    assert_eq!(per_thread["intervals_dropped"], 0);
    let dur_ns: f64 = slices.iter().filter_map(|e| e["dur"].as_f64()).sum::<f64>() * 1e3;
    let folded = off_cpu_folded_ns(&run);
    assert!(
        (dur_ns - folded).abs() <= slices.len() as f64,
        "{dur_ns} vs {folded}"
    );
}

/// Sums the sample weights of `thread` by the category name of each sample's stack: the
/// category of its leaf frame (the format keeps categories on frames).
fn weight_by_category(profile: &Value, thread: &Value) -> HashMap<String, f64> {
    let names: Vec<&str> = profile["meta"]["categories"]
        .as_array()
        .expect("categories")
        .iter()
        .map(|c| c["name"].as_str().expect("category name"))
        .collect();
    let samples = &thread["samples"];
    let frame_of = thread["stackTable"]["frame"]
        .as_array()
        .expect("stack frames");
    let category = thread["frameTable"]["category"]
        .as_array()
        .expect("categories");
    let stacks = samples["stack"].as_array().expect("stacks");
    let weights = samples["weight"].as_array().expect("weights");
    let mut sums = HashMap::new();
    for (stack, weight) in stacks.iter().zip(weights) {
        let frame = stack.as_u64().and_then(|s| frame_of[s as usize].as_u64());
        let c = frame.and_then(|f| category[f as usize].as_u64());
        let name = names[c.expect("a category") as usize].to_string();
        *sums.entry(name).or_insert(0.0) += weight.as_f64().expect("weight");
    }
    sums
}

#[test]
fn firefox_profile_weights_add_up_to_the_samples_and_the_off_cpu_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let args = ["profile", "--both"];
    let (db, run) = need!(off_cpu_run(dir.path(), "offcpu_spinnap", &args, &[]));
    let p: Value = serde_json::from_str(&export(&db, "profile", "firefox")).expect("JSON");
    for field in [
        "version",
        "preprocessedProfileVersion",
        "interval",
        "startTime",
    ] {
        assert!(p["meta"][field].is_number(), "meta.{field}: {}", p["meta"]);
    }
    let threads = p["threads"].as_array().expect("threads");
    assert_eq!(
        threads.len(),
        1,
        "one track per thread, and the fixture has one"
    );
    let t = &threads[0];
    for table in [
        "samples",
        "stackTable",
        "frameTable",
        "funcTable",
        "stringArray",
    ] {
        assert!(!t[table].is_null(), "no {table}");
    }
    let sums = weight_by_category(&p, t);
    let on = result(&run, "profile");
    let samples = median(on, "samples").expect("samples");
    assert_eq!(sums.get("On-CPU").copied(), Some(samples), "{sums:?}");
    // Off-CPU time as sampling periods (samply's way), rounded once over the whole.
    let period_ns = median(on, "CPU time sampled").expect("sampled") / samples;
    let folded_ns = off_cpu_folded_ns(&run);
    let off: f64 = sums
        .iter()
        .filter(|(name, _)| name.starts_with("Off-CPU"))
        .map(|(_, w)| w)
        .sum();
    assert_eq!(off, (folded_ns / period_ns).round(), "{sums:?}");
    // The fixture naps 300 ms in nanosleep: at least that long in the sleep reason's
    // category, whatever else (preemption on a loaded machine) is off the CPU beside it.
    let sleep = sums.get("Off-CPU: sleep").copied().unwrap_or(0.0);
    assert!(
        sleep * period_ns >= 0.25e9,
        "{sums:?}, period {period_ns} ns"
    );
}
