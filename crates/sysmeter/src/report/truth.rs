//! The consistency checker of every page (issue 43, "one source per number"): a figure a page
//! shows — in a table, a header, a finding, a glance line or a chart label — must be one of
//! the record's values, formatted as `model::units` formats it, and a figure shown beside a
//! label of the record (a metric, a series, a row of a diagnosis) must be one of *that*
//! label's values.
//!
//! How: [`Truth::of`] walks the record as JSON (so it knows every kind without a list of
//! fields) and keeps, per label (an object's `name`, `function`, `symbol`…), the numbers under
//! it, each formatted in every unit `model::units` knows; [`check`] reads a rendered page
//! (`page.rs`: text, Markdown or HTML turned into lines; figures with a unit, ranges split in
//! two; axis ticks, which are a scale and not a figure, left out) and returns every figure
//! that is none of the record's values, or not one of its label's. Text the record holds
//! verbatim (a finding's sentence) is the record's own: its figures are checked against a
//! label they stand beside, not against the values, and beside a metric's name against that
//! metric's figure (its median, or with rounds the median of its round medians: what the
//! tables show), so a finding that quotes one round of a pooled metric is caught. A range whose ends are one figure
//! (`921–921 ms`) is a mismatch too: one value shown as an interval; so is a value outside
//! the interval shown right after it (`median 1.15 ns | 1.23–1.23 ns`): a figure and its
//! interval must describe the same thing ([`outside_its_interval`]). Bare counts and percentages are not
//! checked: most are shares derived on the page.
//!
//! Test code only; uses `model::units` and `serde_json`.

mod page;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_kinds;

#[cfg(test)]
pub(crate) use tests_kinds::every_page_of;

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::model::{Unit, units};

pub(crate) use page::figures;
pub(crate) use page::magnitude;
use page::{End, Figure};

/// How far a value may sit outside its interval and still be inside it: the rounding of
/// three significant figures.
const ROUNDING: f64 = 0.005;

/// The fields whose string names the object they sit in (its label), in order of preference.
/// A finding's `key` is not one: pages show its sentence, never the key.
const LABEL_FIELDS: [&str; 7] = [
    "name", "metric", "function", "label", "symbol", "reason", "call",
];

/// Record strings shorter than this are labels, not sentences: figures in them are not
/// exempt.
const SENTENCE: usize = 8;

/// What a record says: every value in every format, the values per label, its sentences.
#[derive(Debug, Default)]
pub(crate) struct Truth {
    /// Every number of the record, formatted in every unit.
    all: BTreeSet<String>,
    /// A label (lower case) → the formatted numbers of its object.
    labels: BTreeMap<String, BTreeSet<String>>,
    /// The record's strings long enough to be sentences.
    pub(crate) sentences: Vec<String>,
    /// A metric's name (lower case) → its figure (`Metric::figure`) in every format: what a
    /// sentence of the record (a finding) may quote beside that name.
    figures: BTreeMap<String, BTreeSet<String>>,
}

/// A figure that contradicts the record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Mismatch {
    /// The figure as shown.
    pub(crate) shown: String,
    /// The label it stands beside, if any.
    pub(crate) label: Option<String>,
    /// The line it was read from.
    pub(crate) line: String,
}

impl Truth {
    /// The truth of `values` (a record, or the records and comparison a page shows).
    pub(crate) fn of(values: &[Value]) -> Truth {
        let mut truth = Truth::default();
        for v in values {
            truth.walk(v, None);
        }
        truth.sentences.sort_by_key(|s| std::cmp::Reverse(s.len()));
        truth.sentences.dedup();
        truth
    }

    fn walk(&mut self, v: &Value, label: Option<&str>) {
        match v {
            Value::Number(n) => self.add(label, n.as_f64().unwrap_or(f64::NAN)),
            // An artifact's table, kept as JSON text in the record.
            Value::String(s) if s.starts_with(['[', '{']) => {
                if let Ok(inner) = serde_json::from_str::<Value>(s) {
                    self.walk(&inner, label);
                }
            }
            Value::String(s) => self.sentences.extend(pieces(s)),
            Value::Array(items) => items.iter().for_each(|i| self.walk(i, label)),
            Value::Object(map) => {
                let own = LABEL_FIELDS
                    .iter()
                    .find_map(|f| map.get(*f).and_then(Value::as_str))
                    .filter(|l| l.chars().any(char::is_alphabetic));
                let label = own.or(label);
                if let Some(l) = own {
                    self.labels.entry(l.to_lowercase()).or_default();
                    if let Some(x) = figure(map) {
                        let set = self.figures.entry(l.to_lowercase()).or_default();
                        set.extend(formats(x));
                    }
                }
                map.values().for_each(|i| self.walk(i, label));
                self.derived(map, label);
            }
            _ => {}
        }
    }

    /// What a table shows of an object beside its fields: a summary's total (n × mean, a
    /// "total" column), the totals of a result's metrics (its "total" row: their sum and
    /// mean per call), and a typed row's mean per event (one field over another: bytes per
    /// allocation, hold time per lock).
    fn derived(&mut self, map: &serde_json::Map<String, Value>, label: Option<&str>) {
        if let (Some(n), Some(mean)) = (number(map, "n"), number(map, "mean")) {
            self.add(label, n * mean);
        }
        if let Some(Value::Array(metrics)) = map.get("metrics") {
            let summaries = metrics.iter().filter_map(|m| m.get("summary"));
            let (mut calls, mut sum) = (0.0, 0.0);
            for s in summaries {
                let (n, mean) = (s["n"].as_f64(), s["mean"].as_f64());
                calls += n.unwrap_or(0.0);
                sum += n.unwrap_or(0.0) * mean.unwrap_or(0.0);
            }
            self.add(None, sum);
            self.add(None, sum / calls);
        }
        // A CI, and the range of the round medians, as `units::range` shows them: finer
        // than a value when the ends are close.
        for field in ["ci95", "medians"] {
            let Some(values) = map.get(field).and_then(Value::as_array) else {
                continue;
            };
            let values = values.iter().filter_map(Value::as_f64);
            let lo = values.clone().fold(f64::INFINITY, f64::min);
            let hi = values.fold(f64::NEG_INFINITY, f64::max);
            for unit in [Unit::Ns, Unit::Bytes, Unit::BytesPerSec] {
                let shown = units::range(lo, hi, unit);
                self.add_shown(
                    label,
                    page::figures(&shown, &[], &[]).into_iter().map(|f| f.shown),
                );
            }
        }
        if map.contains_key("median") {
            return;
        }
        let fields: Vec<f64> = map.values().filter_map(Value::as_f64).collect();
        for a in &fields {
            for b in fields.iter().filter(|b| **b > 0.0) {
                self.add(label, a / b);
            }
        }
    }

    /// Adds the value `x` (under `label`, if any) in every format.
    pub(crate) fn add(&mut self, label: Option<&str>, x: f64) {
        self.add_shown(label, formats(x));
    }

    /// Adds figures as shown (under `label`, if any).
    fn add_shown(&mut self, label: Option<&str>, shown: impl IntoIterator<Item = String>) {
        let shown: Vec<String> = shown.into_iter().collect();
        if let Some(l) = label {
            let set = self.labels.entry(l.to_lowercase()).or_default();
            set.extend(shown.iter().cloned());
        }
        self.all.extend(shown);
    }

    /// The labels, longest first (a longer label wins where one contains another).
    pub(crate) fn labels(&self) -> Vec<&str> {
        let mut all: Vec<&str> = self.labels.keys().map(String::as_str).collect();
        all.sort_by_key(|l| std::cmp::Reverse(l.len()));
        all
    }

    /// Whether `shown` is one of the record's values.
    fn holds(&self, shown: &str) -> bool {
        self.all.contains(shown)
    }

    /// Whether `shown` is one of `label`'s values; in a sentence of the record beside a
    /// metric's name, that metric's figure (a finding quoting one round where the tables
    /// show all of them quotes another of its values, which is no less a contradiction).
    fn holds_for(&self, label: &str, shown: &str, quoted: bool) -> bool {
        if let Some(figure) = self.figures.get(label).filter(|_| quoted) {
            return figure.contains(shown);
        }
        self.labels
            .get(label)
            .is_some_and(|values| values.contains(shown))
    }
}

/// The pieces of a record string a page may quote: the whole, and its clauses (a note's
/// `; `-joined parts, what follows a `: ` or ` = `), Markdown marks removed; only those with
/// a digit, long enough to be more than a label.
fn pieces(s: &str) -> Vec<String> {
    let s = page::plain(s);
    let mut all = vec![s.clone()];
    for clause in s.split("; ") {
        all.push(clause.to_string());
        all.extend(clause.split(": ").skip(1).map(str::to_string));
        all.extend(clause.split(" = ").skip(1).map(str::to_string));
    }
    all.retain(|p| p.chars().count() >= SENTENCE && p.chars().any(|c| c.is_ascii_digit()));
    all
}

/// The figure of a metric (an object with a `summary`): the median of its round medians
/// with rounds, else its median.
fn figure(map: &serde_json::Map<String, Value>) -> Option<f64> {
    let of_rounds = map.get("rounds").and_then(|r| r.get("median"));
    let median = map.get("summary").and_then(|s| s.get("median"));
    of_rounds.or(median).and_then(Value::as_f64)
}

/// The number in field `field` of `map`.
fn number(map: &serde_json::Map<String, Value>, field: &str) -> Option<f64> {
    map.get(field).and_then(Value::as_f64)
}

/// `x` in every format a page may show it in (`model::units`), numbers as the page parses
/// them (`Figure::shown`): a duration, a rate, a size, cycles.
fn formats(x: f64) -> Vec<String> {
    if !x.is_finite() {
        return Vec::new();
    }
    let mut all = vec![
        units::duration_ns(x),
        units::rate(x),
        units::bytes(x),
        units::cycles(x).trim_start_matches('~').to_string(),
    ];
    // Fields in µs, ms or seconds, and KiB (what `/proc` and rusage report), as the page
    // shows them in ns and bytes.
    all.extend([1e3, 1e6, 1e9].map(|scale| units::duration_ns(x * scale)));
    all.push(units::bytes(x * 1024.0));
    all
}

/// Every figure of `page` that contradicts `truth`.
pub(crate) fn check(truth: &Truth, page: &str) -> Vec<Mismatch> {
    let labels = truth.labels();
    let mut wrong = Vec::new();
    for figure in figures(page, &labels, &truth.sentences).iter() {
        let fits = !figure.range_of_one
            && match &figure.label {
                Some(label) => truth.holds_for(label, &figure.shown, figure.quoted),
                None => figure.quoted || truth.holds(&figure.shown),
            };
        if !fits {
            wrong.push(Mismatch {
                shown: figure.shown.clone(),
                label: figure.label.clone(),
                line: figure.line.clone(),
            });
        }
    }
    wrong.extend(outside_its_interval(&figures(
        page,
        &labels,
        &truth.sentences,
    )));
    wrong
}

/// Every value followed, as the next figure of its line, by an interval that does not hold
/// it: a table's median and its CI, `median X (95% CI a–b)`.
pub(crate) fn outside_its_interval(figures: &[Figure]) -> Vec<Mismatch> {
    let mut wrong = Vec::new();
    for w in figures.windows(3) {
        let [value, low, high] = w else { continue };
        let one_line = value.line == low.line && low.line == high.line;
        let shape = (value.end, low.end, high.end) == (None, Some(End::Low), Some(End::High));
        if !one_line || !shape {
            continue;
        }
        let parsed = [value, low, high].map(|f| magnitude(&f.shown));
        let [Some((v, a)), Some((lo, b)), Some((hi, c))] = parsed else {
            continue;
        };
        let inside = v >= lo * (1.0 - ROUNDING) && v <= hi * (1.0 + ROUNDING);
        if a == b && b == c && !inside {
            wrong.push(Mismatch {
                shown: format!("{} outside {}–{}", value.shown, low.shown, high.shown),
                label: value.label.clone(),
                line: value.line.clone(),
            });
        }
    }
    wrong
}
