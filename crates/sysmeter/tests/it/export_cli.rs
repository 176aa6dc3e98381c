//! Integration tests of `export` (OpenMetrics, JSON, CSV of a stored run), the generated
//! shell completions and man page, NO_COLOR under a real terminal, and the exit codes
//! (0 success, 1 failure or regression, 2 usage error; 130 is in interrupt.rs).

use std::path::Path;

use predicates::prelude::*;
use sysmeter::model::RunRecord;

use crate::support::cmd::refused;
use crate::support::skip::{Cap, Missing};
use crate::support::{need, stdout_of, sysmeter};

/// A database holding one real `bench --quick --only cpu.loop` run, and that run as printed.
fn db_with_run(dir: &Path) -> (std::path::PathBuf, RunRecord) {
    let db = dir.join("runs.db");
    let printed = stdout_of(
        sysmeter()
            .args([
                "bench", "--quick", "--only", "cpu.loop", "--format", "json", "--db",
            ])
            .arg(&db),
    );
    let run: RunRecord = serde_json::from_str(&printed).expect("bench JSON is a run record");
    (db, run)
}

#[test]
fn export_gives_the_stored_run_in_every_format() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, run) = db_with_run(dir.path());
    let export =
        |args: &[&str]| stdout_of(sysmeter().arg("export").args(args).arg("--db").arg(&db));
    // JSON: the stored record is the one bench printed.
    let json = export(&["latest", "--format", "json"]);
    let back: RunRecord = serde_json::from_str(&json).expect("export JSON");
    assert_eq!(back, run);
    // OpenMetrics: exactly the library's rendering of that record.
    let om = export(&[&run.id, "--openmetrics"]);
    assert_eq!(om, sysmeter::report::openmetrics::render(&run));
    assert!(om.ends_with("# EOF\n"));
    assert!(om.contains("# TYPE sysmeter_latency_seconds summary"));
    let needle = format!(
        "experiment=\"cpu.loop\",metric=\"{}\",quantile=\"0.5\"}}",
        run.results[0].metrics[0].name
    );
    assert!(om.contains(&needle), "{needle} missing in\n{om}");
    assert_eq!(om, export(&["--format", "openmetrics"]));
    // CSV: a header and one row per metric.
    let csv_text = export(&["--format", "csv"]);
    let mut rdr = csv::Reader::from_reader(csv_text.as_bytes());
    assert!(rdr.headers().expect("header").iter().any(|h| h == "median"));
    assert_eq!(rdr.records().count(), run.results[0].metrics.len());
}

#[test]
fn export_out_replaces_the_file_readable_by_others() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, _) = db_with_run(dir.path());
    let file = dir.path().join("sysmeter.prom");
    std::fs::write(&file, "old contents").expect("write");
    sysmeter()
        .args(["export", "--openmetrics", "--out"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    let text = std::fs::read_to_string(&file).expect("read export");
    assert!(
        text.starts_with("# HELP ") && text.ends_with("# EOF\n"),
        "{text}"
    );
    let mode = std::fs::metadata(&file).expect("stat").permissions().mode();
    assert_eq!(mode & 0o777, 0o644);
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("ls")
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.to_string_lossy().starts_with(".tmp")),
        "{names:?}"
    );
    refused(
        sysmeter()
            .args(["export", "--out"])
            .arg(dir.path().join("no/such/dir/x.prom"))
            .arg("--db")
            .arg(&db),
        2,
        &["cannot write --out"],
    );
}

#[test]
fn completions_come_from_the_clap_definitions() {
    let bash = stdout_of(sysmeter().args(["completions", "bash"]));
    for word in [
        "bench",
        "--only",
        "compare",
        "--fail-above",
        "export",
        "--openmetrics",
    ] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    let zsh = stdout_of(sysmeter().args(["completions", "zsh"]));
    assert!(zsh.starts_with("#compdef sysmeter") && zsh.contains("--only"));
    let fish = stdout_of(sysmeter().args(["completions", "fish"]));
    assert!(fish.contains("complete -c sysmeter") && fish.contains("only"));
    sysmeter().args(["completions", "tcsh"]).assert().code(2);
}

#[test]
fn committed_man_page_is_up_to_date() {
    let generated = stdout_of(sysmeter().arg("man"));
    assert!(generated.starts_with(".ie") && generated.contains(".TH sysmeter 1"));
    for section in ["COMMANDS", "EXIT STATUS", "ENVIRONMENT", "sysmeter compare"] {
        assert!(generated.contains(section), "man page lacks {section}");
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/sysmeter.1");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/sysmeter.1 is stale (the CLI definitions changed); update it with \
         `cargo run -- man > docs/sysmeter.1` from the repository root"
    );
}

#[test]
fn exit_codes_follow_the_spec() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fresh = dir.path().join("fresh.db");
    sysmeter().arg("--help").assert().success();
    sysmeter().arg("--version").assert().success();
    sysmeter().arg("frobnicate").assert().code(2);
    sysmeter().args(["bench", "--bogus"]).assert().code(2);
    sysmeter().arg("compare").assert().code(2);
    for cmd in ["show", "export"] {
        refused(
            sysmeter().args([cmd, "no-such-run", "--db"]).arg(&fresh),
            2,
            &["no run 'no-such-run'", "sysmeter history"],
        );
    }
    refused(
        sysmeter().args(["show", "latest~x", "--db"]).arg(&fresh),
        2,
        &["not a run reference"],
    );
}

/// Runs `command` (a shell command line) under a pseudo-terminal with `script`, with
/// NO_COLOR set or not; `Err` when `script` is not available.
fn in_terminal(command: &str, no_color: bool) -> Result<String, Missing> {
    let mut c = std::process::Command::new("script");
    c.args(["-qec", command, "/dev/null"])
        .env_remove("SYSMETER_DB");
    if no_color {
        c.env("NO_COLOR", "1");
    } else {
        c.env_remove("NO_COLOR");
    }
    let out = c.output().map_err(|e| {
        let why = format!("`script` (util-linux) is not runnable ({e}), so no terminal to test in");
        Missing::new(Cap::Script, why)
    })?;
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).to_string())
}

/// Whether `text` holds an SGR (colour / bold) escape sequence.
fn has_sgr(text: &str) -> bool {
    predicate::str::is_match(r"\x1b\[[0-9;]*m")
        .expect("valid regex")
        .eval(text)
}

#[test]
fn no_color_is_honoured_on_a_terminal() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, run) = db_with_run(dir.path());
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    let (bin, db) = (bin.display(), db.display());
    let colored = need!(in_terminal(
        &format!("'{bin}' show latest --db '{db}'"),
        false
    ));
    // Without NO_COLOR a terminal gets bold headers: the check below can see escapes.
    assert!(has_sgr(&colored), "{colored}");
    let commands = [
        format!("'{bin}' show latest --db '{db}'"),
        format!("'{bin}' compare latest {} --db '{db}'", run.id),
        format!("'{bin}' history --db '{db}'"),
        format!("'{bin}' host"),
        format!("'{bin}' list"),
        format!("'{bin}' bench --help"),
        format!("'{bin}' bench --quick --only cpu.loop --no-store"),
    ];
    for command in commands {
        let out = in_terminal(&command, true).expect("script ran before");
        assert!(
            !has_sgr(&out),
            "{command} wrote colour with NO_COLOR set:\n{out}"
        );
        assert!(out.len() > 40, "{command} printed too little:\n{out}");
    }
}

#[test]
fn a_reader_that_stops_reading_is_not_a_crash() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, _) = db_with_run(dir.path());
    let db = db.to_string_lossy().to_string();
    let commands: [&[&str]; 9] = [
        &["man"],
        &["history", "--db", &db],
        &["completions", "bash"],
        &["list"],
        &["host"],
        &["show", "--db", &db],
        &["export", "--openmetrics", "--db", &db],
        &["compare", "latest", "latest", "--db", &db],
        &["bench", "--quick", "--only", "cpu.loop", "--no-store"],
    ];
    for args in commands {
        // A pipe whose read end is already closed: the first write fails with EPIPE.
        let (reader, writer) = std::io::pipe().expect("pipe");
        drop(reader);
        let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("sysmeter"))
            .args(args)
            .env_remove("SYSMETER_DB")
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .expect("run sysmeter");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
    }
}
