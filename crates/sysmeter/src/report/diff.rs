//! `compare` of two diagnosis runs (`stats::diff`) for people and programs: text and Markdown
//! tables that lead with the verdicts (per table: the keys beyond the noise, then the
//! largest of the rest), one JSON document, and the HTML page with a differential flame
//! graph (`diff/html.rs`). Every figure is one value of the comparison, formatted by
//! `model::units`.
//!
//! Pure: depends on `model`, `stats` and the report's table and SVG helpers.

pub mod html;
#[cfg(test)]
mod tests;

use serde::Serialize;

use super::compare_text::CompareFormat;
use super::table;
use crate::model::RunRecord;
use crate::model::units;
pub use crate::stats::diff::Normalise;
use crate::stats::diff::{DiagDiff, KeyChange, KeyVerdict, TableDiff};

/// Keys shown per table beside those beyond the noise.
const LARGEST: usize = 8;
/// Keys beyond the noise shown per table in text and Markdown (the JSON has all).
const CHANGED: usize = 25;

/// The two sides as the pages name them: each run's id, or ids joined for a set.
pub struct Sides {
    /// A's run ids.
    pub a: Vec<String>,
    /// B's run ids.
    pub b: Vec<String>,
    /// The kind of both (`profile`).
    pub kind: String,
}

impl Sides {
    /// The sides of runs `a` and `b`.
    pub fn of(a: &[&RunRecord], b: &[&RunRecord]) -> Sides {
        let ids = |s: &[&RunRecord]| s.iter().map(|r| r.id.clone()).collect();
        let kind = a.first().map_or("", |r| r.kind.as_str()).to_string();
        Sides {
            a: ids(a),
            b: ids(b),
            kind,
        }
    }
}

/// The JSON document of a comparison of diagnosis runs (docs/json-schema.md).
#[derive(Serialize)]
struct Document<'a> {
    kind: &'a str,
    a: &'a [String],
    b: &'a [String],
    #[serde(flatten)]
    diff: &'a DiagDiff,
}

/// The comparison in `format`.
pub fn render(d: &DiagDiff, sides: &Sides, format: CompareFormat, width: Option<usize>) -> String {
    match format {
        CompareFormat::Json => {
            let doc = Document {
                kind: &sides.kind,
                a: &sides.a,
                b: &sides.b,
                diff: d,
            };
            serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
        }
        CompareFormat::Text => text(d, sides, width),
        CompareFormat::Markdown => markdown(d, sides),
    }
}

/// The tables in the order the pages show them: per function first, stacks last.
pub fn shown_tables(d: &DiagDiff) -> Vec<&TableDiff> {
    let mut tables: Vec<&TableDiff> = d.tables.iter().collect();
    tables.sort_by_key(|t| t.stacks);
    tables
}

/// The opening lines: what was compared, how it was normalised, where intervals come from.
pub fn head(d: &DiagDiff, sides: &Sides) -> Vec<String> {
    let side = |ids: &[String], rounds: usize| {
        format!(
            "{} ({} round{})",
            ids.join(","),
            rounds,
            if rounds == 1 { "" } else { "s" }
        )
    };
    let normalise = d.tables.first().map_or("", |t| t.normalise.as_str());
    vec![
        format!(
            "{} runs compared: A {} against B {}.",
            sides.kind,
            side(&sides.a, d.rounds_a),
            side(&sides.b, d.rounds_b)
        ),
        format!(
            "Values {normalise}; each change with its 95% interval, the wider of the samples' \
             and the rounds' noise; a verdict other than \"no change\" only beyond it."
        ),
    ]
}

/// A table's one-line count of verdicts.
pub fn counts(t: &TableDiff) -> String {
    let all = [
        KeyVerdict::Grew,
        KeyVerdict::Shrank,
        KeyVerdict::New,
        KeyVerdict::Gone,
        KeyVerdict::NoChange,
        KeyVerdict::Unjudged,
    ];
    let parts: Vec<String> = all
        .iter()
        .map(|v| (v, t.keys.iter().filter(|k| k.verdict == *v).count()))
        .filter(|(v, n)| *n > 0 || matches!(v, KeyVerdict::Grew | KeyVerdict::Shrank))
        .map(|(v, n)| format!("{n} {}", v.as_str()))
        .collect();
    format!("{}: {}", t.name, parts.join(", "))
}

/// A value of table `t` as the pages show it.
pub fn value(t: &TableDiff, x: f64) -> String {
    match t.normalise {
        Normalise::Total => units::percent(x),
        Normalise::Wall => format!("{}/s", units::value(x, t.unit)),
        Normalise::Run => units::value(x, t.unit),
    }
}

/// A signed change of table `t`.
pub fn signed(t: &TableDiff, x: f64) -> String {
    let sign = if x > 0.0 {
        "+"
    } else if x < 0.0 {
        "−"
    } else {
        ""
    };
    format!("{sign}{}", value(t, x.abs()))
}

/// The cells of one key: verdict, key, A, B, change (relative), interval, basis.
pub fn cells(t: &TableDiff, k: &KeyChange) -> Vec<String> {
    let relative = k.relative().map_or(String::new(), |r| {
        let sign = if r > 0.0 {
            "+"
        } else if r < 0.0 {
            "−"
        } else {
            ""
        };
        format!(" ({sign}{})", units::percent(r.abs()))
    });
    vec![
        k.verdict.as_str().to_string(),
        short_key(&k.key, t.stacks),
        value(t, k.a),
        value(t, k.b),
        format!("{}{relative}", signed(t, k.change)),
        format!(
            "{} … {}",
            signed(t, k.interval.low),
            signed(t, k.interval.high)
        ),
        k.interval.basis.as_str().to_string(),
    ]
}

/// A stack shown by its three innermost frames.
fn short_key(key: &str, stacks: bool) -> String {
    let frames: Vec<&str> = key.split(';').collect();
    match stacks && frames.len() > 3 {
        true => format!("…;{}", frames[frames.len() - 3..].join(";")),
        false => key.to_string(),
    }
}

/// The keys shown of `t`: those beyond the noise (at most `CHANGED`, 25), then the largest.
pub fn shown_keys(t: &TableDiff) -> Vec<&KeyChange> {
    let changed = t.changed().take(CHANGED);
    let rest = t
        .keys
        .iter()
        .filter(|k| !k.verdict.is_change())
        .take(LARGEST);
    changed.chain(rest).collect()
}

const HEADERS: [&str; 7] = ["verdict", "key", "A", "B", "change", "95% interval", "from"];

fn text(d: &DiagDiff, sides: &Sides, width: Option<usize>) -> String {
    let mut out = head(d, sides).join("\n") + "\n";
    for t in shown_tables(d) {
        out.push_str(&format!("\n{}\n", counts(t)));
        let rows = shown_keys(t).into_iter().map(|k| cells(t, k));
        out.push_str(&table::render_within(HEADERS, rows, [2, 3, 4, 5], width));
        out.push('\n');
    }
    out
}

fn markdown(d: &DiagDiff, sides: &Sides) -> String {
    let mut out = format!(
        "## {} comparison\n\n{}\n",
        sides.kind,
        head(d, sides).join(" ")
    );
    for t in shown_tables(d) {
        out.push_str(&format!("\n### {}\n\n", counts(t)));
        let rows = shown_keys(t).into_iter().map(|k| cells(t, k));
        out.push_str(&table::markdown(&HEADERS, rows, [2, 3, 4, 5]));
    }
    out
}
