//! Artifacts in the HTML report: a flame graph SVG goes into an `<iframe>` whose source is a
//! `data:image/svg+xml;base64,…` URL, and text artifacts (folded stacks, call graphs) into a
//! collapsed, truncated preview.
//!
//! Why an iframe with a data URL: inferno's SVG carries JavaScript (`onload="init(evt)"` and
//! global functions). Inlined into the page, two flame graphs clash and `evt` is undefined in
//! an HTML document; in `srcdoc` the SVG is parsed as HTML and its script does not run. As a
//! data URL the SVG is its own document (an opaque origin: it cannot reach the page) and keeps
//! its search and zoom. No `sandbox` attribute: Chromium then lays the frame out late and
//! inferno's fluid-width script reads a width of 0 ("negative value -20"), so every label
//! disappears; tests/html.rs loads two such frames in headless Chromium and fails on any
//! console error. What keeps a hostile SVG from an imported record harmless is the page's
//! Content-Security-Policy (`report::html::CSP`), which the data: frame inherits: its
//! scripts run in an opaque origin and can load nothing (tests/html.rs: a flame graph that
//! fetches and references a loopback listener reaches nothing). Pure; no dependencies.

use crate::model::Artifact;
use crate::model::alloc::ALLOC_ID;

/// Shown lines of a text artifact.
const PREVIEW_LINES: usize = 200;
/// Shown bytes of a text artifact.
const PREVIEW_BYTES: usize = 64 * 1024;
/// Height of a flame graph whose SVG has no readable `height`, px.
const DEFAULT_FLAME_HEIGHT: u32 = 600;

/// A flame graph ready for the page.
#[derive(Debug, Clone, PartialEq)]
pub struct FlameView {
    /// Artifact name.
    pub name: String,
    /// What it draws, for its caption: `CPU time`, `allocated bytes`.
    pub title: &'static str,
    /// What a box's width is a share of.
    pub width_of: &'static str,
    /// `data:image/svg+xml;base64,…`.
    pub data_uri: String,
    /// Frame height, px (the SVG's own height, plus room for a border).
    pub height: u32,
}

/// A text artifact's preview.
#[derive(Debug, Clone, PartialEq)]
pub struct TextView {
    /// Artifact name.
    pub name: String,
    /// Media type.
    pub media_type: String,
    /// The first lines.
    pub preview: String,
    /// Lines left out of the preview (0 when it is complete).
    pub omitted_lines: usize,
}

/// Whether an artifact is an SVG image to embed as a picture.
fn is_svg(a: &Artifact) -> bool {
    a.media_type == "image/svg+xml" || a.name == "flamegraph"
}

/// What the flame graph `name` of a result `id` draws, and what a box's width is a share
/// of: the caption says it in words, not by the artifact's name (issue 43: "Flame graph
/// (flamegraph (allocations))").
fn caption(id: &str, name: &str) -> (&'static str, &'static str) {
    match (id, name) {
        (ALLOC_ID, "flamegraph (allocations)") => ("allocations", "the allocations (counts)"),
        (ALLOC_ID, _) => ("allocated bytes", "the bytes allocated"),
        (_, "exact flamegraph") => (
            "exact self time",
            "the exact self time (ns, the hooks' cost removed)",
        ),
        (_, "off-cpu flamegraph") => ("off-CPU time", "the time spent blocked"),
        _ => ("CPU time", "the samples"),
    }
}

/// The flame graphs (SVG artifacts) of result `id`.
pub fn flames(id: &str, artifacts: &[Artifact]) -> Vec<FlameView> {
    artifacts
        .iter()
        .filter(|a| is_svg(a))
        .map(|a| FlameView {
            name: a.name.clone(),
            title: caption(id, &a.name).0,
            width_of: caption(id, &a.name).1,
            data_uri: format!("data:image/svg+xml;base64,{}", base64(a.content.as_bytes())),
            height: svg_height(&a.content).unwrap_or(DEFAULT_FLAME_HEIGHT) + 4,
        })
        .collect()
}

/// The other artifacts, as previews.
pub fn texts(artifacts: &[Artifact]) -> Vec<TextView> {
    artifacts
        .iter()
        .filter(|a| !is_svg(a))
        .map(|a| {
            let mut preview = String::new();
            let mut shown = 0;
            for line in a.content.lines().take(PREVIEW_LINES) {
                if preview.len() + line.len() > PREVIEW_BYTES {
                    break;
                }
                preview.push_str(line);
                preview.push('\n');
                shown += 1;
            }
            TextView {
                name: a.name.clone(),
                media_type: a.media_type.clone(),
                preview,
                omitted_lines: a.content.lines().count() - shown,
            }
        })
        .collect()
}

/// The `height="N"` of the root `<svg>` element, if it is a plain number.
fn svg_height(svg: &str) -> Option<u32> {
    let root = &svg[svg.find("<svg")?..];
    let root = &root[..root.find('>')?];
    let start = root.find(" height=\"")? + " height=\"".len();
    let value = &root[start..];
    value[..value.find('"')?]
        .trim_end_matches("px")
        .parse()
        .ok()
}

/// Standard base64 with padding (RFC 4648 §4); a few lines instead of a dependency.
pub fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(TABLE[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn artifact(name: &str, media_type: &str, content: &str) -> Artifact {
        Artifact {
            name: name.into(),
            media_type: media_type.into(),
            content: content.into(),
        }
    }

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in cases {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn flame_graphs_become_data_uris_sized_from_the_svg() {
        let svg = "<?xml version=\"1.0\"?><svg version=\"1.1\" width=\"1200\" height=\"134\" \
                   onload=\"init(evt)\"><rect/></svg>";
        let list = [
            artifact("flamegraph", "image/svg+xml", svg),
            artifact("folded", "text/plain", "a;b 1\na;c 2\n"),
        ];
        let flames = flames("profile", &list);
        assert_eq!(flames.len(), 1);
        assert_eq!(flames[0].height, 138);
        assert!(
            flames[0]
                .data_uri
                .starts_with("data:image/svg+xml;base64,PD94")
        );
        let texts = texts(&list);
        assert_eq!(texts.len(), 1);
        assert_eq!(texts[0].preview, "a;b 1\na;c 2\n");
        assert_eq!(texts[0].omitted_lines, 0);
        assert_eq!(svg_height("<svg width=\"10\">"), None);
    }

    #[test]
    fn long_text_artifacts_are_truncated_with_a_count() {
        let content: String = (0..250).map(|i| format!("f{i} 1\n")).collect();
        let texts = texts(&[artifact("folded", "text/plain", &content)]);
        assert_eq!(texts[0].preview.lines().count(), PREVIEW_LINES);
        assert_eq!(texts[0].omitted_lines, 50);
    }
}
