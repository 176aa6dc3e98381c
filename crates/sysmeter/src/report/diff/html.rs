//! `compare --html` of two diagnosis runs: one self-contained page (inline CSS and SVG, no
//! script) that opens with the differential flame graph — B's stacks drawn as a flame graph,
//! each frame red where its function's own (self) value grew beyond the noise, blue where it
//! shrank, grey otherwise, the colour the more saturated the further the interval lies from
//! zero — then per table the keys beyond the noise and the largest of the rest, with the
//! cells of the text form. Self, not inclusive, as `flamegraph.pl --diff` colours: a frame's
//! width already shows what it includes, and colouring by the inclusive change would paint
//! every caller of a grown function red down to `main`, hiding which one grew. The graph
//! scales to the window (a `viewBox`); wide tables scroll in their own box.
//!
//! Pure: the comparison in, a string out.

use std::collections::HashMap;

use super::{Sides, cells, counts, head, shown_keys, shown_tables};
use crate::report::charts::svg::escape;
use crate::stats::diff::{DiagDiff, KeyChange, KeyVerdict, TableDiff};

/// Width of the flame graph, px.
const WIDTH: f64 = 1200.0;
/// Height of one frame, px.
const ROW: f64 = 17.0;

/// The page.
pub fn render(d: &DiagDiff, sides: &Sides) -> String {
    let mut body = String::new();
    for line in head(d, sides) {
        body.push_str(&format!("<p>{}</p>\n", escape(&line)));
    }
    for t in d.tables.iter().filter(|t| t.stacks) {
        let functions = own(d, t);
        body.push_str(&format!(
            "<h2>{} (B's shape; red: a function's own value grew, blue: it shrank)</h2>\n{}\n",
            escape(&t.name),
            flame(t, functions)
        ));
    }
    for t in shown_tables(d) {
        body.push_str(&format!(
            "<h2>{}</h2>\n<div class=\"scroll\">{}</div>\n",
            escape(&counts(t)),
            table(t)
        ));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>sysmeter compare: {kind}</title><style>{STYLE}</style></head>\n<body>\
         <main><h1>sysmeter compare: {kind}</h1>\n{body}</main></body></html>\n",
        kind = escape(&sides.kind),
    )
}

const STYLE: &str = "body{font-family:sans-serif;margin:1em 2em}table{border-collapse:collapse}\
td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}td.n{text-align:right}\
tr.grew td:first-child,tr.new td:first-child{color:#b00}\
tr.shrank td:first-child,tr.gone td:first-child{color:#03b}svg text{font-size:11px}\
div.scroll{overflow-x:auto}svg.diff-flame{max-width:100%;height:auto}";

/// The per-function self table of the stacks table `t`.
fn own<'a>(d: &'a DiagDiff, t: &TableDiff) -> Option<&'a TableDiff> {
    let what = t.name.split(" per ").next().unwrap_or(&t.name);
    let name = format!("{what} per function (self)");
    d.tables.iter().find(|x| x.name == name)
}

fn table(t: &TableDiff) -> String {
    let mut out = String::from("<table><tr>");
    for h in super::HEADERS {
        out.push_str(&format!("<th>{h}</th>"));
    }
    out.push_str("</tr>\n");
    for k in shown_keys(t) {
        let class = k.verdict.as_str().replace(' ', "-");
        out.push_str(&format!("<tr class=\"{class}\">"));
        for (i, c) in cells(t, k).iter().enumerate() {
            let n = if (2..=5).contains(&i) {
                " class=\"n\""
            } else {
                ""
            };
            out.push_str(&format!("<td{n}>{}</td>", escape(c)));
        }
        out.push_str("</tr>\n");
    }
    out + "</table>"
}

/// One frame of B's stacks merged into a tree.
#[derive(Default)]
struct Node {
    value: f64,
    children: Vec<(String, Node)>,
}

impl Node {
    fn add(&mut self, frames: &[&str], value: f64) {
        self.value += value;
        let Some((first, rest)) = frames.split_first() else {
            return;
        };
        let at = match self.children.iter().position(|(n, _)| n == first) {
            Some(i) => i,
            None => {
                self.children.push((first.to_string(), Node::default()));
                self.children.len() - 1
            }
        };
        self.children[at].1.add(rest, value);
    }

    fn depth(&self) -> usize {
        1 + self
            .children
            .iter()
            .map(|(_, c)| c.depth())
            .max()
            .unwrap_or(0)
    }
}

/// The fill of a frame of function `k`: by verdict, saturated by how far the interval lies
/// from zero (in widths of its half).
pub fn fill(k: Option<&KeyChange>) -> String {
    let Some(k) = k else {
        return "#ddd".into();
    };
    let half = (k.interval.high - k.interval.low) / 2.0;
    let beyond = match half > 0.0 {
        true => (k.change.abs() / half - 1.0).clamp(0.0, 3.0) / 3.0,
        false => 1.0,
    };
    let saturation = 35.0 + 55.0 * beyond;
    match k.verdict {
        KeyVerdict::Grew | KeyVerdict::New => format!("hsl(0,{saturation:.0}%,62%)"),
        KeyVerdict::Shrank | KeyVerdict::Gone => format!("hsl(220,{saturation:.0}%,62%)"),
        _ => "#ddd".into(),
    }
}

/// The differential flame graph of stacks table `t`, frames coloured by `functions`.
fn flame(t: &TableDiff, functions: Option<&TableDiff>) -> String {
    let mut root = Node::default();
    for k in t.keys.iter().filter(|k| k.b > 0.0) {
        let frames: Vec<&str> = k.key.split(';').collect();
        root.add(&frames, k.b);
    }
    if root.value <= 0.0 {
        return "<p>B has no stacks to draw.</p>".into();
    }
    let by_name: HashMap<&str, &KeyChange> = functions
        .map(|f| f.keys.iter().map(|k| (k.key.as_str(), k)).collect())
        .unwrap_or_default();
    let height = (root.depth() as f64) * ROW;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {height}\" \
         width=\"{WIDTH}\" height=\"{height}\" class=\"diff-flame\">\n"
    );
    let scale = WIDTH / root.value;
    draw(&root, (0.0, height - ROW), scale, (&by_name, t), &mut out);
    out + "</svg>"
}

/// Draws `node`'s children from `x` at height `y` upwards.
fn draw(
    node: &Node,
    (mut x, y): (f64, f64),
    scale: f64,
    (by_name, t): (&HashMap<&str, &KeyChange>, &TableDiff),
    out: &mut String,
) {
    for (name, child) in &node.children {
        let w = child.value * scale;
        if w >= 0.5 {
            let k = by_name.get(name.as_str()).copied();
            let tip = match k {
                Some(k) => format!("{name}: {}", cells(t, k)[2..5].join(" → ")),
                None => name.clone(),
            };
            out.push_str(&format!(
                "<g><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" \
                 height=\"{}\" fill=\"{}\" stroke=\"#fff\"/>",
                escape(&tip),
                ROW - 1.0,
                fill(k)
            ));
            if w > 40.0 {
                let chars = ((w - 6.0) / 7.0) as usize;
                let label: String = name.chars().take(chars).collect();
                out.push_str(&format!(
                    "<text x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                    x + 3.0,
                    y + ROW - 5.0,
                    escape(&label)
                ));
            }
            out.push_str("</g>\n");
            draw(child, (x, y - ROW), scale, (by_name, t), out);
        }
        x += w;
    }
}
