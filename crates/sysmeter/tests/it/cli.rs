//! Integration tests that drive the `sysmeter` binary: list, host, bench of one experiment
//! per group in every output format, history/show, and usage errors (exit 2).

use predicates::prelude::*;
use serde_json::Value;

use crate::support::cmd::refused;
use crate::support::sysmeter_db;
use crate::support::{json_out, stdout_of, sysmeter};

#[test]
fn list_names_every_experiment_and_group() {
    let text = stdout_of(sysmeter().arg("list"));
    let ids = [
        "cpu.timer",
        "cpu.loop",
        "cpu.call",
        "cpu.ops",
        "os.syscall",
        "os.task",
        "os.ctxsw",
        "os.lookup",
        "mem.latency",
        "mem.bandwidth",
        "mem.pagefault",
        "ipc.pipe",
        "ipc.unix",
        "ipc.tcp",
        "ipc.udp",
        "net.rtt",
        "net.bandwidth",
        "net.connect",
        "net.udp_rr",
        "fs.read",
        "fs.cache_size",
        "fs.contention",
        "fs.write",
        "fs.remote_read",
    ];
    for id in ids {
        assert!(text.contains(id), "missing {id} in:\n{text}");
    }
    // Every title starts in one column, whatever the length of its id.
    let columns: std::collections::BTreeSet<usize> = text
        .lines()
        .filter(|l| {
            ids.iter()
                .any(|id| l.trim_start().starts_with(&format!("{id} ")))
        })
        .map(|l| {
            let id_end = l.trim_start().find(' ').unwrap_or(0) + (l.len() - l.trim_start().len());
            id_end + l[id_end..].len() - l[id_end..].trim_start().len()
        })
        .collect();
    assert_eq!(
        columns.len(),
        1,
        "titles start at columns {columns:?}:\n{text}"
    );
    let v = json_out(sysmeter().args(["list", "--format", "json"]));
    assert_eq!(v.as_array().map(Vec::len), Some(ids.len()));
    assert!(v[0]["title"].as_str().is_some_and(|t| !t.is_empty()));
}

#[test]
fn host_describes_this_machine_in_text_and_json() {
    let v = json_out(sysmeter().args(["host", "--format", "json"]));
    let threads = v["cpu"]["threads"].as_u64().expect("cpu.threads");
    let available = std::thread::available_parallelism()
        .map(|n| n.get() as u64)
        .unwrap_or(1);
    assert!(
        threads >= available,
        "{threads} threads < {available} usable CPUs"
    );
    assert!(v["memory"]["total_bytes"].as_u64().is_some_and(|b| b > 0));
    assert!(v["capabilities"].as_array().is_some_and(|c| !c.is_empty()));
    if std::path::Path::new("/sys/devices/system/cpu/cpu0/cache/index0/size").exists() {
        assert!(
            v["caches"].as_array().is_some_and(|c| !c.is_empty()),
            "sysfs has caches"
        );
    }
    let text = stdout_of(sysmeter().arg("host"));
    assert!(!text.contains('\u{1b}'), "NO_COLOR output has escapes");
    assert!(text.to_lowercase().contains("cpu"));
}

fn bench_into(db: &std::path::Path, id: &str) -> Value {
    let _alone = crate::support::exclusive();
    let mut bench = sysmeter();
    bench.args([
        "bench", "--quick", "--rounds", "1", "--only", id, "--format", "json",
    ]);
    bench.arg("--db");
    json_out(bench.arg(db))
}

fn assert_complete_result(run: &Value, id: &str) {
    assert_eq!(run["schema"], 1);
    assert_eq!(run["kind"], "bench");
    let results = run["results"].as_array().expect("results");
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!(r["id"], id);
    assert_eq!(r["status"], "ok", "{r}");
    let metrics = r["metrics"].as_array().expect("metrics");
    assert!(!metrics.is_empty());
    for m in metrics {
        let s = &m["summary"];
        let (min, med, max) = (s["min"].as_f64(), s["median"].as_f64(), s["max"].as_f64());
        let (min, med, max) = (min.expect("min"), med.expect("median"), max.expect("max"));
        assert!(min <= med && med <= max, "{m}");
        assert!(s["n"].as_u64().is_some_and(|n| n >= 3));
        assert_eq!(
            m["samples"].as_array().map(Vec::len),
            s["n"].as_u64().map(|n| n as usize)
        );
        let lo = s["ci95"][0].as_f64().expect("ci lo");
        let hi = s["ci95"][1].as_f64().expect("ci hi");
        assert!(lo <= med && med <= hi, "CI must contain the median: {m}");
        if run["config"]["calibration"]["tsc_ghz"].is_f64() {
            assert!(
                m["cycles"]["median"].as_f64().is_some(),
                "cycles missing: {}",
                m["name"]
            );
        }
    }
    assert!(
        !r["findings"].as_array().expect("findings").is_empty(),
        "no findings for {id}"
    );
}

#[test]
fn bench_one_experiment_per_group_stores_and_reports() {
    let (_dir, db) = crate::support::temp_db();
    for id in ["cpu.loop", "os.syscall"] {
        let run = bench_into(&db, id);
        assert_complete_result(&run, id);
    }
    let v = json_out(&mut sysmeter_db(&db, &["history", "--format", "json"]));
    let runs = v.as_array().expect("history list");
    assert_eq!(runs.len(), 2);
    assert!(
        runs.iter()
            .all(|r| r["ok"] == 1 && r["interrupted"] == false)
    );
    let text = stdout_of(sysmeter().args(["history", "--db"]).arg(&db));
    assert!(text.contains(runs[0]["id"].as_str().expect("id")));
    let shown = json_out(&mut sysmeter_db(
        &db,
        &["show", "latest", "--format", "json"],
    ));
    assert_eq!(shown["id"], runs[0]["id"]);
    assert_eq!(shown["results"][0]["id"], "os.syscall");
}

#[test]
fn every_output_format_parses() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = |fmt: &str| {
        let bench = ["bench", "--quick", "--only", "cpu.loop", "--no-store"];
        stdout_of(sysmeter().args(bench).args(["--format", fmt]))
    };
    let v: Value = serde_json::from_str(&run("json")).expect("json parses");
    assert_eq!(v["results"][0]["id"], "cpu.loop");
    let csv_text = run("csv");
    let mut rdr = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = rdr.headers().expect("csv header").clone();
    assert!(headers.iter().any(|h| h == "median"), "{headers:?}");
    let rows: Vec<csv::StringRecord> = rdr.records().collect::<Result<_, _>>().expect("csv rows");
    assert!(rows.len() >= 2, "cpu.loop has two metrics");
    let md = run("markdown");
    assert!(md.lines().any(|l| l.starts_with("| metric")), "{md}");
    assert!(md.contains("cpu.loop"));
    let text = run("text");
    assert!(text.contains("empty loop") && !text.contains('\u{1b}'));
    // --out writes the same report to a file and nothing to stdout.
    let path = dir.path().join("out.json");
    sysmeter()
        .args([
            "bench",
            "--quick",
            "--only",
            "cpu.loop",
            "--no-store",
            "--format",
            "json",
            "--out",
        ])
        .arg(&path)
        .assert()
        .success()
        .stdout(predicate::str::is_empty());
    let file: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("out file")).expect("json");
    assert_eq!(file["results"][0]["id"], "cpu.loop");
}

#[test]
fn unknown_experiment_is_a_usage_error_listing_valid_ids() {
    let cases: [(&[&str], &[&str]); 4] = [
        (
            &["bench", "--no-store", "nonsense"],
            &["unknown experiment or group 'nonsense'", "os.syscall"],
        ),
        (
            &["bench", "--no-store", "--only", "cpu.nope"],
            &["valid groups: cpu, os, mem"],
        ),
        (&["bench", "--no-store", "--cpu", "4096", "cpu"], &["--cpu"]),
        (&["bench", "--quick", "--thorough"], &[]),
    ];
    for (args, names) in cases {
        refused(sysmeter().args(args), 2, names);
    }
}

#[test]
fn unreadable_database_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("not-a-db");
    std::fs::write(&bad, vec![0x5au8; 4096]).expect("write junk");
    sysmeter_db(&bad, &["history"]).assert().code(1).stderr(
        predicate::str::contains("not a sysmeter database")
            .or(predicate::str::contains("not a database")),
    );
    // An unknown run is bad input, like an unknown experiment (exit 2).
    refused(
        &mut sysmeter_db(dir.path().join("fresh.db"), &["show", "no-such-run"]),
        2,
        &["sysmeter history"],
    );
}

#[test]
fn a_new_database_opened_by_two_processes_at_once_works_for_both() {
    let bin = assert_cmd::cargo::cargo_bin("sysmeter");
    for round in 0..5 {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = dir.path().join("new.db");
        let reader = std::process::Command::new(&bin)
            .args(["history", "--db"])
            .arg(&db)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("start history");
        let bench = std::process::Command::new(&bin)
            .args(["bench", "--quick", "--only", "cpu.loop", "--db"])
            .arg(&db)
            .output()
            .expect("run bench");
        let reader = reader.wait_with_output().expect("history");
        assert!(
            bench.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&bench.stderr)
        );
        assert!(
            reader.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&reader.stderr)
        );
    }
}
