//! The one drawing of a flame graph: inferno's port of FlameGraph from folded stacks
//! (`a;b;c WEIGHT` lines). Colours come from a hash of each name (`deterministic`), so the
//! same data draws the same picture; the SVG carries inferno's JavaScript (search, zoom) and
//! is self-contained. `profile` draws sampled stacks with it, `calls --functions` the exact
//! self time of each calling context. Depends on inferno only.

use inferno::flamegraph::{self, Options};

/// How the widths read.
#[derive(Debug, Clone, Copy)]
pub struct Style<'a> {
    /// What a unit of weight is (`samples`, `ns`).
    pub count_name: &'a str,
    /// Multiplier from weight to the shown count (`1e-3`: ns shown as µs).
    pub factor: f64,
    /// Off-CPU: FlameGraph's blue `io` palette on a grey-blue background.
    pub off_cpu: bool,
}

/// The SVG of `folded` titled `title` (`empty`, a small SVG saying so, when there is no
/// weight: inferno refuses empty input); the error is inferno's message.
pub fn svg(folded: &str, title: &str, style: Style<'_>, empty: &str) -> Result<String, String> {
    if folded.trim().is_empty() {
        return Ok(empty_svg(empty));
    }
    let mut opts = Options::default();
    opts.title = title.to_string();
    opts.count_name = style.count_name.to_string();
    opts.deterministic = true;
    opts.factor = style.factor;
    if style.off_cpu {
        use inferno::flamegraph::color::{BackgroundColor, BasicPalette, Palette};
        opts.colors = Palette::Basic(BasicPalette::Io);
        opts.bgcolors = Some(BackgroundColor::Blue);
    }
    let mut out = Vec::new();
    flamegraph::from_lines(&mut opts, folded.lines(), &mut out).map_err(|e| e.to_string())?;
    String::from_utf8(out).map_err(|e| e.to_string())
}

/// A one-line SVG saying `why` (XML-escaped).
fn empty_svg(why: &str) -> String {
    let text = why
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"600\" \
         height=\"60\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"10\" y=\"35\" \
         font-family=\"Verdana\" font-size=\"14\">{text}</text></svg>\n"
    )
}
