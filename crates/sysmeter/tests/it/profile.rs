//! Integration tests of `sysmeter profile`: a C fixture with a known 70/30 split of CPU work
//! between `hot_a` and `hot_b` (both called by `driver`, called by `main`) is profiled; the
//! flat profile must show the split within ±5 percentage points, the call graph the right
//! callers, the flame graph must be well-formed SVG naming both functions. Also: a library
//! loaded with dlopen and unloaded before exit is named, children are followed through
//! `sh -c`, the command's stdout and exit code pass through untouched,
//! attaching with `-p` leaves the process running, the stored run renders in every format,
//! and bad targets are usage errors.
//!
//! Tests that sample need perf events and `cc` for the fixture (capabilities `perf`, `cc`).
//! Sampling tests hold [`exclusive`]: CPU-bound work of parallel tests would contend for
//! the CPUs and push samples into the scheduler (see [`check_split`]).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::MutexGuard;

use tempfile::TempDir;

use serde_json::Value;

use crate::support::cmd::refused;
use crate::support::needs::perf;
use crate::support::skip::Missing;
use crate::support::sysmeter;
use crate::support::sysmeter_db;
use crate::support::{compile_fixture, exclusive, median as metric, need, result, stdout_of};

/// Compiles fixture `name.c` with `extra` flags after checking perf events are permitted.
fn compile(dir: &Path, name: &str, extra: &[&str]) -> Result<PathBuf, Missing> {
    perf()?;
    compile_fixture(name, dir, extra)
}

/// The run record `profile --out` wrote to `path`.
fn read_run(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).expect("report")).expect("JSON report")
}

/// The 70/30 fixture built in a directory of its own, with the CPUs held for its
/// sampling ([`exclusive`]): the hold, the directory, the program.
fn sampled_fixture() -> Result<(MutexGuard<'static, ()>, TempDir, PathBuf), Missing> {
    let alone = exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = compile(dir.path(), "profile_split", &[])?;
    Ok((alone, dir, prog))
}

fn artifact<'a>(result: &'a Value, name: &str) -> &'a str {
    result["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["name"] == name))
        .and_then(|x| x["content"].as_str())
        .unwrap_or_else(|| panic!("no artifact {name}"))
}

/// The call-graph entry of `function`: (callers, callees) by name.
fn call_graph_entry(text: &str, function: &str) -> (Vec<String>, Vec<String>) {
    let name_of = |line: &str| {
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if words
            .last()
            .is_some_and(|w| w.starts_with('[') && w.ends_with(']'))
        {
            words.pop();
        }
        words.last().map(|w| w.to_string()).unwrap_or_default()
    };
    for block in text.split("\n-") {
        let lines: Vec<&str> = block
            .lines()
            .filter(|l| !l.starts_with('-') && !l.starts_with("index"))
            .collect();
        let Some(at) = lines.iter().position(|l| l.starts_with('[')) else {
            continue;
        };
        if name_of(lines[at]) != function {
            continue;
        }
        let callers = lines[..at].iter().map(|l| name_of(l));
        let callees = lines[at + 1..].iter().map(|l| name_of(l));
        return (callers.collect(), callees.collect());
    }
    panic!("no call-graph entry for {function} in:\n{text}");
}

/// A minimal well-formedness check: one root element, every tag closed in order; the
/// contents of CDATA sections, comments, processing instructions and declarations skipped.
fn assert_well_formed_xml(svg: &str) {
    let trimmed = svg.trim_start();
    assert!(
        trimmed.starts_with("<?xml") || trimmed.starts_with("<svg"),
        "not XML/SVG"
    );
    let mut stack: Vec<String> = Vec::new();
    let mut rest = svg;
    let mut roots = 0;
    while let Some(open) = rest.find('<') {
        rest = &rest[open..];
        let skip_to = |end: &str| rest.find(end).map(|i| i + end.len()).expect("unterminated");
        let len = if rest.starts_with("<![CDATA[") {
            skip_to("]]>")
        } else if rest.starts_with("<!--") {
            skip_to("-->")
        } else if rest.starts_with("<?") || rest.starts_with("<!") {
            skip_to(">")
        } else {
            let end = skip_to(">");
            let tag = &rest[1..end - 1];
            if let Some(name) = tag.strip_prefix('/') {
                let top = stack.pop().expect("closing tag without opening");
                assert_eq!(top, name.trim(), "mismatched closing tag");
            } else if !tag.ends_with('/') {
                let name = tag.split_whitespace().next().unwrap_or("").to_string();
                if stack.is_empty() {
                    roots += 1;
                }
                stack.push(name);
            } else if stack.is_empty() {
                roots += 1;
            }
            end
        };
        rest = &rest[len..];
    }
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");
    assert_eq!(roots, 1, "exactly one root element");
}

/// The flat profile shows the 70/30 split; returns the sample count.
///
/// The split is judged between the two functions (their self samples): on a contended
/// machine some samples land in the kernel's context-switch path instead (reported as the
/// `preemption` finding), which shrinks both shares alike but not their ratio. Those and any
/// other samples must stay a minority (≤ 25%).
fn check_split(run: &Value) -> f64 {
    assert_eq!(run["kind"], "profile");
    let main = result(run, "profile");
    let samples = metric(main, "samples").expect("samples metric");
    assert!(
        samples >= 500.0,
        "too few samples ({samples}) to judge a split"
    );
    assert!(metric(main, "lost samples").is_some());
    let flat = result(run, "profile.flat");
    let own = |f: &str| metric(flat, f).unwrap_or(0.0);
    let both = own("hot_a") + own("hot_b");
    let (a, b) = (100.0 * own("hot_a") / both, 100.0 * own("hot_b") / both);
    let covered = 100.0 * both / samples;
    println!(
        "flat profile: hot_a {:.1}%, hot_b {:.1}% of {samples} samples; split {a:.1}/{b:.1}",
        100.0 * own("hot_a") / samples,
        100.0 * own("hot_b") / samples
    );
    // On failure, show the whole flat profile and the findings.
    let context = format!(
        "\nflat: {}\nfindings: {}",
        artifact(main, "flat"),
        main["findings"]
    );
    assert!(
        (a - 70.0).abs() <= 5.0,
        "hot_a has {a:.1}% of the two, expected 70 ± 5{context}"
    );
    assert!(
        (b - 30.0).abs() <= 5.0,
        "hot_b has {b:.1}% of the two, expected 30 ± 5{context}"
    );
    assert!(
        covered >= 75.0,
        "hot_a and hot_b have only {covered:.1}% of samples{context}"
    );
    samples
}

/// main → driver → {hot_a, hot_b} in the call graph.
fn check_call_graph(cg: &str) {
    for leaf in ["hot_a", "hot_b"] {
        let (callers, _) = call_graph_entry(cg, leaf);
        assert_eq!(
            callers.first().map(String::as_str),
            Some("driver"),
            "{leaf}:\n{cg}"
        );
    }
    let (callers, callees) = call_graph_entry(cg, "driver");
    assert_eq!(callers, ["main"], "driver's caller:\n{cg}");
    assert_eq!(
        &callees[..2],
        ["hot_a", "hot_b"],
        "driver's callees, most first:\n{cg}"
    );
}

/// The flame graph is well-formed SVG naming both functions; the folded stacks add up.
fn check_flame_and_folded(svg: &str, stored_svg: &str, folded: &str, samples: f64) {
    assert_well_formed_xml(svg);
    assert!(svg.contains("hot_a") && svg.contains("hot_b"));
    assert_eq!(svg, stored_svg, "file and stored artifact agree");
    assert!(
        folded.lines().any(|l| l.contains("main;driver;hot_a ")),
        "{folded}"
    );
    let total: u64 = folded
        .lines()
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum();
    assert_eq!(total as f64, samples, "folded counts add up to the samples");
}

/// The stored run renders in every format.
fn check_show(db: &Path) {
    for format in ["text", "json", "csv", "markdown"] {
        let text = stdout_of(&mut sysmeter_db(
            db,
            &["show", "latest", "--format", format],
        ));
        assert!(
            text.contains("hot_a") && text.contains("hot_b"),
            "{format}:\n{text}"
        );
    }
}

#[test]
fn fixture_split_call_graph_and_flame_graph() {
    let (_alone, dir, prog) = need!(sampled_fixture());
    let path = |name: &str| dir.path().join(name);
    sysmeter_db(path("p.db"), &["profile", "-F", "2999", "--format", "json"])
        .arg("--out")
        .arg(path("run.json"))
        .arg("--flamegraph")
        .arg(path("flame.svg"))
        .arg("--folded")
        .arg(path("folded.txt"))
        .arg("--")
        .arg(&prog)
        .arg("600")
        .assert()
        .success();
    let read = |name: &str| std::fs::read_to_string(path(name)).expect("output written");
    let run: Value = serde_json::from_str(&read("run.json")).expect("JSON report");
    let samples = check_split(&run);
    let main = result(&run, "profile");
    check_call_graph(artifact(main, "callgraph"));
    let stored_svg = artifact(main, "flamegraph");
    check_flame_and_folded(&read("flame.svg"), stored_svg, &read("folded.txt"), samples);
    check_show(&path("p.db"));
}

#[test]
fn children_are_followed_and_stdout_and_exit_code_pass_through() {
    let (_alone, dir, prog) = need!(sampled_fixture());
    let json_path = dir.path().join("run.json");
    let script = format!("{} 150 && echo from-the-command && exit 3", prog.display());
    let out = sysmeter()
        .args(["profile", "--no-store", "--format", "json", "--out"])
        .arg(&json_path)
        .args(["--", "sh", "-c", &script])
        .assert()
        .code(3)
        .get_output()
        .clone();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "from-the-command\n");
    let run = read_run(&json_path);
    let flat = result(&run, "profile.flat");
    assert!(
        metric(flat, "hot_a").is_some_and(|n| n > 0.0),
        "the forked and exec'd child was not sampled: {flat}"
    );
}

#[test]
fn attaching_to_a_pid_samples_it_and_leaves_it_running() {
    let (_alone, _dir, prog) = need!(sampled_fixture());
    let mut child = std::process::Command::new(&prog)
        .arg("100000")
        .stdout(Stdio::null())
        .spawn()
        .expect("start fixture");
    let pid = child.id().to_string();
    let out = sysmeter()
        .args(["profile", "--no-store", "--duration", "1", "-p", &pid])
        .assert()
        .success()
        .get_output()
        .stderr
        .clone();
    let still_running = child.try_wait().expect("try_wait").is_none();
    let _ = child.kill();
    let _ = child.wait();
    let text = String::from_utf8_lossy(&out);
    assert!(text.contains("hot_a"), "{text}");
    assert!(text.contains(&format!("pid {pid}")), "{text}");
    assert!(
        still_running,
        "the attached process must survive the profile"
    );
}

#[test]
fn library_loaded_late_and_unloaded_is_still_named() {
    let _alone = exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    // The library is built from the same source into a subdirectory, then named like one.
    let libdir = dir.path().join("lib");
    std::fs::create_dir(&libdir).expect("lib dir");
    let library_flags = ["-fPIC", "-shared", "-DLATE_LIBRARY"];
    let built = compile(&libdir, "profile_late", &library_flags).and_then(|built| {
        let lib = dir.path().join("libprofile_late.so");
        std::fs::rename(built, &lib).expect("rename the library");
        Ok((lib, compile(dir.path(), "profile_late", &["-ldl"])?))
    });
    let (lib, prog) = need!(built);
    let json_path = dir.path().join("run.json");
    sysmeter()
        .args(["profile", "--no-store", "--format", "json", "--out"])
        .arg(&json_path)
        .arg("--")
        .arg(&prog)
        .arg(&lib)
        .arg("150")
        .assert()
        .success();
    let run = read_run(&json_path);
    let main = result(&run, "profile");
    let flat: Value = serde_json::from_str(artifact(main, "flat")).expect("flat JSON");
    let late = flat
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["function"] == "late_hot"))
        .unwrap_or_else(|| panic!("late_hot not named: {flat}"));
    assert_eq!(late["module"], "libprofile_late.so");
    let samples = metric(main, "samples").expect("samples");
    let share = late["self_samples"].as_f64().unwrap_or(0.0) / samples;
    assert!(share > 0.8, "late_hot has {:.0}% of samples", 100.0 * share);
    assert!(artifact(main, "folded").contains("main;late_hot"));
}

#[test]
fn bad_targets_are_usage_errors() {
    // A program that is not there exits 127, like a shell (and `run`, `trace`).
    let cases: [(&[&str], i32, &[&str]); 4] = [
        (&["--", "/nonexistent/program"], 127, &["command not found"]),
        (
            &["-p", "999999999"],
            2,
            &["no process with PID 999999999 exists"],
        ),
        (&[], 2, &[]),
        (&["-F", "0", "--", "true"], 2, &["-F 0"]),
    ];
    for (args, code, names) in cases {
        refused(
            sysmeter().args(["profile", "--no-store"]).args(args),
            code,
            names,
        );
    }
}
