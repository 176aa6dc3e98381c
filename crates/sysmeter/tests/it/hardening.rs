//! Hardening IV (issue 47), through the binary: retention and `latest` by what the store
//! knows (a run dated three years ahead is never latest and never displaces a real run),
//! stored text that would act on a terminal (OSC, CSI, C1 and a right-to-left override in
//! hostnames written by SQL, and in `SYSMETER_HOSTNAME`) printed escaped by every printer,
//! charts bounded at both ends (a value of 1.7e308 beside normal ones, rendered under a
//! memory limit and said on the page, refused by `import`), and a full disk or an exhausted
//! quota named as such, losing nothing (`hardening/disk.rs`). The SIGKILLed bench followed
//! by `prune` is in `killed.rs`.

mod disk;

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::assert::OutputAssertExt;

use sysmeter::model::fixture::sample_run;

use crate::support::sample::sample_run_file;
use crate::support::{json_out, stderr_of, stdout_of, sysmeter, sysmeter_db};

/// The sample run written as `dir/NAME.json` with `edit` applied.
pub(crate) fn record(dir: &Path, name: &str, edit: impl FnOnce(&mut serde_json::Value)) -> PathBuf {
    let mut doc = serde_json::to_value(sample_run()).expect("json");
    edit(&mut doc);
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, doc.to_string()).expect("write record");
    path
}

/// `dir/runs.db` holding the sample run, stored by the binary: the database and the run.
fn db_with_sample_run(dir: &Path) -> (PathBuf, sysmeter::model::RunRecord) {
    let db = dir.join("runs.db");
    let file = sample_run_file(dir);
    stdout_of(sysmeter().arg("import").arg("--db").arg(&db).arg(&file));
    (db, sample_run())
}

/// Ids of the runs `history` lists in `db`.
pub(crate) fn stored_ids(db: &Path) -> Vec<String> {
    let listed = json_out(&mut sysmeter_db(db, &["history", "--format", "json"]));
    let runs = listed.as_array().expect("runs").iter();
    runs.map(|r| r["id"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn a_run_dated_years_ahead_is_never_latest_and_never_displaces_a_real_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, real) = db_with_sample_run(dir.path());
    let three_years = 3 * 365 * 86_400 * 1_000_000_000i64;
    let future = record(dir.path(), "future", |d| {
        d["id"] = "20291124T000000Z-futr".into();
        d["started_ns"] = (real.started_ns + three_years).into();
        d["finished_ns"] = (real.finished_ns.expect("finished") + three_years).into();
    });
    stdout_of(sysmeter().arg("import").arg("--db").arg(&db).arg(&future));
    let latest = json_out(&mut sysmeter_db(
        &db,
        &["show", "latest", "--format", "json"],
    ));
    assert_eq!(
        latest["id"],
        real.id.as_str(),
        "a run dated ahead is not latest"
    );
    let dry = stdout_of(&mut sysmeter_db(
        &db,
        &["prune", "--keep", "1", "--dry-run"],
    ));
    assert!(
        dry.contains("would delete run 20291124T000000Z-futr"),
        "{dry}"
    );
    assert!(!dry.contains(&real.id), "{dry}");
    stdout_of(sysmeter().args(["prune", "--keep", "1", "--db"]).arg(&db));
    assert_eq!(stored_ids(&db), vec![real.id]);
}

/// Hostnames that act on a terminal, as SQL (an older build, another member of a shared
/// store, a hand-made row) can store them.
const HOSTILE_HOSTS: [(&str, &str); 3] = [
    ("osc", "evil\u{1b}]0;pwned\u{7}\u{1b}[2J"),
    ("csi", "red\u{9b}31m\u{1b}[31mhost"),
    ("bidi", "good\u{202e}evil"),
];

/// No character that acts on a terminal in `text`, and the escape of each one shown.
fn assert_escaped(what: &str, text: &str) {
    let raw = text.chars().find(|c| {
        (c.is_control() && *c != '\n' && *c != '\t') || ('\u{202a}'..='\u{202e}').contains(c)
    });
    assert_eq!(
        raw, None,
        "{what}: a raw control or bidi character:\n{text}"
    );
}

#[test]
fn stored_hostnames_never_reach_the_terminal_or_a_page_raw() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, real) = db_with_sample_run(dir.path());
    let conn = rusqlite::Connection::open(&db).expect("open");
    for (name, host) in HOSTILE_HOSTS {
        conn.execute(
            "INSERT INTO runs (id, schema, kind, started_ns, finished_ns, interrupted,
                               tool_version, hostname, host_json, config_json)
             SELECT ?1, schema, kind, started_ns, finished_ns, interrupted, tool_version, ?2,
                    json_set(host_json, '$.hostname', ?2), config_json
             FROM runs WHERE id = ?3",
            rusqlite::params![format!("run-{name}"), host, real.id],
        )
        .expect("insert a hostile row");
    }
    drop(conn);
    let db = db.to_str().expect("utf-8").to_string();
    let page = dir.path().join("p.html");
    let page_s = page.to_str().expect("utf-8").to_string();
    let printed = [
        ("history", vec!["history", "--all-hosts", "--db", &db]),
        ("fleet", vec!["fleet", "--db", &db]),
        ("show", vec!["show", "run-osc", "--db", &db]),
        (
            "compare",
            vec!["compare", "run-csi", "run-bidi", "--db", &db],
        ),
        (
            "report",
            vec!["report", "run-bidi", "--markdown", "-", "--db", &db],
        ),
        (
            "html",
            vec!["report", "run-osc", "--html", &page_s, "--db", &db],
        ),
    ];
    for (what, args) in printed {
        let out = sysmeter().args(&args).output().expect("run sysmeter");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert_escaped(what, &text);
    }
    let history = stdout_of(sysmeter().args(["history", "--all-hosts", "--db", &db]));
    assert!(history.contains("good\\u202eevil"), "{history}");
    assert!(history.contains("evil\\u001b]0;pwned"), "{history}");
    let html = std::fs::read_to_string(&page).expect("page");
    assert_escaped("html page", &html);
    assert!(
        html.contains("evil\\u001b]0;pwned"),
        "the page shows the escape"
    );
}

#[test]
fn a_hostname_override_that_acts_on_a_terminal_is_refused_when_set() {
    let (_dir, db) = crate::support::temp_db();
    for (_, host) in HOSTILE_HOSTS {
        let err = stderr_of(
            sysmeter()
                .env("SYSMETER_HOSTNAME", host)
                .args(["bench", "--quick", "--only", "cpu.loop", "--db"])
                .arg(&db),
            2,
        );
        assert_escaped("bench", &err);
        assert!(
            err.contains("SYSMETER_HOSTNAME holds the character"),
            "{err}"
        );
    }
    let ok = sysmeter_db(&db, &["history"]).output().expect("history");
    assert!(
        ok.status.success(),
        "nothing was stored under a hostile name"
    );
    assert!(!String::from_utf8_lossy(&ok.stdout).contains("evil"));
}

/// The sample run with one median of 1.7e308 (and its maximum) beside normal values.
fn extreme(dir: &Path) -> PathBuf {
    record(dir, "extreme", |d| {
        let summary = &mut d["results"][0]["metrics"][0]["summary"];
        summary["median"] = 1.7e308.into();
        summary["max"] = f64::MAX.into();
    })
}

#[test]
fn a_value_beyond_any_chart_is_left_out_under_a_memory_limit_and_refused_at_import() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = extreme(dir.path());
    let page = dir.path().join("extreme.html");
    // 1 GiB of address space: the unbounded axis asked for 2^31 ticks (16 GiB).
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    Command::new("sh")
        .args(["-c", "ulimit -v 1048576 && exec \"$0\" \"$@\""])
        .arg(&bin)
        .args(["report", "--html"])
        .arg(&page)
        .arg(&file)
        .env("NO_COLOR", "1")
        .assert()
        .success();
    let html = std::fs::read_to_string(&page).expect("page");
    assert!(html.contains("Left out of the charts:"), "the page says it");
    assert!(html.contains("results[0].metrics[0].summary.median = 1.7e308"));
    let db = dir.path().join("runs.db");
    let err = stderr_of(sysmeter().arg("import").arg("--db").arg(&db).arg(&file), 2);
    assert!(err.contains("beyond what a chart can show"), "{err}");
    assert!(err.contains("nothing of it was stored"), "{err}");
}
