//! The HTML layouts in headless Chromium: a page of every run kind (the bench fixture and the
//! real `run`, `trace`, `profile` and `scale` records in src/report/html/fixtures) and the
//! `compare --html` page must hold their answer element on the first screen. The position
//! comes from Chromium's own layout: a test copy of the page carries a small script that
//! writes the answer's bounding box into the DOM, read back with `--dump-dom` in a
//! 1280×900 window. `skip!` with capability `chromium` where Chromium is missing.

use std::path::Path;

use sysmeter::model::RunRecord;
use sysmeter::model::fixture::sample_run;

use crate::support::chromium::{find_chromium, load_in_chromium};
use crate::support::skip::{Cap, Missing};
use crate::support::sysmeter_db;
use crate::support::{need, stdout_of, sysmeter};

/// The first screen, px.
const FIRST_SCREEN: f64 = 900.0;

/// Writes the answer's box into the DOM as `answer-box TOP HEIGHT`.
const PROBE: &str = "<script>(function () {\
  var a = document.getElementById('answer'); var r = a.getBoundingClientRect();\
  var p = document.createElement('pre'); p.id = 'answer-box';\
  p.textContent = 'answer-box ' + r.top + ' ' + r.height;\
  document.body.appendChild(p); })();</script>";

/// A run of every kind, as JSON.
fn every_kind() -> Vec<(&'static str, String)> {
    let bench = serde_json::to_string(&sample_run()).expect("serialise");
    vec![
        ("bench", bench),
        (
            "run",
            include_str!("../../src/report/html/fixtures/run.json").into(),
        ),
        (
            "trace",
            include_str!("../../src/report/html/fixtures/trace.json").into(),
        ),
        (
            "profile",
            include_str!("../../src/report/html/fixtures/profile.json").into(),
        ),
        (
            "scale",
            include_str!("../../src/report/html/fixtures/scale.json").into(),
        ),
    ]
}

/// Loads a test copy of `page` (with [`PROBE`]) in Chromium: (answer top, height, DOM).
fn answer_box(bin: &Path, page: &Path) -> Result<(f64, f64, String), Missing> {
    let html = std::fs::read_to_string(page).expect("page written");
    let copy = page.with_extension("probe.html");
    std::fs::write(&copy, html.replace("</body>", &format!("{PROBE}</body>"))).expect("write");
    let profile = page.with_extension("chromium");
    let size = ["--window-size=1280,900", "--hide-scrollbars"];
    let (dom, _) = load_in_chromium(bin, &copy, &profile, &size)
        .map_err(|reason| Missing::new(Cap::Chromium, reason))?;
    let mark = "<pre id=\"answer-box\">answer-box ";
    let start = dom.find(mark).expect("the probe ran") + mark.len();
    let line = &dom[start..start + dom[start..].find('<').expect("pre closes")];
    let numbers: Vec<f64> = line
        .split_whitespace()
        .map(|n| n.parse().expect("a number"))
        .collect();
    Ok((numbers[0], numbers[1], dom))
}

#[test]
fn every_run_kind_shows_its_answer_on_the_first_screen() {
    let bin = need!(find_chromium());
    let dir = tempfile::tempdir().expect("tempdir");
    for (kind, json) in every_kind() {
        let run: RunRecord = serde_json::from_str(&json).expect("a run");
        assert_eq!(run.kind.as_str(), kind);
        let (file, page) = (
            dir.path().join(format!("{kind}.json")),
            dir.path().join(kind),
        );
        std::fs::write(&file, &json).expect("write");
        let page = page.with_extension("html");
        sysmeter()
            .args(["report", file.to_str().expect("utf-8"), "--html"])
            .arg(&page)
            .assert()
            .success();
        let (top, height, dom) = need!(answer_box(&bin, &page));
        assert!(dom.contains(&format!("class=\"answer {kind}\"")), "{kind}");
        assert!(height > 0.0, "{kind}: the answer has a height");
        assert!(
            (0.0..FIRST_SCREEN - 100.0).contains(&top),
            "{kind}: the answer starts at {top} px, not on the first screen"
        );
    }
}

/// Two runs of the bench fixture, B's samples 30% larger: A.json and B.json in `dir`.
fn two_runs(dir: &Path) -> [String; 2] {
    let a = sample_run();
    let mut b = sample_run();
    b.id = "20261122T190000Z-b0b0".into();
    for r in &mut b.results {
        for m in &mut r.metrics {
            m.samples.iter_mut().for_each(|s| *s *= 1.3);
            m.summary.median *= 1.3;
        }
    }
    [("A", a), ("B", b)].map(|(name, run)| {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_string(&run).expect("json")).expect("write");
        path.to_str().expect("utf-8").to_string()
    })
}

#[test]
fn compare_html_holds_the_change_chart_with_whiskers_and_band() {
    let bin = need!(find_chromium());
    let dir = tempfile::tempdir().expect("tempdir");
    let [a, b] = two_runs(dir.path());
    // Two stored runs, compared by id as a user would after two benches.
    let db = dir.path().join("runs.db");
    sysmeter_db(&db, &["import", &a, &b]).assert().success();
    let page = dir.path().join("compare.html");
    let md = dir.path().join("compare.md");
    let out = sysmeter()
        .args([
            "compare",
            "20261122T183242Z-3f9a",
            "20261122T190000Z-b0b0",
            "--db",
        ])
        .arg(&db)
        .arg("--html")
        .arg(&page)
        .arg("--markdown")
        .arg(&md)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        stdout.contains("change [95% CI]"),
        "the text still goes to stdout"
    );
    let markdown = std::fs::read_to_string(&md).expect("markdown written");
    assert!(markdown.starts_with("# sysmeter compare"));
    let (top, _, dom) = need!(answer_box(&bin, &page));
    assert!(
        (0.0..FIRST_SCREEN - 100.0).contains(&top),
        "answer at {top} px"
    );
    let chart = &dom[dom.find("id=\"change-chart\"").expect("the change chart")..];
    let chart = &chart[..chart.find("</figure>").expect("figure closes")];
    assert!(
        chart.contains("noise threshold ±2.0%"),
        "the threshold band"
    );
    let dots = chart.matches("<circle").count();
    assert!(dots >= 3, "a dot per metric");
    // A whisker is a line and two end caps per metric.
    assert!(chart.matches("stroke-width=\"2\"").count() >= 3 * dots);
    assert!(dom.find("id=\"answer\"") < dom.find("id=\"machine-differences\""));
    assert!(dom.find("id=\"machine-differences\"") < dom.find("id=\"metrics\""));
}

#[test]
fn compare_html_follows_the_output_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let [a, b] = two_runs(dir.path());
    let page = stdout_of(sysmeter().args(["compare", &a, &b, "--html", "-"]));
    assert!(page.starts_with("<!DOCTYPE html>"), "`-` is stdout, alone");
    assert!(!page.contains("change [95% CI]\n"));
    let code = sysmeter()
        .args(["compare", &a, &b, "--html"])
        .arg(dir.path())
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&code.get_output().stderr).to_string();
    assert!(err.contains("is a directory"), "{err}");
}
