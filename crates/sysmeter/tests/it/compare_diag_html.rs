//! The page of `compare --html` of two diagnosis runs in headless Chromium: two `profile`
//! records whose folded stacks are known (`sm_b` doubled, `sm_c` halved, `sm_a` and a
//! long-named function unchanged, every one under `main;driver`) compared through the
//! binary; the differential flame graph, as the browser computes its fills, is red on
//! `sm_b`'s frames only and blue on `sm_c`'s only — not on their callers, whose samples grew
//! or shrank only through them. The same page is one of the pages `widths.rs` fits at 1400
//! and 800 px. `skip!` with capability `chromium` where Chromium is missing.

use std::path::{Path, PathBuf};

use sysmeter::model::fixture::sample_run;
use sysmeter::model::{About, Artifact, ExperimentResult, RunKind};

use crate::support::chromium::{find_chromium, load_in_chromium};
use crate::support::cmd::compare_html;
use crate::support::need;
use crate::support::skip::{Cap, Missing};

/// A function with a long name (as C++ templates have), so that labels and table cells
/// must fit.
const LONG: &str = "std::vector<std::pair<std::string, std::unordered_map<int, long>>>::\
                    _M_realloc_insert_with_a_long_tail";

/// A's and B's folded stacks.
fn folded(side: &str) -> String {
    let (b, c) = if side == "A" { (200, 200) } else { (400, 100) };
    format!(
        "main;driver;sm_a 400\nmain;driver;sm_b {b}\nmain;driver;sm_c {c}\n\
         main;driver;sm_a;{LONG} 150\nmain 3\n"
    )
}

/// `compare --html` of the two profile records in `dir`: the page.
pub(crate) fn diag_compare_page(dir: &Path) -> PathBuf {
    let files = ["A", "B"].map(|side| {
        let mut run = sample_run();
        run.id = format!("20261208T020000Z-{side}");
        run.kind = RunKind::Profile;
        let mut r = ExperimentResult::new("profile", About::default());
        r.artifacts.push(Artifact {
            name: "folded".into(),
            media_type: "text/plain".into(),
            content: folded(side),
        });
        run.results = vec![r];
        let path = dir.join(format!("profile-{side}.json"));
        std::fs::write(&path, serde_json::to_string(&run).expect("JSON")).expect("write");
        path
    });
    compare_html(&files, dir.join("diag-compare.html"))
}

/// Writes one line per frame of the differential flame graph into `<pre id="fills">`:
/// the function (its tooltip up to `: `) and the colour the browser fills it with,
/// as `red`, `blue` or `grey`.
const PROBE: &str = r#"<script>(function () {
  var lines = [];
  document.querySelectorAll('svg.diff-flame g').forEach(function (g) {
    var rect = g.querySelector('rect');
    var title = g.querySelector('title');
    if (!rect || !title) return;
    var m = getComputedStyle(rect).fill.match(/\d+/g).map(Number);
    var colour = m[0] > m[2] + 40 ? 'red' : m[2] > m[0] + 40 ? 'blue' : 'grey';
    lines.push(title.textContent.split(': ')[0] + '\t' + colour);
  });
  var p = document.createElement('pre');
  p.id = 'fills';
  p.textContent = 'fills\n' + lines.join('\n') + '\nend-of-fills';
  document.body.appendChild(p);
})();</script>"#;

/// (function, colour) of every frame of `page` as Chromium draws it.
fn fills(bin: &Path, page: &Path) -> Result<Vec<(String, String)>, Missing> {
    let html = std::fs::read_to_string(page).expect("page written");
    let probed = page.with_extension("fills.html");
    std::fs::write(&probed, html.replace("</body>", &format!("{PROBE}</body>"))).expect("write");
    let profile = page.with_extension("chromium");
    let (dom, _) = load_in_chromium(bin, &probed, &profile, &["--window-size=1400,900"])
        .map_err(|reason| Missing::new(Cap::Chromium, reason))?;
    let start = dom.find("fills\n").expect("the probe ran") + 6;
    let end = start + dom[start..].find("end-of-fills").expect("the list ends");
    Ok(dom[start..end]
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .map(|(f, c)| (unescape(f), c.to_string()))
        .collect())
}

/// Text of the dumped DOM as it was set (the dump escapes `<`, `>` and `&`).
fn unescape(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[test]
fn the_flame_graph_is_red_only_on_the_grown_function_and_blue_on_the_shrunk() {
    let bin = need!(find_chromium());
    let dir = tempfile::tempdir().expect("tempdir");
    let page = diag_compare_page(dir.path());
    let frames = need!(fills(&bin, &page));
    let names: Vec<&str> = frames.iter().map(|(f, _)| f.as_str()).collect();
    for f in ["main", "driver", "sm_a", "sm_b", "sm_c", LONG] {
        assert!(names.contains(&f), "no frame {f}: {frames:?}");
    }
    for (function, colour) in &frames {
        let want = match function.as_str() {
            "sm_b" => "red",
            "sm_c" => "blue",
            _ => "grey",
        };
        assert_eq!(colour, want, "{function}: {frames:?}");
    }
}
