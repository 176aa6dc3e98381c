//! `sysmeter export --format pprof|speedscope`, checked by the viewers' own readers: a
//! profile of the 70/30 fixture exported as pprof gives `go tool pprof -top` the same top
//! functions as sysmeter's flat profile with the same shares (within 1 point) and `-list`
//! the fixture's source with the samples on its loop's line; an alloc run
//! of the three-site fixture gives `-sample_index=inuse_space -top` the leak site with its
//! bytes; a locks run opens in `go tool pprof`; every speedscope file validates against
//! speedscope's published schema (a copy in tests/fixtures/speedscope). Kinds a format does
//! not fit are refused with the sentence (exit 2), and pprof is never written to a terminal.
//!
//! Needs `cc`, perf events (profile), the futex tracepoints (locks), Go's toolchain (`go`)
//! and python3's jsonschema (`jsonschema`). `go tool pprof` builds itself on first use into
//! the Go build cache (`GOCACHE`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::cmd::stderr_of;
use crate::support::needs::{go, perf};
use crate::support::sample::sample_run_file;
use crate::support::skip::{Cap, Missing};
use crate::support::sysmeter_db;
use crate::support::{compile_fixture, exclusive, need, result, sysmeter};

/// `go tool pprof ARGS FILE`'s stdout; the tool must succeed.
fn pprof(go: &Path, args: &[&str], file: &Path) -> String {
    let out = Command::new(go)
        .args(["tool", "pprof"])
        .args(args)
        .arg(file)
        .output()
        .expect("go runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "go tool pprof {args:?}: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// One row of `pprof -top`.
#[derive(Debug)]
struct Row {
    /// The flat value as pprof writes it (`409600B`).
    flat: String,
    /// Flat and cumulative shares, %.
    flat_pct: f64,
    cum_pct: f64,
    name: String,
}

/// The rows of `pprof -top`, in its order.
fn top_rows(text: &str) -> Vec<Row> {
    let rows = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("flat"));
    let pct = |w: &str| w.strip_suffix('%')?.parse().ok();
    rows.skip(1)
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            Some(Row {
                flat: words.first()?.to_string(),
                flat_pct: pct(words.get(1)?)?,
                cum_pct: pct(words.get(4)?)?,
                name: words.get(5..)?.join(" "),
            })
        })
        .collect()
}

/// Checks `file` against speedscope's schema with python3's jsonschema.
fn validate_speedscope(file: &Path) -> Result<(), Missing> {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/speedscope/file-format-schema.json");
    let script = "import json, sys, jsonschema\n\
                  schema = json.load(open(sys.argv[1]))\n\
                  jsonschema.validate(json.load(open(sys.argv[2])), schema)\n";
    let has = Command::new("python3")
        .args(["-c", "import jsonschema"])
        .output();
    if !has.is_ok_and(|o| o.status.success()) {
        let why = "python3 with its jsonschema module, to validate the speedscope file";
        return Err(Missing::new(Cap::JsonSchema, why));
    }
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(&schema)
        .arg(file)
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} is not valid: {stderr}",
        file.display()
    );
    Ok(())
}

/// Runs `KIND ARGS -- argv` storing into a new database (and writing JSON): the database
/// and the run.
fn stored_run(dir: &Path, kind: &[&str], argv: &[&std::ffi::OsStr]) -> (PathBuf, Value) {
    let (db, json) = (dir.join("runs.db"), dir.join("run.json"));
    sysmeter()
        .args(kind)
        .arg("--db")
        .arg(&db)
        .args(["--format", "json", "--out"])
        .arg(&json)
        .arg("--")
        .args(argv)
        .assert()
        .success();
    let run = serde_json::from_slice(&std::fs::read(&json).expect("report")).expect("JSON");
    (db, run)
}

/// `export latest --format FORMAT --out FILE`, which must succeed.
fn export(db: &Path, format: &str, file: &Path) {
    sysmeter_db(db, &["export", "latest", "--format", format])
        .arg("--out")
        .arg(file)
        .assert()
        .success();
}

/// sysmeter's flat profile of a `profile` result: (function, share of the samples in %),
/// most samples first.
fn flat_shares(main: &Value) -> Vec<(String, f64)> {
    let flat: Vec<Value> = main["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["name"] == "flat"))
        .and_then(|x| serde_json::from_str(x["content"].as_str()?).ok())
        .expect("flat artifact");
    let own = |r: &Value| r["self_samples"].as_f64().unwrap_or(0.0);
    let total: f64 = flat.iter().map(own).sum();
    let mut shares: Vec<(String, f64)> = Vec::new();
    for r in &flat {
        let name = r["function"].as_str().expect("function").to_string();
        match shares.iter_mut().find(|s| s.0 == name) {
            Some(s) => s.1 += 100.0 * own(r) / total,
            None => shares.push((name, 100.0 * own(r) / total)),
        }
    }
    shares.sort_by(|a, b| b.1.total_cmp(&a.1));
    shares
}

/// Frames carry their source lines: pprof lists hot_a's source with time on the fixture's
/// loop line.
fn assert_hot_a_listed_with_its_loop_line(go: &Path, file: &Path) {
    let listing = pprof(go, &["-list=^hot_a$"], file);
    let hot_line = listing.lines().find(|l| l.contains("LCG_LOOP(n, x);"));
    let flat = hot_line.and_then(|l| l.split_whitespace().next());
    assert!(flat.is_some_and(|f| f != "."), "{listing}");
}

#[test]
fn pprof_top_of_a_profile_is_sysmeters_flat_profile() {
    let go = need!(go());
    let _alone = exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    need!(perf());
    let prog = need!(compile_fixture("profile_split", dir.path(), &[]));
    let (db, run) = stored_run(
        dir.path(),
        &["profile"],
        &[prog.as_os_str(), "300".as_ref()],
    );
    let main = result(&run, "profile");
    let ours = flat_shares(main);
    let file = dir.path().join("profile.pb.gz");
    export(&db, "pprof", &file);
    let rows = top_rows(&pprof(&go, &["-top", "-nodefraction=0"], &file));
    let share = |name: &str| ours.iter().find(|s| s.0 == name).map_or(0.0, |s| s.1);
    // Both ways: pprof's top five by flat have sysmeter's shares, and sysmeter's top five
    // pprof's.
    let theirs: Vec<_> = rows.iter().filter(|r| r.flat_pct > 0.0).take(5).collect();
    assert!(theirs.iter().any(|r| r.name == "hot_a"), "{rows:?}");
    for row in &theirs {
        let (name, got, want) = (&row.name, row.flat_pct, share(&row.name));
        assert!(
            (got - want).abs() <= 1.0,
            "{name}: pprof {got}%, sysmeter {want}%"
        );
    }
    for (name, want) in ours.iter().filter(|s| s.1 > 0.0).take(5) {
        let got = rows
            .iter()
            .find(|x| &x.name == name)
            .map_or(0.0, |x| x.flat_pct);
        assert!(
            (got - want).abs() <= 1.0,
            "{name}: pprof {got}%, sysmeter {want}%"
        );
    }
    assert_hot_a_listed_with_its_loop_line(&go, &file);
    let speedscope = dir.path().join("profile.speedscope.json");
    export(&db, "speedscope", &speedscope);
    need!(validate_speedscope(&speedscope));
    let file: Value =
        serde_json::from_slice(&std::fs::read(&speedscope).expect("read")).expect("JSON");
    let weights = file["profiles"][0]["weights"].as_array().expect("weights");
    let sum: f64 = weights.iter().filter_map(Value::as_f64).sum();
    let sampled = main["metrics"]
        .as_array()
        .and_then(|m| m.iter().find(|x| x["name"] == "CPU time sampled"))
        .and_then(|m| m["summary"]["median"].as_f64())
        .expect("CPU time sampled");
    // Each stack's nanoseconds are rounded on their own.
    assert!(
        (sum - sampled).abs() <= weights.len() as f64,
        "{sum} vs {sampled}"
    );
}

#[test]
fn pprof_inuse_space_of_an_alloc_run_shows_the_leak_with_its_bytes() {
    let go = need!(go());
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(compile_fixture("alloc_sites", dir.path(), &[]));
    let (db, run) = stored_run(dir.path(), &["alloc"], &[prog.as_os_str()]);
    let sites = crate::alloc::sites(&run);
    let leak = sites
        .iter()
        .find(|s| {
            s["site"]
                .as_str()
                .is_some_and(|s| s.starts_with("leak_pages"))
        })
        .expect("leak_pages site");
    let leaked = leak["leaked_bytes"].as_u64().expect("leaked bytes");
    assert!(leaked > 0, "{leak}");
    let file = dir.path().join("heap.pb.gz");
    export(&db, "pprof", &file);
    let top = pprof(
        &go,
        &["-sample_index=inuse_space", "-unit=B", "-top"],
        &file,
    );
    let rows = top_rows(&top);
    let row = rows.iter().find(|r| r.name == "leak_pages").expect(&top);
    assert_eq!(row.flat, format!("{leaked}B"), "{top}");
    // Through a pipe, the same bytes as the file.
    let piped = sysmeter_db(&db, &["export", "latest", "--format", "pprof"])
        .output()
        .expect("export runs");
    assert!(piped.status.success());
    assert_eq!(piped.stdout, std::fs::read(&file).expect("read"));
    let objects = top_rows(&pprof(&go, &["-sample_index=alloc_objects", "-top"], &file));
    assert!(!objects.is_empty(), "alloc_objects is a sample type");
    let speedscope = dir.path().join("heap.speedscope.json");
    export(&db, "speedscope", &speedscope);
    need!(validate_speedscope(&speedscope));
}

#[test]
fn both_profiles_export_on_and_off_cpu_time() {
    let go = need!(go());
    let _alone = crate::support::observing_alone(&[crate::support::Event::Sched]);
    let dir = tempfile::tempdir().expect("tempdir");
    need!(crate::support::needs::off_cpu());
    let prog = need!(compile_fixture("offcpu_spinnap", dir.path(), &["-pthread"]));
    let (db, run) = stored_run(dir.path(), &["profile", "--both"], &[prog.as_os_str()]);
    let file = dir.path().join("both.pb.gz");
    export(&db, "pprof", &file);
    // spin() ~300 ms on the CPU, then nap() ~300 ms off it (tests/it/offcpu.rs).
    for (index, function) in [("off_cpu", "nap"), ("cpu", "spin")] {
        let sample_index = format!("-sample_index={index}");
        let rows = top_rows(&pprof(&go, &[&sample_index, "-top"], &file));
        let row = rows.iter().find(|r| r.name == function);
        let row = row.unwrap_or_else(|| panic!("no {function} in {index}: {rows:?}"));
        assert!(row.cum_pct >= 90.0, "{rows:?}");
    }
    let speedscope = dir.path().join("both.speedscope.json");
    export(&db, "speedscope", &speedscope);
    need!(validate_speedscope(&speedscope));
    let file: Value =
        serde_json::from_slice(&std::fs::read(&speedscope).expect("read")).expect("JSON");
    let units: Vec<&Value> = file["profiles"]
        .as_array()
        .expect("profiles")
        .iter()
        .map(|p| &p["name"])
        .collect();
    assert_eq!(units, ["on-CPU time", "off-CPU time"], "{run}");
}

#[test]
fn pprof_of_a_locks_run_opens_in_go_tool_pprof() {
    let go = need!(go());
    let _alone = crate::support::observing_alone(&[crate::support::Event::Futex]);
    let dir = tempfile::tempdir().expect("tempdir");
    need!(crate::locks::backend_events("perf"));
    let prog = need!(compile_fixture("locks_phases", dir.path(), &["-pthread"]));
    let (db, run) = stored_run(
        dir.path(),
        &["locks", "--backend", "perf"],
        &[prog.as_os_str()],
    );
    let waits: u64 = crate::locks::rows(&run).iter().map(|r| r.1).sum();
    assert!(waits > 0, "the fixture's hot lock is contended");
    let file = dir.path().join("mutex.pb.gz");
    export(&db, "pprof", &file);
    let top = pprof(&go, &["-sample_index=contentions", "-top"], &file);
    assert!(top.contains("Type: contentions"), "{top}");
    assert!(
        top.contains(&format!("Total samples = {waits}")),
        "{waits} waits: {top}"
    );
    assert!(top.contains("worker"), "{top}");
    let delay = pprof(&go, &["-sample_index=delay", "-top"], &file);
    assert!(delay.contains("Type: delay"), "{delay}");
}

#[test]
fn formats_that_do_not_fit_the_run_are_refused_with_the_sentence() {
    let (dir, db) = crate::support::temp_db();
    sysmeter_db(&db, &["import"])
        .arg(sample_run_file(dir.path()))
        .assert()
        .success();
    for format in ["pprof", "speedscope"] {
        let out = dir.path().join(format);
        let mut cmd = sysmeter();
        cmd.args(["export", "latest", "--format", format, "--out"])
            .arg(&out)
            .arg("--db")
            .arg(&db);
        let stderr = stderr_of(&mut cmd, 2);
        assert!(
            stderr.contains(&format!("{format} export fits"))
                && stderr.contains("this is a bench run")
                && stderr.contains("--format json"),
            "{stderr}"
        );
        assert!(!out.exists(), "nothing written for a refused export");
    }
}

#[test]
fn pprof_is_never_written_to_a_terminal() {
    let (_dir, db) = crate::support::temp_db();
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    let command = format!(
        "'{}' export latest --format pprof --db '{}'; echo \"exit=$?\"",
        bin.display(),
        db.display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .output();
    let Ok(out) = out else {
        Missing::new(Cap::Script, "`script` (util-linux) gives the terminal").report();
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("binary and stdout is a terminal"), "{text}");
    assert!(
        text.contains("--out FILE") && text.contains("exit=2"),
        "{text}"
    );
}
