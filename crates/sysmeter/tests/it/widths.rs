//! Widths in a real browser: the HTML page of every run kind (the bench fixture, the real
//! `run`, `trace`, `calls`, `profile`, `scale`, `locks` and `alloc` records in
//! src/report/html/fixtures), the `compare --html` pages (of two bench runs, of two
//! profiles: `compare_diag_html.rs`) and the `fleet` page are loaded in
//! headless Chromium at 1400 and 800 px, and no element may stick out of the box it sits in
//! (`main`, a section, a card, a figure), nor the page out of the window. What scrolls
//! inside its own container (a wide table in a `div.scroll`, an artifact in a `pre`) is
//! allowed to be wider than that container: it is reached by scrolling it. A planted wide
//! element shows that the check can fail. `skip!` with capability `chromium` where Chromium
//! is missing.

use std::path::{Path, PathBuf};

use sysmeter::model::fixture::sample_run;

use crate::compare_diag_html::diag_compare_page;
use crate::support::chromium::{find_chromium, load_in_chromium};
use crate::support::cmd::compare_html;
use crate::support::fleet::fleet_files;
use crate::support::skip::{Cap, Missing};
use crate::support::sysmeter_db;
use crate::support::{need, stdout_of, sysmeter};

/// The window widths a page must fit, px.
const WIDTHS: [u32; 2] = [1400, 800];

/// Writes one line per element wider than its box into `<pre id="overflow-report">`: every
/// element of a box (`main`, `section`, `.card`, `figure`, `.figure`) must end inside the
/// box's padding edge, unless an element between them scrolls or clips (its `overflow-x`
/// is not `visible`); an SVG counts as one element. Then the page against the window.
const PROBE: &str = r#"<script>(function () {
  function name(el) {
    var c = el.getAttribute('class');
    var t = (el.textContent || '').trim().replace(/\s+/g, ' ').slice(0, 40);
    return el.tagName.toLowerCase() + (c ? '.' + c.split(' ').join('.') : '') + ' "' + t + '"';
  }
  function scrolls(el, box) {
    for (var a = el.parentElement; a && a !== box; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') return true;
    }
    return false;
  }
  var lines = [];
  document.querySelectorAll('main, section, .card, figure, .figure').forEach(function (box) {
    var b = box.getBoundingClientRect();
    if (b.width === 0) return;
    var s = getComputedStyle(box);
    var left = b.left + parseFloat(s.borderLeftWidth);
    var right = b.right - parseFloat(s.borderRightWidth);
    box.querySelectorAll('*').forEach(function (el) {
      if (el.tagName.toLowerCase() !== 'svg' && el.closest('svg')) return;
      if (scrolls(el, box)) return;
      var r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return;
      if (r.right > right + 1 || r.left < left - 1) {
        lines.push(name(el) + ' spans ' + Math.round(r.left) + '..' + Math.round(r.right) +
          ' px, outside ' + name(box).split(' ')[0] + ' ' + Math.round(left) + '..' +
          Math.round(right) + ' px');
      }
    });
  });
  var page = document.documentElement.scrollWidth;
  if (page > window.innerWidth + 1) {
    lines.push('the page is ' + page + ' px wide in a ' + window.innerWidth + ' px window');
  }
  var p = document.createElement('pre');
  p.id = 'overflow-report';
  p.textContent = 'overflow-report\n' + lines.join('\n') + '\nend-of-report';
  document.body.appendChild(p);
})();</script>"#;

/// The elements of `page` wider than their box in a window `width` px wide (one line
/// each; empty when everything fits).
fn overflowing(bin: &Path, page: &Path, width: u32) -> Result<Vec<String>, Missing> {
    let html = std::fs::read_to_string(page).expect("page written");
    let copy = page.with_extension(format!("{width}.html"));
    let probed = html.replace("</body>", &format!("{PROBE}</body>"));
    assert_ne!(probed, html, "{}: the page has a body", page.display());
    std::fs::write(&copy, probed).expect("write");
    let profile = page.with_extension(format!("{width}.chromium"));
    let size = format!("--window-size={width},900");
    let (dom, _) = load_in_chromium(bin, &copy, &profile, &[&size, "--hide-scrollbars"])
        .map_err(|reason| Missing::new(Cap::Chromium, reason))?;
    let start = dom.find("overflow-report\n").expect("the probe ran") + 16;
    let end = start + dom[start..].find("end-of-report").expect("the report ends");
    Ok(dom[start..end]
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect())
}

/// `sysmeter report FILE --html PAGE` of a run given as JSON: the page.
fn report_page(dir: &Path, kind: &str, json: &str) -> PathBuf {
    let (file, page) = (
        dir.join(format!("{kind}.json")),
        dir.join(format!("{kind}.html")),
    );
    std::fs::write(&file, json).expect("write");
    sysmeter()
        .args(["report", file.to_str().expect("utf-8"), "--html"])
        .arg(&page)
        .assert()
        .success();
    page
}

/// A page of every run kind, `compare --html` of two bench runs and of two profiles, and
/// `fleet --format html` of five hosts.
fn every_page(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let bench = serde_json::to_string(&sample_run()).expect("serialise");
    let fixtures = [
        (
            "run",
            include_str!("../../src/report/html/fixtures/run.json"),
        ),
        (
            "trace",
            include_str!("../../src/report/html/fixtures/trace.json"),
        ),
        (
            "calls",
            include_str!("../../src/report/html/fixtures/calls.json"),
        ),
        (
            "profile",
            include_str!("../../src/report/html/fixtures/profile.json"),
        ),
        (
            "scale",
            include_str!("../../src/report/html/fixtures/scale.json"),
        ),
        (
            "locks",
            include_str!("../../src/report/html/fixtures/locks.json"),
        ),
        (
            "alloc",
            include_str!("../../src/report/html/fixtures/alloc.json"),
        ),
    ];
    let mut pages = vec![("bench", report_page(dir, "bench", &bench))];
    for (kind, json) in fixtures {
        pages.push((kind, report_page(dir, kind, json)));
    }
    pages.push(("compare", compare_page(dir)));
    pages.push(("compare profile", diag_compare_page(dir)));
    pages.push(("fleet", fleet_page(dir)));
    pages
}

/// `compare --html` of the bench fixture and a copy 30% slower.
fn compare_page(dir: &Path) -> PathBuf {
    let a = sample_run();
    let mut b = sample_run();
    b.id = "20261122T190000Z-b0b0".into();
    for m in b.results.iter_mut().flat_map(|r| r.metrics.iter_mut()) {
        m.samples.iter_mut().for_each(|s| *s *= 1.3);
        m.summary = m.summary.scaled(1.3);
    }
    let files = [("A", a), ("B", b)].map(|(name, run)| {
        let path = dir.join(format!("{name}.json"));
        std::fs::write(&path, serde_json::to_string(&run).expect("json")).expect("write");
        path
    });
    compare_html(&files, dir.join("compare.html"))
}

/// `fleet --format html` of the five hosts of `support::fleet`.
fn fleet_page(dir: &Path) -> PathBuf {
    let db = dir.join("fleet.db");
    sysmeter_db(&db, &["import"])
        .args(fleet_files(dir))
        .assert()
        .success();
    let html = stdout_of(&mut sysmeter_db(&db, &["fleet", "--format", "html"]));
    let page = dir.join("fleet.html");
    std::fs::write(&page, html).expect("write");
    page
}

#[test]
fn no_element_of_any_page_is_wider_than_its_box_at_1400_and_800_px() {
    let bin = need!(find_chromium());
    let dir = tempfile::tempdir().expect("tempdir");
    let mut wide = Vec::new();
    for (kind, page) in every_page(dir.path()) {
        for width in WIDTHS {
            for line in need!(overflowing(&bin, &page, width)) {
                wide.push(format!("{kind} at {width} px: {line}"));
            }
        }
    }
    assert!(wide.is_empty(), "{}", wide.join("\n"));
}

#[test]
fn a_planted_wide_element_is_found() {
    let bin = need!(find_chromium());
    let dir = tempfile::tempdir().expect("tempdir");
    let page = report_page(
        dir.path(),
        "bench",
        &serde_json::to_string(&sample_run()).expect("serialise"),
    );
    let html = std::fs::read_to_string(&page).expect("page");
    let planted =
        "<div class=\"card\"><div style=\"width:2000px\">planted wide element</div></div>";
    std::fs::write(
        &page,
        html.replacen("<main>", &format!("<main>{planted}"), 1),
    )
    .expect("write");
    for width in WIDTHS {
        let wide = need!(overflowing(&bin, &page, width));
        assert!(
            wide.iter()
                .any(|l| l.starts_with("div \"planted") && l.contains("outside div.card")),
            "at {width} px: {wide:?}"
        );
        assert!(
            wide.iter().any(|l| l.starts_with("the page is")),
            "at {width} px: {wide:?}"
        );
    }
}
