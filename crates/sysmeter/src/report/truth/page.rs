//! Reading the figures of a rendered page for the consistency checker: HTML turned into lines
//! (cells apart, axis ticks left out), each line's figures with a unit (`51.3 ns`,
//! `2.14 MiB`, `812 MB/s`, `~123 cyc`; a range `50.1–52.3 ns` is two), the label each stands
//! beside (a table row's first cell, or a label just before or after it), and whether it
//! sits in a sentence the record holds verbatim.
//!
//! Test code only; plain string scanning.

/// Units a figure may carry, longest first (so `MB/s` is not read as `MB`).
const UNITS: [&str; 16] = [
    "kB/s", "MB/s", "GB/s", "TB/s", "B/s", "KiB", "MiB", "GiB", "TiB", "PiB", "cyc", "ns", "µs",
    "ms", "s", "B",
];

/// The attribute of an axis tick's label (`charts::svg::TICK`).
const TICK_CLASS: &str = "class=\"tick\"";

/// Cell separators of the terminal tables, Markdown tables and the HTML cells (`lines`).
const CELLS: [char; 3] = ['┆', '│', '|'];

/// A figure read from a page.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Figure {
    /// The number and unit as `model::units` writes them (`51.3 ns`; cycles without `~`).
    pub(crate) shown: String,
    /// The record's label it stands beside (lower case), if any.
    pub(crate) label: Option<String>,
    /// Whether it sits in a sentence the record holds verbatim.
    pub(crate) quoted: bool,
    /// Whether it is the low end of a range whose ends are the same figure (`921–921 ms`): one
    /// value shown as an interval.
    pub(crate) range_of_one: bool,
    /// Which end of a range it is, if it is one.
    pub(crate) end: Option<End>,
    /// The line it was read from.
    pub(crate) line: String,
}

/// The end of a range (`50.1–52.3 ns`) a figure is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum End {
    Low,
    High,
}

/// Every figure of `page` (text, Markdown or HTML), with its label among `labels` (lower
/// case, longest first) and whether it is quoted from one of `sentences`.
pub(crate) fn figures(page: &str, labels: &[&str], sentences: &[String]) -> Vec<Figure> {
    let text = if page.contains("</html>") || page.contains("<svg") {
        html_lines(page)
    } else {
        page.to_string()
    };
    let text = plain(&text);
    let mut out = Vec::new();
    for line in text.lines() {
        let quoted = quoted_spans(line, sentences);
        let row_label = table_row(line)
            .then(|| first_cell_label(line, labels))
            .flatten();
        let first_cell_end = first_cell_end(line);
        for (at, end, shown, range_of_one, range_end) in numbers(line) {
            // A figure in double quotes is part of a name (`cpu.ops "strlen 64 B"`).
            if line[..at].matches('"').count() % 2 == 1 {
                continue;
            }
            // A sentence the record holds speaks for itself: its figures take no row label.
            let quoted = quoted.iter().any(|&(a, b)| a <= at && end <= b);
            let label = match &row_label {
                Some(l) if at >= first_cell_end && !quoted => Some(l.clone()),
                _ => beside(line, at, end, labels),
            };
            out.push(Figure {
                shown,
                label,
                quoted,
                range_of_one,
                end: range_end,
                line: line.to_string(),
            });
        }
    }
    out
}

/// The byte where the first cell of a table row ends.
fn first_cell_end(line: &str) -> usize {
    let start = line.len() - line.trim_start().trim_start_matches(CELLS).len();
    start + line[start..].find(CELLS).unwrap_or(line.len() - start)
}

/// Whether `line` is a table row (a terminal, Markdown or HTML row).
fn table_row(line: &str) -> bool {
    line.matches(CELLS).count() >= 2
}

/// The label of a table row: its first cell's, else the first cell that is a label.
fn first_cell_label(line: &str, labels: &[&str]) -> Option<String> {
    let cells = line.trim().trim_start_matches(CELLS).split(CELLS);
    cells
        .map(|c| c.trim().to_lowercase())
        .find_map(|cell| {
            labels
                .iter()
                .find(|l| cell == **l || cell.strip_suffix(':') == Some(**l))
        })
        .map(|l| (*l).to_string())
}

/// `s` without Markdown's code and emphasis marks (HTML shows them as markup).
pub(crate) fn plain(s: &str) -> String {
    s.replace(['`', '*'], "")
}

/// The label right before the figure at `at..end` (nothing but spaces, `:` or `=` between)
/// or right after it (nothing but spaces between).
fn beside(line: &str, at: usize, end: usize, labels: &[&str]) -> Option<String> {
    let lower = line.to_lowercase();
    // Lower-casing keeps the byte offsets of the ASCII and Greek text of these pages.
    if lower.len() != line.len() {
        return None;
    }
    let before = lower[..at].trim_end_matches([' ', ':', '=']);
    let after = lower[end..].trim_start_matches(' ');
    labels
        .iter()
        .find(|l| {
            (before.ends_with(**l) && word_edge(before, before.len() - l.len(), true))
                || (after.starts_with(**l) && word_edge(after, l.len(), false))
        })
        .map(|l| (*l).to_string())
}

/// Whether the character before (`left`) or at (`!left`) byte `at` of `s` ends a word: a
/// space, a bracket, a quote or punctuation (not `+`, which joins words: `malloc+free`).
fn word_edge(s: &str, at: usize, left: bool) -> bool {
    let c = if left {
        s[..at].chars().next_back()
    } else {
        s[at..].chars().next()
    };
    !c.is_some_and(|c| c.is_alphanumeric() || c == '+')
}

/// Byte spans of `line` that are one of `sentences` verbatim.
fn quoted_spans(line: &str, sentences: &[String]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    for s in sentences {
        for (i, _) in line.match_indices(s.as_str()) {
            spans.push((i, i + s.len()));
        }
    }
    spans
}

/// A figure of a line: start and end byte, the figure as units write it, whether it is the
/// low end of a range whose ends are the same figure, and which end of a range it is.
type Number = (usize, usize, String, bool, Option<End>);

/// The figures of `line`.
fn numbers(line: &str) -> Vec<Number> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    let mut i = 0;
    while i < line.len() {
        let Some((len, number)) = number_at(line, i) else {
            i += line[i..].chars().next().map_or(1, char::len_utf8);
            continue;
        };
        let rest = &line[i + len..];
        if let Some(unit) = rest.strip_prefix(' ').and_then(unit_at) {
            let end = i + len + 1 + unit.len();
            let high = pending.take().map(|(at, first)| {
                let low = format!("{first} {unit}");
                out.push((at, end, low, first == number, Some(End::Low)));
                End::High
            });
            out.push((i, end, format!("{number} {unit}"), false, high));
            i = end;
        } else if rest.starts_with('–') {
            pending = Some((i, number.to_string()));
            i += len + '–'.len_utf8();
        } else {
            pending = None;
            i += len;
        }
    }
    out
}

/// The number starting at byte `i` of `line` (not inside a word, a version or an id).
fn number_at(line: &str, i: usize) -> Option<(usize, &str)> {
    let before = line[..i].chars().next_back();
    if before.is_some_and(|c| c.is_alphanumeric() || ".-_/#:".contains(c)) {
        return None;
    }
    let bytes = line.as_bytes();
    let mut j = i;
    let digits = |j: &mut usize| {
        let start = *j;
        while *j < bytes.len() && bytes[*j].is_ascii_digit() {
            *j += 1;
        }
        *j > start
    };
    if !digits(&mut j) {
        return None;
    }
    if bytes.get(j) == Some(&b'.') && bytes.get(j + 1).is_some_and(u8::is_ascii_digit) {
        j += 1;
        digits(&mut j);
    }
    if bytes.get(j) == Some(&b'e') && bytes.get(j + 1) == Some(&b'-') {
        let mut k = j + 2;
        if digits(&mut k) {
            j = k;
        }
    }
    let after = line[j..].chars().next();
    if after.is_some_and(|c| c.is_alphanumeric() || c == '.') {
        return None;
    }
    Some((j - i, &line[i..j]))
}

/// The value of a figure as `model::units` writes it, in its unit family's base (ns, bytes,
/// bytes per second, cycles) and that family's name; `None` for what is not a figure.
pub(crate) fn magnitude(shown: &str) -> Option<(f64, &'static str)> {
    let (number, unit) = shown.split_once(' ')?;
    let n: f64 = number.parse().ok()?;
    let (scale, family) = match unit {
        "ns" => (1.0, "time"),
        "µs" => (1e3, "time"),
        "ms" => (1e6, "time"),
        "s" => (1e9, "time"),
        "B" => (1.0, "size"),
        "KiB" => (1024.0, "size"),
        "MiB" => (1024f64.powi(2), "size"),
        "GiB" => (1024f64.powi(3), "size"),
        "TiB" => (1024f64.powi(4), "size"),
        "PiB" => (1024f64.powi(5), "size"),
        "B/s" => (1.0, "rate"),
        "kB/s" => (1e3, "rate"),
        "MB/s" => (1e6, "rate"),
        "GB/s" => (1e9, "rate"),
        "TB/s" => (1e12, "rate"),
        "cyc" => (1.0, "cycles"),
        _ => return None,
    };
    Some((n * scale, family))
}

/// The unit at the start of `rest`, ending a word.
fn unit_at(rest: &str) -> Option<&'static str> {
    UNITS
        .iter()
        .find(|u| rest.starts_with(**u) && word_edge(rest, u.len(), false))
        .copied()
}

/// The lines of an HTML page: a line per row, paragraph, item, heading and SVG text, cells
/// apart by `┆`, no markup; axis ticks (`class="tick"`), styles and scripts left out.
fn html_lines(page: &str) -> String {
    let mut s = page.to_string();
    for (open, close) in [("<style", "</style>"), ("<script", "</script>")] {
        s = cut(&s, open, close);
    }
    s = cut_ticks(&s);
    for end in [
        "</tr>",
        "<br>",
        "</p>",
        "</li>",
        "</text>",
        "</title>",
        "</h1>",
        "</h2>",
        "</h3>",
        "</h4>",
        "</div>",
        "</dd>",
        "</dt>",
        "</summary>",
        "</caption>",
        "</figcaption>",
    ] {
        s = s.replace(end, &format!("{end}\n"));
    }
    s = s.replace("</td>", " ┆ </td>").replace("</th>", " ┆ </th>");
    let mut out = String::with_capacity(s.len());
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    unescape(&out)
}

/// `s` without the axis ticks' labels: `<text … class="tick" …>…</text>`.
fn cut_ticks(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find("<text ") {
        let open_end = rest[start..].find('>').map_or(rest.len(), |e| start + e);
        let close = rest[start..]
            .find("</text>")
            .map(|e| start + e + "</text>".len());
        match close {
            Some(end) if rest[start..open_end].contains(TICK_CLASS) => {
                out.push_str(&rest[..start]);
                rest = &rest[end..];
            }
            _ => {
                out.push_str(&rest[..start + 1]);
                rest = &rest[start + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `s` without every `open … close` span.
fn cut(s: &str, open: &str, close: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(start) = rest.find(open) {
        out.push_str(&rest[..start]);
        match rest[start..].find(close) {
            Some(end) => rest = &rest[start + end + close.len()..],
            None => rest = "",
        }
    }
    out.push_str(rest);
    out
}

/// The text of HTML escapes as askama and the chart writer write them.
fn unescape(s: &str) -> String {
    [
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&#60;", "<"),
        ("&#62;", ">"),
        ("&quot;", "\""),
        ("&#34;", "\""),
        ("&#39;", "'"),
        ("&nbsp;", " "),
        ("&amp;", "&"),
        ("&#38;", "&"),
    ]
    .iter()
    .fold(s.to_string(), |acc, (from, to)| acc.replace(from, to))
}
