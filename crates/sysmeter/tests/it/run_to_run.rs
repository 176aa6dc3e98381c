//! The run-to-run interval through the binary (issue 33): a stored run with a history of its
//! host shows it in `show` (its table column, the line that says where it comes from) and in
//! `export --format json`; a run with too few runs before it says its interval covers this
//! run only; runs stored after a run do not change what it shows.

use std::path::{Path, PathBuf};

use sysmeter::model::RunRecord;
use sysmeter::model::fixture::sample_run;
use sysmeter::stats::summarize;

use crate::support::sysmeter_db;
use crate::support::{json_of, stdout_of, sysmeter};

/// The fixture as run `id`, started `i` minutes after it, its samples scaled by `factor`.
fn run(id: &str, i: i64, factor: f64) -> RunRecord {
    let mut run = sample_run();
    run.id = id.to_string();
    run.started_ns += i * 60_000_000_000;
    run.finished_ns = Some(run.started_ns + 30_000_000_000);
    for m in run.results.iter_mut().flat_map(|r| &mut r.metrics) {
        m.samples.iter_mut().for_each(|s| *s *= factor);
        m.summary = summarize(&m.samples, 1).expect("finite samples");
    }
    run
}

/// A database holding eight runs `h0`…`h7` of one host whose values move by a few percent.
fn history(dir: &Path) -> PathBuf {
    let db = dir.join("runs.db");
    let factors = [1.0, 1.06, 0.95, 1.03, 0.98, 1.07, 0.94, 1.02];
    let files: Vec<PathBuf> = (factors.iter().enumerate())
        .map(|(i, f)| {
            let r = run(&format!("h{i}"), i as i64, *f);
            let path = dir.join(format!("h{i}.json"));
            std::fs::write(&path, serde_json::to_string(&r).expect("serialise")).expect("write");
            path
        })
        .collect();
    sysmeter_db(&db, &["import"])
        .args(&files)
        .assert()
        .success();
    db
}

fn show(db: &Path, id: &str) -> String {
    stdout_of(sysmeter().args(["show", "--full", "--db"]).arg(db).arg(id))
}

#[test]
fn show_gives_a_run_with_history_its_run_to_run_interval() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = history(dir.path());
    let text = show(&db, "h7");
    assert!(text.contains("within-run 95% CI"), "{text}");
    assert!(text.contains("run to run (next run, 95%)"), "{text}");
    assert!(text.contains("(8 runs)"), "{text}");
    assert!(
        text.contains("run to run: from the 8 stored runs of this host"),
        "{text}"
    );
    let concise = stdout_of(sysmeter().args(["show", "--db"]).arg(&db).arg("h7"));
    assert!(
        concise.contains("run to run: from the 8 stored runs"),
        "{concise}"
    );
    let out = sysmeter_db(&db, &["export", "--format", "json"])
        .arg("h7")
        .assert()
        .success();
    let doc = json_of(&out.get_output().stdout);
    let null = &doc["results"][0]["metrics"][1];
    assert_eq!(null["name"], "null (getppid)");
    let rr = &null["run_to_run"];
    assert_eq!(rr["basis"], "history", "{rr}");
    assert_eq!(rr["runs"], 8, "{rr}");
    let (lo, hi) = (rr["lo"].as_f64(), rr["hi"].as_f64());
    let (ci_lo, ci_hi) = (
        null["summary"]["ci95"][0].as_f64(),
        null["summary"]["ci95"][1].as_f64(),
    );
    // The runs moved by ±7%: the interval is wider than the within-run CI on both sides.
    assert!(lo < ci_lo && hi > ci_hi, "{rr} vs {ci_lo:?}–{ci_hi:?}");
}

#[test]
fn an_early_run_covers_this_run_only_and_later_runs_do_not_change_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = history(dir.path());
    // Three runs up to h2 (fewer than five), and the fixture has no rounds.
    let early = show(&db, "h2");
    assert!(
        early.contains("run to run: this run only (no stored runs or rounds)"),
        "{early}"
    );
    // h5 has six runs up to it; h6 and h7, stored after it, do not count.
    let middle = show(&db, "h5");
    assert!(middle.contains("(6 runs)"), "{middle}");
    assert!(!middle.contains("(8 runs)"), "{middle}");
}
