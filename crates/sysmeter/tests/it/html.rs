//! Integration tests of `sysmeter report`: the HTML page and Markdown of a real
//! `bench --quick cpu.loop os.syscall mem.latency` run (from the database and from a JSON
//! file), escaping and flame graphs through a JSON file, usage errors, and the page loaded in
//! headless Chromium (`skip!` with capability `chromium` where it is missing or cannot start).

use std::path::{Path, PathBuf};

use sysmeter::model::fixture::sample_run;
use sysmeter::model::{Artifact, RunRecord};

use crate::support::chromium::{find_chromium, load_in_chromium};
use crate::support::cmd::refused;
use crate::support::skip::{Cap, Missing};
use crate::support::{need, sysmeter};

/// The experiments of the real run: a bar chart each, and the latency curves.
const EXPERIMENTS: [&str; 3] = ["cpu.loop", "os.syscall", "mem.latency"];

fn path_arg(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// Runs the quick bench into `dir/runs.db` and saves its JSON as `dir/run.json`.
fn bench(dir: &Path) -> (PathBuf, PathBuf) {
    let _alone = crate::support::exclusive();
    let (db, json) = (dir.join("runs.db"), dir.join("run.json"));
    sysmeter()
        .args([
            "bench",
            "--quick",
            "--rounds",
            "1",
            "--format",
            "json",
            "--out",
            path_arg(&json),
        ])
        .args(["--db", path_arg(&db)])
        .args(EXPERIMENTS)
        .assert()
        .success();
    (db, json)
}

/// Renders `run` (reference or file) to `dir/NAME.html`, returning the page.
fn report_html(run: &str, db: Option<&Path>, dir: &Path, name: &str) -> String {
    let out = dir.join(format!("{name}.html"));
    let mut cmd = sysmeter();
    cmd.args(["report", run, "--html", path_arg(&out)]);
    if let Some(db) = db {
        cmd.args(["--db", path_arg(db)]);
    }
    cmd.assert().success();
    std::fs::read_to_string(&out).expect("report written")
}

/// Every `<path d>` and `<polyline points>` holds coordinates; returns how many there are.
fn assert_paths_drawn(html: &str) -> usize {
    let mut count = 0;
    for (tag, attr) in [("<path", " d=\""), ("<polyline", " points=\"")] {
        for (i, _) in html.match_indices(tag) {
            let element = &html[i..i + html[i..].find('>').expect("tag closes")];
            let start = element.find(attr).expect("geometry attribute") + attr.len();
            let value = &element[start..start + element[start..].find('"').expect("quoted")];
            assert!(value.trim().len() > 3, "empty geometry in {element}");
            count += 1;
        }
    }
    count
}

/// No resource of the page comes from the network.
fn assert_self_contained(html: &str) {
    let lower = html.to_ascii_lowercase();
    for needle in [
        "src=\"http",
        "href=\"http",
        "src='http",
        "href='http",
        "url(",
        "@import",
    ] {
        assert!(!lower.contains(needle), "network reference {needle}");
    }
    assert!(!lower.contains("http://") && !lower.contains("https://"));
    assert!(!lower.contains("<link") && !lower.contains("<script"));
}

/// The cache levels mem.latency detected in `run` (findings `hierarchy.<L>.size_bytes`).
fn detected_levels(run: &RunRecord) -> Vec<String> {
    let latency = run.results.iter().find(|r| r.id == "mem.latency");
    let keys = latency.into_iter().flat_map(|r| r.findings.iter());
    keys.filter_map(|f| {
        let level = f
            .key
            .strip_prefix("hierarchy.")?
            .strip_suffix(".size_bytes")?;
        Some(level.to_string())
    })
    .collect()
}

/// `report --markdown` writes what `show --format markdown` prints.
fn assert_markdown_is_shows(db: &Path, dir: &Path) {
    let md = dir.join("run.md");
    let (md_arg, db_arg) = (path_arg(&md), path_arg(db));
    sysmeter()
        .args(["report", "latest", "--markdown", md_arg, "--db", db_arg])
        .assert()
        .success();
    let shown = sysmeter()
        .args(["show", "latest", "--format", "markdown", "--db", db_arg])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = std::fs::read_to_string(md).expect("markdown written");
    assert_eq!(
        md,
        String::from_utf8_lossy(&shown),
        "report --markdown is show's"
    );
}

#[test]
fn real_bench_run_renders_to_a_self_contained_page_and_markdown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (db, json) = bench(dir.path());
    let html = report_html("latest", Some(&db), dir.path(), "latest");
    assert_self_contained(&html);
    for id in EXPERIMENTS {
        let anchor = format!("id=\"exp-{}\"", id.replace('.', "-"));
        assert!(html.contains(&anchor), "section of {id} missing");
    }
    // Bars for cpu.loop and os.syscall; curves and bars for mem.latency.
    assert!(html.matches("<svg class=\"chart\"").count() >= 4);
    assert!(
        assert_paths_drawn(&html) >= 4,
        "the latency curves are paths"
    );
    assert!(html.contains("working set [B] (log scale)"));
    let run: RunRecord =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("a run");
    for level in detected_levels(&run) {
        let marker = format!(">{level} ends ");
        assert!(html.contains(&marker), "no marker for the detected {level}");
    }
    // The same run from its JSON file renders the same page.
    let from_file = report_html(path_arg(&json), None, dir.path(), "file");
    assert_eq!(
        from_file, html,
        "JSON file and database give different pages"
    );
    assert_markdown_is_shows(&db, dir.path());
}

/// The fixture run with a `<script>` metric name and a real inferno flame graph, saved as
/// JSON in `dir`.
fn hostile_run_file(dir: &Path) -> PathBuf {
    let mut run = sample_run();
    run.results[0].metrics[0].name = "<script>alert('metric')</script>".into();
    run.results[0].artifacts = vec![flame_graph()];
    let path = dir.join("hostile.json");
    std::fs::write(&path, serde_json::to_string(&run).expect("serialise")).expect("write");
    path
}

/// A flame graph from inferno, as `sysmeter profile` stores one.
fn flame_graph() -> Artifact {
    let folded = [
        "main;parse;<lex> 30",
        "main;parse;tree 12",
        "main;render 20",
    ];
    let mut options = inferno::flamegraph::Options::default();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.iter().copied(), &mut svg)
        .expect("inferno renders");
    Artifact {
        name: "flamegraph".into(),
        media_type: "image/svg+xml".into(),
        content: String::from_utf8(svg).expect("SVG is UTF-8"),
    }
}

#[test]
fn a_json_file_with_markup_and_a_flame_graph_renders_escaped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = hostile_run_file(dir.path());
    let html = report_html(path_arg(&file), None, dir.path(), "hostile");
    assert!(!html.contains("<script"), "the metric name became markup");
    assert!(html.contains("&#60;script&#62;alert(&#39;metric&#39;)"));
    assert!(html.contains("<iframe class=\"flame\""));
    assert!(html.contains("src=\"data:image/svg+xml;base64,"));
    assert_self_contained(&html);
    assert_paths_drawn(&html);
}

#[test]
fn usage_errors_name_the_problem() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("empty.db");
    let report = ["report", "latest", "--db", path_arg(&db)];
    refused(sysmeter().args(report), 2, &["--html"]);
    let report = ["report", "missing-run.json", "--html", "out.html"];
    refused(
        sysmeter().args(report),
        2,
        &["no run file missing-run.json"],
    );
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"not\": \"a run\"}").expect("write");
    let out = dir.path().join("out.html");
    sysmeter()
        .args(["report", path_arg(&bad), "--html", path_arg(&out)])
        .assert()
        .failure()
        .stderr(predicates::str::contains("is not a sysmeter run record"));
    sysmeter()
        .args([
            "report",
            "no-such-id",
            "--html",
            path_arg(&out),
            "--db",
            path_arg(&db),
        ])
        .assert()
        .failure()
        .stderr(predicates::str::contains("no-such-id"));
    assert!(
        !out.exists(),
        "nothing is written when the run cannot be loaded"
    );
}

#[test]
fn html_report_of_a_real_run_loads_in_headless_chromium() {
    let bin = need!(find_chromium());
    let dir = tempfile::tempdir().expect("tempdir");
    let (_, json) = bench(dir.path());
    let mut run: RunRecord =
        serde_json::from_str(&std::fs::read_to_string(&json).expect("json")).expect("a run");
    // Two flame graphs: inferno's scripts must not clash (docs/kernel-traps.md).
    run.results[0].artifacts = vec![flame_graph()];
    run.results[1].artifacts = vec![flame_graph()];
    std::fs::write(&json, serde_json::to_string(&run).expect("serialise")).expect("write");
    let html = report_html(path_arg(&json), None, dir.path(), "page");
    let profile = dir.path().join("chromium-profile");
    let loaded = load_in_chromium(&bin, &dir.path().join("page.html"), &profile, &[]);
    let (dom, log) = need!(loaded.map_err(|reason| Missing::new(Cap::Chromium, reason)));
    let charts = html.matches("<svg class=\"chart\"").count();
    assert!(charts >= 4);
    assert_eq!(
        dom.matches("<svg class=\"chart\"").count(),
        charts,
        "charts in the DOM"
    );
    assert_eq!(assert_paths_drawn(&dom), assert_paths_drawn(&html));
    assert_eq!(dom.matches("<iframe class=\"flame\"").count(), 2);
    let problems: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Failed to load resource"))
        .filter(|l| {
            ["Uncaught", "Error", "Failed", "Refused"]
                .iter()
                .any(|w| l.contains(w))
        })
        .collect();
    assert!(problems.is_empty(), "browser errors: {problems:#?}");
}

#[test]
fn a_hostile_flame_graph_in_a_record_loads_nothing_from_the_network() {
    let bin = need!(find_chromium());
    let dir = tempfile::tempdir().expect("tempdir");
    // Something to call home to: a listener on loopback that counts who connects.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let port = listener.local_addr().expect("addr").port();
    let home = CallHome::answer(listener);
    let svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"100\" height=\"100\" \
         onload=\"fetch('http://127.0.0.1:{port}/script').catch(function(){{}})\">\
         <image href=\"http://127.0.0.1:{port}/image\" width=\"10\" height=\"10\"/>\
         <rect width=\"10\" height=\"10\"/></svg>"
    );
    let mut run = sample_run();
    run.results[0].artifacts = vec![Artifact {
        name: "flamegraph".into(),
        media_type: "image/svg+xml".into(),
        content: svg,
    }];
    let json = dir.path().join("evil.json");
    std::fs::write(&json, serde_json::to_string(&run).expect("serialise")).expect("write");
    let html = report_html(path_arg(&json), None, dir.path(), "evil");
    assert!(
        html.contains("Content-Security-Policy"),
        "the page states its policy"
    );
    let profile = dir.path().join("chromium-profile");
    let loaded = load_in_chromium(&bin, &dir.path().join("evil.html"), &profile, &[]);
    let (dom, _) = need!(loaded.map_err(|reason| Missing::new(Cap::Chromium, reason)));
    assert!(
        dom.contains("<iframe class=\"flame\""),
        "the frame was rendered"
    );
    let calls = home.stop();
    assert!(calls.is_empty(), "the page reached the network: {calls:?}");
}

/// A loopback listener that answers every connection at once (so a page that calls it
/// still finishes loading) and keeps the first line of each request.
struct CallHome {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    worker: std::thread::JoinHandle<Vec<String>>,
}

impl CallHome {
    fn answer(listener: std::net::TcpListener) -> CallHome {
        use std::io::{Read, Write};
        listener.set_nonblocking(true).expect("nonblocking");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = std::sync::Arc::clone(&stop);
        let worker = std::thread::spawn(move || {
            let mut calls = Vec::new();
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                let Ok((mut s, _)) = listener.accept() else {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    continue;
                };
                let _ = s.set_nonblocking(false);
                let _ = s.set_read_timeout(Some(std::time::Duration::from_secs(1)));
                let mut head = [0u8; 128];
                let n = s.read(&mut head).unwrap_or(0);
                let line = String::from_utf8_lossy(&head[..n]);
                calls.push(line.lines().next().unwrap_or("").to_string());
                let _ = s.write_all(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n");
            }
            calls
        });
        CallHome { stop, worker }
    }

    /// The requests seen.
    fn stop(self) -> Vec<String> {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.worker.join().expect("listener thread")
    }
}
