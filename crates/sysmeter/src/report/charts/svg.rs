//! A tiny SVG writer for the report's charts: elements with numeric coordinates, text that is
//! always escaped, and paths that are never empty (a path of fewer than two points is not
//! written at all, so a browser never meets `d=""`).
//!
//! Pure string building; depends on nothing. Colours are inline attributes rather than CSS
//! classes so a chart copied out of the page keeps them.

use std::fmt::Write as _;

/// The attributes of an axis tick's label: a scale, not a figure of the run (the consistency
/// checker, `report/truth`, leaves these out).
pub const TICK: &str = "class=\"tick\" fill=\"#444\"";

/// Series colours, chosen to stay distinguishable for the common colour-vision deficiencies
/// (Okabe–Ito), in the order series are drawn.
pub const PALETTE: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442",
];

/// Colour of series number `i` (the palette repeats).
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// Escapes text for HTML and XML content and double- or single-quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Horizontal anchor of a text element.
#[derive(Debug, Clone, Copy)]
pub enum Anchor {
    /// Text starts at x.
    Start,
    /// Text is centred on x.
    Middle,
    /// Text ends at x.
    End,
}

impl Anchor {
    fn as_str(self) -> &'static str {
        match self {
            Anchor::Start => "start",
            Anchor::Middle => "middle",
            Anchor::End => "end",
        }
    }
}

/// An SVG document being written.
pub struct Svg {
    out: String,
}

/// A coordinate with one decimal: enough for a screen, short in the file.
fn n(v: f64) -> String {
    let r = (v * 10.0).round() / 10.0;
    if r == r.trunc() {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

impl Svg {
    /// Starts a `width`×`height` drawing that scales with its container; `title` is what
    /// screen readers and tooltips say about the chart.
    pub fn new(width: f64, height: f64, title: &str) -> Svg {
        let mut out = String::new();
        // No xmlns: the SVG is inline in an HTML page, where the parser supplies it.
        let _ = writeln!(
            out,
            "<svg class=\"chart\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" \
             role=\"img\" font-family=\"sans-serif\" font-size=\"12\"><title>{t}</title>",
            w = n(width),
            h = n(height),
            t = escape(title),
        );
        Svg { out }
    }

    /// A straight line; `extra` holds further attributes (e.g. a dash pattern), unescaped.
    pub fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), stroke: &str, extra: &str) {
        let _ = writeln!(
            self.out,
            "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{stroke}\" {extra}/>",
            n(x1),
            n(y1),
            n(x2),
            n(y2)
        );
    }

    /// A polyline through `points` as a `<path>`; nothing is written for fewer than two
    /// points. `closed` closes and fills it (a confidence band) instead of stroking it.
    pub fn path(&mut self, points: &[(f64, f64)], closed: bool, style: &str) {
        if points.len() < 2 {
            return;
        }
        let mut d = String::new();
        for (i, (x, y)) in points.iter().enumerate() {
            let _ = write!(d, "{}{},{}", if i == 0 { "M" } else { " L" }, n(*x), n(*y));
        }
        if closed {
            d.push_str(" Z");
        }
        let _ = writeln!(self.out, "<path d=\"{d}\" {style}/>");
    }

    /// A rectangle with an optional tooltip.
    pub fn rect(&mut self, (x, y): (f64, f64), (w, h): (f64, f64), fill: &str, tip: Option<&str>) {
        let _ = write!(
            self.out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"",
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0))
        );
        self.close_with_tip(tip, "rect");
    }

    /// A dot with an optional tooltip.
    pub fn circle(&mut self, (x, y): (f64, f64), r: f64, fill: &str, tip: Option<&str>) {
        let _ = write!(
            self.out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\"",
            n(x),
            n(y),
            n(r)
        );
        self.close_with_tip(tip, "circle");
    }

    fn close_with_tip(&mut self, tip: Option<&str>, tag: &str) {
        match tip {
            Some(t) => {
                let _ = writeln!(self.out, "><title>{}</title></{tag}>", escape(t));
            }
            None => self.out.push_str("/>\n"),
        }
    }

    /// Text at (x, y) (the baseline); `extra` holds further attributes, unescaped.
    pub fn text(&mut self, (x, y): (f64, f64), anchor: Anchor, extra: &str, text: &str) {
        let _ = writeln!(
            self.out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" {extra}>{}</text>",
            n(x),
            n(y),
            anchor.as_str(),
            escape(text)
        );
    }

    /// Text rotated by -90° around (x, y), for a y-axis title.
    pub fn vertical_text(&mut self, (x, y): (f64, f64), text: &str) {
        let extra = format!("transform=\"rotate(-90 {} {})\"", n(x), n(y));
        self.text((x, y), Anchor::Middle, &extra, text);
    }

    /// Ends the document.
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::assert_contains;

    #[test]
    fn escape_covers_markup_and_quotes() {
        assert_eq!(
            escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
        assert_eq!(escape("plain µs – text"), "plain µs – text");
    }

    #[test]
    fn paths_of_fewer_than_two_points_are_not_written() {
        let mut svg = Svg::new(100.0, 50.0, "t");
        svg.path(&[], false, "");
        svg.path(&[(1.0, 2.0)], false, "");
        assert!(!svg.finish().contains("<path"));
        let mut svg = Svg::new(100.0, 50.0, "t");
        svg.path(&[(1.0, 2.0), (3.25, 4.0)], true, "fill=\"red\"");
        assert!(
            svg.finish()
                .contains("<path d=\"M1,2 L3.3,4 Z\" fill=\"red\"/>")
        );
    }

    #[test]
    fn text_and_titles_are_escaped() {
        let mut svg = Svg::new(10.0, 10.0, "a<b");
        svg.text((0.0, 0.0), Anchor::Start, "", "<script>");
        svg.circle((1.0, 1.0), 2.0, "red", Some("x & y"));
        let out = svg.finish();
        assert_contains(
            &out,
            &[
                "<title>a&lt;b</title>",
                ">&lt;script&gt;</text>",
                "<title>x &amp; y</title></circle>",
            ],
        );
        assert!(!out.contains("<script"));
    }
}
