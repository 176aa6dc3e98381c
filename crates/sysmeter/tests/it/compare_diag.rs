//! `sysmeter compare` of diagnosis runs through the binary: the `compare_split` fixture
//! profiled with `sm_b` doing twice the work finds `sm_b` "grew" and `sm_a` "no change"; two
//! runs of one program find no change beyond the nominal false-positive rate; `--rounds N`
//! is stored and read back from the database; runs of two kinds, or of one kind observing
//! different things, are refused with one sentence (exit 2).
//!
//! Profiling tests need perf events and `cc` (capabilities `perf`, `cc`) and hold
//! [`exclusive`]. Sides are profiled interleaved (A, B, A, B) and compared as sets, so a
//! drift of the loaded machine's speed lands on both sides alike.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sysmeter::model::fixture::sample_run;
use sysmeter::model::{About, Artifact, ExperimentResult, RunKind, RunRecord};

use crate::support::cmd::usage_error;
use crate::support::needs::perf;
use crate::support::skip::Missing;
use crate::support::{compile_fixture, exclusive, json_out, need, sysmeter};

fn fixture(dir: &Path) -> Result<PathBuf, Missing> {
    perf()?;
    compile_fixture("compare_split", dir, &[])
}

/// `profile` of `prog 40 B_UNITS` (`rounds` rounds) written to `out`.
fn profile(prog: &Path, b_units: &str, rounds: &str, out: &Path, db: Option<&Path>) {
    let mut cmd = sysmeter();
    cmd.args(["profile", "--rounds", rounds, "--format", "json", "--out"])
        .arg(out);
    match db {
        Some(db) => cmd.arg("--db").arg(db),
        None => cmd.arg("--no-store"),
    };
    cmd.arg("--")
        .arg(prog)
        .args(["40", b_units])
        .assert()
        .success();
}

/// Sides A (`sm_b` of `a_units`) and B (`b_units`), two runs each, profiled interleaved,
/// compared as sets: the comparison's JSON.
fn compared_sets(dir: &Path, prog: &Path, a_units: &str, b_units: &str) -> Value {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..2 {
        for (side, units, paths) in [("a", a_units, &mut a), ("b", b_units, &mut b)] {
            let path = dir.join(format!("{side}{i}.json"));
            profile(prog, units, "1", &path, None);
            paths.push(path.display().to_string());
        }
    }
    json_out(sysmeter().args(["compare", "--format", "json", &a.join(","), &b.join(",")]))
}

/// The verdict of `key` in table `table` of a comparison.
pub(crate) fn verdict<'a>(cmp: &'a Value, table: &str, key: &str) -> &'a Value {
    let t = table_of(cmp, table);
    let k = t["keys"]
        .as_array()
        .and_then(|k| k.iter().find(|k| k["key"] == key));
    k.unwrap_or_else(|| panic!("no {key} in {table}: {t}"))
}

pub(crate) fn table_of<'a>(cmp: &'a Value, name: &str) -> &'a Value {
    let tables = cmp["tables"].as_array().expect("tables");
    let t = tables.iter().find(|t| t["name"] == name);
    t.unwrap_or_else(|| panic!("no table {name} in {cmp}"))
}

const SELF: &str = "CPU samples per function (self)";

#[test]
fn a_doubled_function_grew_and_an_unchanged_one_did_not() {
    let _alone = exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(fixture(dir.path()));
    // A loaded machine may still move sm_a beyond its interval now and then: the tool's
    // verdict is asked again once before the test calls it wrong.
    let mut last = Value::Null;
    for _ in 0..2 {
        let cmp = compared_sets(dir.path(), &prog, "2", "4");
        let b = verdict(&cmp, SELF, "sm_b");
        assert_eq!(b["verdict"], "grew", "{b}");
        assert!(b["interval"]["low"].as_f64().expect("low") > 0.0, "{b}");
        let first = &table_of(&cmp, SELF)["keys"][0];
        assert_eq!(first["key"], "sm_b", "sm_b leads: {first}");
        if verdict(&cmp, SELF, "sm_a")["verdict"] == "no_change" {
            return;
        }
        last = cmp;
    }
    panic!("sm_a changed twice: {}", verdict(&last, SELF, "sm_a"));
}

#[test]
fn two_runs_of_one_program_show_no_change() {
    let _alone = exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(fixture(dir.path()));
    let cmp = compared_sets(dir.path(), &prog, "2", "2");
    let keys = table_of(&cmp, SELF)["keys"]
        .as_array()
        .expect("keys")
        .clone();
    let mut top: Vec<&Value> = keys.iter().collect();
    let size = |k: &Value| {
        k["a"]
            .as_f64()
            .unwrap_or(0.0)
            .max(k["b"].as_f64().unwrap_or(0.0))
    };
    top.sort_by(|x, y| size(y).total_cmp(&size(x)));
    let changed: Vec<&&Value> = top
        .iter()
        .take(10)
        .filter(|k| k["verdict"] != "no_change")
        .collect();
    // The nominal 5% false-positive rate, with margin: at most one of the ten largest.
    assert!(changed.len() <= 1, "{changed:?}");
}

#[test]
fn rounds_are_stored_and_read_back() {
    let _alone = exclusive();
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(fixture(dir.path()));
    let db = dir.path().join("runs.db");
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    profile(&prog, "2", "2", &a, Some(&db));
    profile(&prog, "2", "3", &b, Some(&db));
    let run: Value = serde_json::from_slice(&std::fs::read(&a).expect("run")).expect("JSON");
    let main = &run["results"][0];
    let tallies: Value = crate::support::artifact_json(main, "rounds");
    assert_eq!(tallies.as_array().map(Vec::len), Some(2), "{tallies}");
    // From the store, by id: the rounds come back.
    let id = |run: &Path| -> String {
        let v: Value = serde_json::from_slice(&std::fs::read(run).expect("run")).expect("JSON");
        v["id"].as_str().expect("id").to_string()
    };
    let cmp = json_out(
        sysmeter()
            .args(["compare", "--format", "json", "--db"])
            .arg(&db)
            .args([id(&a), id(&b)]),
    );
    assert_eq!(cmp["rounds_a"], 2);
    assert_eq!(cmp["rounds_b"], 3);
}

/// A profile-kind record whose one result is `id` with the artifact `artifact`.
fn sampled(run_id: &str, id: &str, artifact: &str) -> RunRecord {
    let mut run = sample_run();
    run.id = run_id.into();
    run.kind = RunKind::Profile;
    let mut r = ExperimentResult::new(id, About::default());
    r.artifacts.push(Artifact {
        name: artifact.into(),
        media_type: "text/plain".into(),
        content: "main;f 10\n".into(),
    });
    run.results = vec![r];
    run
}

#[test]
fn runs_of_two_kinds_or_two_diagnoses_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |run: &RunRecord| {
        let path = dir.path().join(format!("{}.json", run.id));
        std::fs::write(&path, serde_json::to_string(run).expect("JSON")).expect("write");
        path
    };
    let on = write(&sampled("on", "profile", "folded"));
    let off = write(&sampled("off", "offcpu", "offcpu folded"));
    let mut locks = sample_run();
    (locks.id, locks.kind) = ("locks".into(), RunKind::Locks);
    let locks = write(&locks);
    let e = usage_error(sysmeter().arg("compare").args([&on, &locks]), &["compare"]);
    assert!(e.contains("a profile run and run locks a locks run"), "{e}");
    let e = usage_error(sysmeter().arg("compare").args([&on, &off]), &["compare"]);
    assert!(
        e.contains("run on observed profile and run off observed offcpu"),
        "{e}"
    );
    assert_eq!(e.trim().lines().count(), 1, "{e}");
}
