//! Bad input to every command (issue 13), table-driven through the binary: each case exits
//! with its documented code (2 usage error, 126/127 for a program that cannot be started,
//! like a shell), says exactly one `error:` sentence on stderr, prints nothing on stdout and
//! never panics. Nothing in the table measures anything: every case fails before (the
//! bench cases name one quick experiment, so a case that wrongly passes costs little).

use std::path::Path;

use sysmeter::store::Store;

use crate::support::sample::{db_with_sample_run, sample_run_file};
use crate::support::sysmeter_db;
use crate::support::{BENCH_JSON, stderr_of, sysmeter};

/// The cases: a command line (with the placeholders of [`expand`]) and its exit code.
const CASES: &[(&str, i32)] = &[
    ("nosuch", 2),
    ("--bogus", 2),
    ("list --format xml", 2),
    ("list extra", 2),
    ("list --bogus", 2),
    ("host --format yaml", 2),
    ("host extra", 2),
    ("bench nosuch", 2),
    ("bench os.nosuch", 2),
    ("bench --only nope", 2),
    ("bench --quick --thorough", 2),
    ("bench --rounds 0", 2),
    ("bench --rounds 101", 2),
    ("bench --rounds x", 2),
    ("bench --max-size 0", 2),
    ("bench --max-size 12X", 2),
    ("bench --cpu 9999", 2),
    ("bench --cpu x", 2),
    ("bench --format xml", 2),
    ("bench --seed -1", 2),
    ("bench --quick --only cpu.loop --no-store --db {db}", 2),
    ("bench --quick --only cpu.loop --db postgres://", 2),
    (
        "bench --quick --only cpu.loop --db {db} --out /nonexistent/dir/x.json",
        2,
    ),
    (
        "bench --quick --only cpu.loop --db {db} --out /proc/x.json",
        2,
    ),
    ("bench --quick --only cpu.loop --db {db} --out {dir}", 2),
    ("bench --quick --only cpu.loop --db {db} --out {db}", 2),
    ("history --limit x", 2),
    ("history --format xml", 2),
    ("history --db postgres://", 2),
    ("history --db postgresql://", 2),
    ("history extra --db {db}", 2),
    ("show  --db {db}", 2),
    ("show nosuch --db {db}", 2),
    ("show latest~x --db {db}", 2),
    ("show latest~-1 --db {db}", 2),
    ("show latest~99 --db {db}", 2),
    ("show latest~ --db {db}", 2),
    ("show --format xml --db {db}", 2),
    ("show a b --db {db}", 2),
    ("show --db postgres://", 2),
    ("run", 2),
    ("run --no-store --duration 1 -- true", 2),
    ("run --no-store --duration 500ms -- true", 2),
    ("run --no-store -p 1 -- true", 2),
    ("run --no-store -p 999999999", 2),
    ("run --no-store -p x", 2),
    ("run --no-store --interval 0 -- true", 2),
    ("run --no-store --interval 70000 -- true", 2),
    ("run --no-store -p 1 --duration 0", 2),
    ("run --no-store -p 1 --duration -1s", 2),
    ("run --no-store -p 1 --duration abc", 2),
    ("run --no-store --out /nonexistent/x -- true", 2),
    ("run --no-store --out {dir} -- true", 2),
    ("run --no-store --format xml -- true", 2),
    ("run --no-store --db {db} -- true", 2),
    ("run --no-store -- /nonexistent/program", 127),
    ("run --no-store -- {noexec}", 126),
    ("trace", 2),
    ("trace --no-store -p 1 -- true", 2),
    ("trace --no-store -e nosuchcall -- true", 2),
    ("trace --no-store --backend nope -- true", 2),
    ("trace --no-store --duration 0 -- true", 2),
    ("trace --no-store --duration xs -- true", 2),
    ("trace --no-store -p 999999999", 2),
    ("trace --no-store --out {dir} -- true", 2),
    ("trace --no-store --format xml -- true", 2),
    ("trace --no-store -- /nonexistent/program", 127),
    ("trace --no-store -- {noexec}", 126),
    ("alloc", 2),
    ("alloc --no-store -p 999999999", 2),
    ("alloc --no-store -p 1 -- true", 2),
    ("alloc --no-store --duration 0 -- true", 2),
    ("alloc --no-store --out {dir} -- true", 2),
    ("alloc --no-store --format xml -- true", 2),
    ("alloc --no-store -- /nonexistent/program", 127),
    ("alloc --no-store -- {noexec}", 126),
    ("locks", 2),
    ("locks --no-store -p 999999999", 2),
    ("locks --no-store -p 1 -- true", 2),
    ("locks --no-store --duration 0 -- true", 2),
    ("locks --no-store --out {dir} -- true", 2),
    ("locks --no-store --format xml -- true", 2),
    ("locks --no-store -- /nonexistent/program", 127),
    ("locks --no-store -- {noexec}", 126),
    ("profile", 2),
    ("profile --no-store -F 0 -- true", 2),
    ("profile --no-store -F 100000000 -- true", 2),
    ("profile --no-store -p 999999999", 2),
    ("profile --no-store -p 1 -- true", 2),
    ("profile --no-store --duration 0 -- true", 2),
    ("profile --no-store --flamegraph {dir} -- true", 2),
    ("profile --no-store --folded /nonexistent/x -- true", 2),
    ("profile --no-store --out /proc/x -- true", 2),
    ("profile --no-store -- /nonexistent/program", 127),
    ("profile --no-store -- {noexec}", 126),
    ("scale --no-store -- true {n}", 2),
    ("scale --no-store --sizes 1,2 -- true {n}", 2),
    ("scale --no-store --sizes x -- true {n}", 2),
    ("scale --no-store --range 1..0 -- true {n}", 2),
    ("scale --no-store --range abc -- true {n}", 2),
    ("scale --no-store --sizes 1,2,3 --repeat 0 -- true {n}", 2),
    ("scale --no-store --sizes 1,2,3 --timeout 0 -- true {n}", 2),
    ("scale --no-store --sizes 1,2,3 --timeout xs -- true {n}", 2),
    (
        "scale --no-store --sizes 1,2,3 -- /nonexistent/program {n}",
        2,
    ),
    ("scale --no-store --sizes 1,2,3 --out {dir} -- true {n}", 2),
    ("scale --no-store --sizes 1,2,3 --format xml -- true {n}", 2),
    ("scale --no-store --sizes 1,2,3 --predict x -- true {n}", 2),
    ("scale --no-store --sizes 1,2,3 --time nope -- true {n}", 2),
    ("scale --no-store --sizes 1,2,3", 2),
    ("compare {json}", 2),
    ("compare nosuch {json} --db {db}", 2),
    ("compare {json} {dir}/missing.json", 2),
    ("compare {json} {bad}", 2),
    ("compare {json} {empty}", 2),
    ("compare {json} {newer}", 2),
    ("compare {json} {dir}/", 2),
    ("compare - -", 2),
    ("compare {json} {json} --threshold=-3", 2),
    ("compare {json},{json} {json}", 2),
    ("compare a,,b {json}", 2),
    ("compare {json} {json} --fail-above x", 2),
    ("compare {json} {other} --fail-above 5", 2),
    ("compare latest~x {json} --db {db}", 2),
    ("compare {json} {json} --format xml", 2),
    ("report {json}", 2),
    ("report {bad} --html {dir}/x.html", 2),
    ("report {empty} --html {dir}/x.html", 2),
    ("report {dir}/missing.json --html {dir}/x.html", 2),
    ("report {newer} --html {dir}/x.html", 2),
    ("report {json} --html /nonexistent/dir/x.html", 2),
    ("report {json} --html /proc/x.html", 2),
    ("report {json} --html {dir}", 2),
    ("report {json} --markdown /nonexistent/x.md", 2),
    ("report nosuch --html {dir}/x.html --db {db}", 2),
    ("report latest --html {dir}/x.html --db postgres://", 2),
    ("report latest --html {db} --db {db}", 2),
    ("export nosuch --db {db}", 2),
    ("export --format xml --db {db}", 2),
    ("export --out /nonexistent/x --db {db}", 2),
    ("export --out {dir} --db {db}", 2),
    ("export --out {db} --db {db}", 2),
    ("export --db postgres://", 2),
    ("export latest~x --db {db}", 2),
    ("serve --bogus", 2),
    ("serve extra", 2),
    ("completions nosh", 2),
    ("completions", 2),
    ("man extra", 2),
    ("man --bogus", 2),
    ("bench --only os.syscall --only", 2),
    // A socket where a file is expected: refused before anything is measured.
    ("export --out {sock} --db {db}", 2),
    ("bench --only cpu.loop --no-store --out {sock}", 2),
    // A mistyped database for a command that only reads: it holds no runs, and nothing is
    // created (checked after the table).
    ("show latest --db {dir}/typo/runs.db", 2),
    ("export latest --db {dir}/typo/runs.db", 2),
    (
        "report latest --html {dir}/x.html --db {dir}/typo/runs.db",
        2,
    ),
    ("compare latest~1 latest --db {dir}/typo/runs.db", 2),
];

/// The files the cases name, in `dir`.
fn setup(dir: &Path) -> Vec<(&'static str, String)> {
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).expect("write fixture");
        p.display().to_string()
    };
    let (db, run) = db_with_sample_run(dir);
    let mut newer = serde_json::to_value(&run).expect("json");
    newer["schema"] = 99.into();
    let mut other = run.clone();
    other.results.retain(|r| r.id != "os.syscall");
    let noexec = write("noexec", "#!/bin/sh\n");
    // The socket file stays when the listener is dropped.
    let sock = dir.join("listening.sock");
    drop(std::os::unix::net::UnixListener::bind(&sock).expect("bind a unix socket"));
    vec![
        ("{db}", db.display().to_string()),
        (
            "{json}",
            write("run.json", &serde_json::to_string(&run).expect("json")),
        ),
        ("{bad}", write("bad.json", "{\"schema\": 1, \"id\": ")),
        ("{empty}", write("empty.json", "")),
        ("{newer}", write("newer.json", &newer.to_string())),
        (
            "{other}",
            write("other.json", &serde_json::to_string(&other).expect("json")),
        ),
        ("{noexec}", noexec),
        ("{sock}", sock.display().to_string()),
        ("{dir}", dir.display().to_string()),
    ]
}

/// The case's arguments: split on single spaces (two spaces make an empty argument), with
/// the placeholders replaced.
fn expand(case: &str, files: &[(&str, String)]) -> Vec<String> {
    if case.is_empty() {
        return Vec::new();
    }
    case.split(' ')
        .map(|word| {
            files
                .iter()
                .fold(word.to_string(), |w, (key, value)| w.replace(key, value))
        })
        .collect()
}

#[test]
fn bad_input_to_every_command_is_one_sentence_and_the_documented_code() {
    assert!(CASES.len() >= 100, "{} cases", CASES.len());
    let dir = tempfile::tempdir().expect("tempdir");
    let files = setup(dir.path());
    let mut failures = Vec::new();
    for &(case, code) in CASES {
        let args = expand(case, &files);
        let out = sysmeter().args(&args).output().expect("run sysmeter");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let errors = stderr.lines().filter(|l| l.starts_with("error:")).count();
        let ok = out.status.code() == Some(code)
            && errors == 1
            && out.stdout.is_empty()
            && !stderr.contains("panicked");
        if !ok {
            failures.push(format!(
                "`{case}`: exit {:?} (want {code}), {errors} error lines, stdout {} bytes:\n{stderr}",
                out.status.code(),
                out.stdout.len()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
    assert!(
        !dir.path().join("typo").exists(),
        "a read created the mistyped path"
    );
}

#[test]
fn a_new_database_and_its_directory_are_the_users_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("new/dir/runs.db");
    stderr_of(
        sysmeter_db(&db, &["import"]).arg(sample_run_file(dir.path())),
        0,
    );
    let mode = |p: &Path| std::fs::metadata(p).expect("stat").permissions().mode() & 0o777;
    assert_eq!(mode(&db), 0o600, "database file");
    assert_eq!(mode(&dir.path().join("new/dir")), 0o700, "its directory");
}

#[test]
fn an_explicit_no_store_wins_over_sysmeter_db() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("env.db");
    let out = sysmeter()
        .env("SYSMETER_DB", &db)
        .args(["run", "--no-store", "--", "true"])
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("stored as run"), "{stderr}");
    assert!(!db.exists(), "--no-store stored into SYSMETER_DB");
    // Without --no-store the environment still names the database.
    sysmeter()
        .env("SYSMETER_DB", &db)
        .args(["run", "--", "true"])
        .assert()
        .success();
    let listed = Store::open(&db).expect("db").list_runs(10).expect("list");
    assert_eq!(listed.len(), 1);
    // And SYSMETER_DB=postgres:// (no host) is a usage error, like --db.
    stderr_of(
        sysmeter().env("SYSMETER_DB", "postgres://").arg("history"),
        2,
    );
}

#[test]
fn durations_parse_alike_for_every_command() {
    // `run -p PID --duration 500ms` is accepted like `trace --duration 500ms`.
    let mut sleeper = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("sleep");
    let pid = sleeper.id().to_string();
    sysmeter()
        .args(["run", "--no-store", "-p", &pid, "--duration", "500ms"])
        .assert()
        .success();
    sleeper.kill().expect("kill sleep");
    sleeper.wait().expect("reap");
}

#[test]
fn a_failed_experiment_says_why_on_stderr_too() {
    let _alone = crate::support::exclusive();
    let cases: [(&[&str], &str); 2] = [
        (
            &["--only", "fs.read", "--dir", "/nonexistent/dir"],
            "error: fs.read failed: cannot use --dir /nonexistent/dir",
        ),
        (
            &["--only", "net.rtt", "--remote", "127.0.0.1:1"],
            "error: net.rtt failed: connecting to 127.0.0.1:1 failed",
        ),
    ];
    for (args, sentence) in cases {
        let out = sysmeter()
            .args(BENCH_JSON)
            .args(args)
            .output()
            .expect("bench");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(sentence), "{args:?}: {stderr}");
        // And the report (stdout) still has it.
        let run: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        assert_eq!(run["results"][0]["status"], "failed");
    }
}
