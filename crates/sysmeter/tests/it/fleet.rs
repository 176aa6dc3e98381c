//! `sysmeter import` and `sysmeter fleet` on an SQLite store: five machines' run records
//! imported (the same file twice stores it once; a damaged file is refused with one
//! sentence and exit 2, the others still imported), the slow machine found as the only
//! outlier, in `os.syscall` only, in every format, and the HTML page loaded in headless
//! Chromium (`skip!` with capability `chromium` where it cannot run). The same fleet on
//! PostgreSQL is `pg::fleet`.

use std::path::Path;

use crate::support::chromium::{find_chromium, load_in_chromium};
use crate::support::fleet::{SLOW, fleet_files, outliers};
use crate::support::skip::{Cap, Missing};
use crate::support::{json_out, need, stderr_of, stdout_of, sysmeter};

fn arg(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// `sysmeter fleet --db DB ARGS…`.
fn fleet(db: &str, args: &[&str]) -> assert_cmd::Command {
    let mut c = sysmeter();
    c.args(["fleet", "--db", db]).args(args);
    c
}

/// A store holding the five machines' runs.
fn imported_fleet(dir: &Path) -> String {
    let db = dir.join("fleet.db");
    let files = fleet_files(dir);
    let mut import = sysmeter();
    import.args(["import", "--db", arg(&db)]).args(&files);
    let out = stdout_of(&mut import);
    assert!(out.contains("5 run(s) imported, 0 already stored"), "{out}");
    arg(&db).to_string()
}

#[test]
fn the_slow_host_is_the_only_outlier_and_only_in_os_syscall() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = imported_fleet(dir.path());
    let doc = json_out(&mut fleet(&db, &["--format", "json"]));
    let found = outliers(&doc);
    assert!(!found.is_empty(), "no outlier found: {doc}");
    for (host, experiment) in &found {
        assert_eq!((host.as_str(), experiment.as_str()), (SLOW, "os.syscall"));
    }
    assert_eq!(doc["hosts"].as_array().map(Vec::len), Some(5));
    let o = &doc["outliers"][0];
    let ratio = o["value"].as_f64().expect("value") / o["fleet_median"].as_f64().expect("median");
    assert!((1.9..2.1).contains(&ratio), "{o}");
    assert_eq!(o["differences"][0]["field"], "kernel", "{o}");
    let group = &doc["outlier_groups"][0];
    assert_eq!(group["hosts"], serde_json::json!([SLOW]), "{doc}");
    assert_eq!(group["shared"][0]["value"], "6.11.0-9-generic", "{doc}");
    let text = stdout_of(&mut fleet(&db, &[]));
    let outliers_at = text.find("Outliers").expect("outliers section");
    assert!(
        text[outliers_at..].starts_with("Outliers")
            && text.contains(&format!(
                "The outlier {SLOW} runs kernel 6.11.0-9-generic; none of the other 4 hosts \
                 does (the usual kernel: 6.8.0-45-generic)."
            )),
        "{text}"
    );
    assert!(
        outliers_at < text.find("Metrics:").expect("metrics"),
        "{text}"
    );
    let md = stdout_of(&mut fleet(&db, &["--format", "markdown"]));
    assert!(md.contains(&format!("- **{SLOW}**: `os.syscall`")), "{md}");
    // Only the memory metrics: the same fleet has no outlier there.
    let mem = json_out(&mut fleet(&db, &["--metric", "mem.*", "--format", "json"]));
    assert!(outliers(&mem).is_empty(), "{mem}");
    assert!(
        mem["metrics"]
            .as_array()
            .expect("metrics")
            .iter()
            .all(|m| m["experiment"] == "mem.pagefault")
    );
}

#[test]
fn fleet_refuses_what_it_cannot_show() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = imported_fleet(dir.path());
    let err = stderr_of(&mut fleet(&db, &["--since", "2030-01-01"]), 2);
    assert!(
        err.contains("a fleet needs two or more") && err.contains("sysmeter import"),
        "{err}"
    );
    let err = stderr_of(&mut fleet(&db, &["--since", "yesterday"]), 2);
    assert!(err.contains("is not a date"), "{err}");
    let err = stderr_of(&mut fleet(&db, &["--metric", "gpu.*"]), 2);
    assert!(err.contains("matches no metric"), "{err}");
}

#[test]
fn import_skips_stored_runs_and_refuses_damaged_files_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("one.db");
    let files = fleet_files(dir.path());
    let once = stdout_of(sysmeter().args(["import", "--db", arg(&db), arg(&files[0])]));
    assert!(once.contains("1 run(s) imported"), "{once}");
    let twice = stdout_of(sysmeter().args(["import", "--db", arg(&db), arg(&files[0])]));
    assert!(
        twice.contains("already stored") && twice.contains("0 run(s) imported"),
        "{twice}"
    );
    let damaged = dir.path().join("damaged.json");
    let text = std::fs::read_to_string(&files[1]).expect("read");
    std::fs::write(&damaged, &text[..text.len() / 2]).expect("write");
    let out = sysmeter()
        .args(["import", "--db", arg(&db), arg(&damaged), arg(&files[2])])
        .output()
        .expect("run import");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("damaged.json is not a sysmeter run record"),
        "{err}"
    );
    let listed = json_out(sysmeter().args(["history", "--format", "json", "--db", arg(&db)]));
    let ids: Vec<&str> = listed
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| r["id"].as_str().expect("id"))
        .collect();
    assert_eq!(
        ids.len(),
        2,
        "the good file is imported beside the damaged one: {ids:?}"
    );
}

/// The ids `history` lists in `db`.
fn stored_ids(db: &Path) -> Vec<String> {
    let listed = json_out(sysmeter().args(["history", "--format", "json", "--db", arg(db)]));
    let runs = listed.as_array().expect("runs").iter();
    runs.map(|r| r["id"].as_str().expect("id").to_string())
        .collect()
}

/// `file` rewritten by `edit` on its JSON, saved as `name` in `dir`.
fn edited(
    dir: &Path,
    file: &Path,
    name: &str,
    edit: impl FnOnce(&mut serde_json::Value),
) -> String {
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(file).expect("read")).expect("json");
    edit(&mut doc);
    let path = dir.join(name);
    std::fs::write(&path, doc.to_string()).expect("write");
    arg(&path).to_string()
}

#[test]
fn import_refuses_records_the_store_cannot_hold_and_stores_nothing_of_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("strict.db");
    let files = fleet_files(dir.path());
    let cases = [
        edited(dir.path(), &files[0], "huge-n.json", |d| {
            d["results"][0]["metrics"][0]["summary"]["n"] = u64::MAX.into();
        }),
        edited(dir.path(), &files[1], "huge-elapsed.json", |d| {
            d["results"][0]["elapsed_ns"] = u64::MAX.into();
        }),
        edited(dir.path(), &files[2], "evil-host.json", |d| {
            d["host"]["hostname"] = "evil\u{1b}]0;pwned\u{7}\u{1b}[2J".into();
        }),
        edited(dir.path(), &files[3], "evil-id.json", |d| {
            d["id"] = "run\u{1b}[2J".into();
        }),
        edited(dir.path(), &files[3], "evil-finding.json", |d| {
            d["results"][0]["findings"][0]["text"] = "all fine\u{1b}[2J\u{9b}31m".into();
        }),
    ];
    let mut import = sysmeter();
    import
        .args(["import", "--db", arg(&db)])
        .args(&cases)
        .arg(arg(&files[4]));
    let out = import.output().expect("run import");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.lines().count(),
        5,
        "one sentence per refused file: {err}"
    );
    assert!(
        err.lines().all(|l| l.contains("nothing of it was stored")),
        "{err}"
    );
    assert!(!err.contains('\u{1b}') && !err.contains("bug"), "{err:?}");
    // Only the good file is stored, whole; the refused ones can be fixed and imported later.
    let ids = stored_ids(&db);
    assert_eq!(ids.len(), 1, "{ids:?}");
    let shown = json_out(sysmeter().args(["show", &ids[0], "--format", "json", "--db", arg(&db)]));
    assert!(shown["finished_ns"].is_i64(), "stored whole: {shown}");
}

#[test]
fn two_imports_of_the_same_files_at_once_both_succeed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("shared.db");
    let files = fleet_files(dir.path());
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    let start = || {
        std::process::Command::new(&bin)
            .args(["import", "--db", arg(&db)])
            .args(&files)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start import")
    };
    for _ in 0..3 {
        let _ = std::fs::remove_file(&db);
        let (a, b) = (start(), start());
        for child in [a, b] {
            let out = child.wait_with_output().expect("import");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(0), "{err}");
        }
        assert_eq!(stored_ids(&db).len(), files.len());
    }
}

#[test]
fn fleet_html_loads_in_headless_chromium() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = imported_fleet(dir.path());
    let html = stdout_of(&mut fleet(&db, &["--format", "html"]));
    assert!(
        html.contains("<svg") && !html.contains("http:") && !html.contains("https:"),
        "self-contained page"
    );
    // A chart per headline metric: the three os.syscall metrics (the outliers), then one
    // each of os.ctxsw and mem.pagefault.
    assert_eq!(html.matches("<figure>").count(), 5, "{html}");
    assert_eq!(html.matches("<circle").count(), 5 * 5);
    let page = dir.path().join("fleet.html");
    std::fs::write(&page, &html).expect("write page");
    let bin = need!(find_chromium());
    let loaded = load_in_chromium(&bin, &page, &dir.path().join("profile"), &[]);
    let (dom, log) = need!(loaded.map_err(|reason| Missing::new(Cap::Chromium, reason)));
    let errors = log
        .lines()
        .filter(|l| l.contains("CONSOLE") && l.contains("Error"));
    assert_eq!(errors.count(), 0, "browser errors: {log}");
    assert_eq!(
        dom.matches("<circle").count(),
        5 * 5,
        "the browser kept every dot"
    );
    assert!(dom.contains(SLOW) && dom.contains("Outliers"));
}
