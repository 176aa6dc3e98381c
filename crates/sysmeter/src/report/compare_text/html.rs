//! `sysmeter compare A B --html FILE`: the comparison as one self-contained page (inline CSS
//! and SVG, no script, nothing fetched), so CI can attach it as an artifact. It opens with
//! its answer — the verdict counts and the regressions (or, without `--fail-above`, the
//! metrics slower in B) — then the change chart (every metric's change with its 95% CI,
//! sorted, the noise threshold as a band), the machine's speed and differences, the full
//! table (with the normalised change when the runs have machine-state probes) and the rules.
//!
//! Pure: the comparison and the two records in, a string out; reuses the cells of the text
//! and Markdown forms so the three say the same.

use askama::Template;

use super::machine::{self, deciding};
use super::{
    Difference, change_text, counts, diff_rows, headers, metric_rows, side_line, summary_lines,
    unmatched_line,
};
use crate::model::RunRecord;
use crate::report::charts::Chart;
use crate::report::charts::change::{Change, change_chart};
use crate::report::html::HtmlError;
use crate::stats::compare::{MetricComparison, RunComparison, Verdict};

/// A verdict and how many metrics got it.
pub struct CountView {
    /// `slower`, `faster`, …
    pub label: &'static str,
    /// Metrics.
    pub n: usize,
    /// CSS class.
    pub class: &'static str,
}

/// The page.
#[derive(Template)]
#[template(path = "compare.html")]
struct ComparePage {
    title: String,
    sides: [String; 2],
    counts: Vec<CountView>,
    /// What needs looking at: the regressions, or the metrics slower in B.
    attention_heading: String,
    attention: Vec<String>,
    chart: Option<Chart>,
    machine_lines: Vec<String>,
    machine: Vec<Vec<String>>,
    run: Vec<Vec<String>>,
    headers: Vec<&'static str>,
    rows: Vec<Vec<String>>,
    only: Vec<(&'static str, Vec<String>)>,
    rules: Vec<String>,
    generator: String,
}

/// The colour of a verdict's dot in the change chart.
fn verdict_color(v: Verdict) -> &'static str {
    match v {
        Verdict::Slower => "#b3261e",
        Verdict::Faster => "#1b7f3b",
        Verdict::Higher | Verdict::Lower => "#0072b2",
        _ => "#777777",
    }
}

/// The change and its CI that the verdict was judged on.
fn change_of(m: &MetricComparison) -> Option<Change> {
    let c = deciding(m)?;
    Some(Change {
        name: format!("{} · {}", m.experiment, m.metric),
        change: c.change()?,
        ci: c.shown_ci()?,
        color: verdict_color(m.verdict),
    })
}

fn count_views(cmp: &RunComparison) -> Vec<CountView> {
    let c = counts(cmp);
    let all = [
        ("slower", c.slower, "slower"),
        ("faster", c.faster, "faster"),
        ("no change", c.no_change, "same"),
        ("machine slower", c.machine_slower, "machine"),
        ("machine faster", c.machine_faster, "machine"),
        ("machine busier", c.machine_busier, "machine"),
        ("machine quieter", c.machine_quieter, "machine"),
        ("higher", c.higher, "neutral"),
        ("lower", c.lower, "neutral"),
        ("not compared", c.not_compared, "same"),
        ("regressions", c.regressions, "slower"),
    ];
    all.into_iter()
        .filter(|(label, n, _)| *n > 0 || ["slower", "faster", "no change"].contains(label))
        .map(|(label, n, class)| CountView { label, n, class })
        .collect()
}

fn attention(cmp: &RunComparison) -> (String, Vec<String>) {
    let line = |m: &MetricComparison| {
        let change = deciding(m)
            .filter(|c| c.change().is_some() && c.shown_ci().is_some())
            .map_or_else(String::new, |c| format!(": {}", change_text(c)));
        format!("{} · {}{change}", m.experiment, m.metric)
    };
    match cmp.fail_above {
        Some(f) => (
            format!("Regressions beyond --fail-above {:.1}%", f * 100.0),
            cmp.regressions().map(line).collect(),
        ),
        None => (
            "Slower in B".to_string(),
            cmp.metrics
                .iter()
                .filter(|m| m.verdict == Verdict::Slower)
                .map(line)
                .collect(),
        ),
    }
}

/// Renders the comparison of `b` against baseline `a` as one HTML page.
pub fn render(cmp: &RunComparison, a: &RunRecord, b: &RunRecord) -> Result<String, HtmlError> {
    let machine: Vec<Difference> = super::machine_differences(&a.host, &b.host);
    let run: Vec<Difference> = super::run_differences(a, b);
    let changes: Vec<Change> = cmp.metrics.iter().filter_map(change_of).collect();
    let (attention_heading, attention) = attention(cmp);
    let unmatched = |list: &[crate::stats::compare::Unmatched]| {
        list.iter().map(unmatched_line).collect::<Vec<_>>()
    };
    let only = vec![
        ("Only in A", unmatched(&cmp.only_in_a)),
        ("Only in B", unmatched(&cmp.only_in_b)),
    ];
    let page = ComparePage {
        title: format!("sysmeter compare {} → {}", cmp.sides.a.id, cmp.sides.b.id),
        sides: [
            side_line("A (baseline)", &cmp.sides.a),
            side_line("B (candidate)", &cmp.sides.b),
        ],
        counts: count_views(cmp),
        attention_heading,
        attention,
        chart: change_chart(&changes, cmp.options.threshold),
        machine_lines: [machine::machine_lines(cmp), machine::set_lines(cmp)].concat(),
        machine: diff_rows(&machine),
        run: diff_rows(&run),
        headers: headers(machine::has_normalised(cmp)),
        rows: metric_rows(cmp),
        only: only.into_iter().filter(|(_, l)| !l.is_empty()).collect(),
        rules: summary_lines(cmp),
        generator: format!("sysmeter {}", env!("CARGO_PKG_VERSION")),
    };
    page.render().map_err(|source| HtmlError::Template {
        run: format!("{} → {}", cmp.sides.a.id, cmp.sides.b.id),
        source,
    })
}
