//! Rendering of `sysmeter compare`: a [`RunComparison`] as terminal text, GitHub markdown or
//! JSON. Machine differences come first (they explain a change better than code does): the
//! machine's speed B/A from the machine-state probes, then what differs in the description,
//! run-setting differences, one row per shared metric (the two medians, the relative change
//! with its 95% CI, the normalised change when the runs have probes, the p-value, the
//! verdict), what only one side measured, and a summary with the `--fail-above` outcome.
//!
//! Pure: builds strings from the comparison and the two records; never looks at the
//! terminal (the caller decides `color`) and never queries the database.

mod document;
mod host_diff;
pub mod html;
mod machine;
mod markdown;
mod terminal;
#[cfg(test)]
pub(crate) mod tests;

pub use document::{CompareDocument, Counts};
pub use host_diff::{Difference, machine_differences, machine_fields, run_differences};

use document::{counts, json};
use terminal::text;

use crate::model::units;

use super::ReportError;
use super::format;
use super::text::timestamp;
use crate::model::RunRecord;
use crate::stats::compare::{
    MetricComparison, RunComparison, RunSide, SampleComparison, ShownCi, UNBOUNDED_FACTOR,
    Unmatched,
};

/// Version of the `compare --format json` document (docs/json-schema.md). Bumped on any
/// incompatible change, like the run record's schema.
pub const COMPARE_SCHEMA: u32 = 1;

/// Output format of `sysmeter compare`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum CompareFormat {
    /// Terminal tables (the default).
    #[default]
    Text,
    /// One JSON document (documented in docs/json-schema.md).
    Json,
    /// GitHub-flavoured markdown, e.g. for a pull-request comment.
    Markdown,
}

/// How [`CompareFormat::Text`] is laid out for the terminal; other formats ignore it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TextLayout {
    /// Bold headings.
    pub color: bool,
    /// The widest a line may be (the terminal's columns); `None`: every line whole
    /// (`--full`).
    pub width: Option<usize>,
}

/// Renders the comparison of `b` against baseline `a`.
pub fn render(
    cmp: &RunComparison,
    a: &RunRecord,
    b: &RunRecord,
    format: CompareFormat,
    layout: TextLayout,
) -> Result<String, ReportError> {
    let machine = machine_differences(&a.host, &b.host);
    let run = run_differences(a, b);
    match format {
        CompareFormat::Json => json(cmp, machine, run),
        CompareFormat::Text => Ok(text(cmp, &machine, &run, layout.color, layout.width)),
        CompareFormat::Markdown => Ok(markdown::render(cmp, &machine, &run)),
    }
}

/// Headers of the metric table; the normalised column only when a metric has one.
fn headers(normalised: bool) -> Vec<&'static str> {
    let mut h = vec![
        "experiment",
        "metric",
        "A median",
        "B median",
        "change [95% CI]",
    ];
    if normalised {
        h.push("normalised [95% CI]");
    }
    h.extend(["p", "verdict"]);
    h
}

/// The right-aligned columns of the metric table.
fn right_columns(normalised: bool) -> Vec<usize> {
    if normalised {
        vec![2, 3, 4, 5, 6]
    } else {
        vec![2, 3, 4, 5]
    }
}

/// The rows of the metric table.
fn metric_rows(cmp: &RunComparison) -> Vec<Vec<String>> {
    let normalised = machine::has_normalised(cmp);
    cmp.metrics
        .iter()
        .map(|m| {
            let mut row = metric_cells(m, cmp.options.threshold).to_vec();
            if normalised {
                row.insert(5, machine::normalised_cell(m));
            }
            row
        })
        .collect()
}

/// A signed percentage with one decimal: `+10.0%`, `-2.3%`.
fn signed_percent(fraction: f64) -> String {
    format!("{:+.1}%", fraction * 100.0)
}

/// A 95% CI of a change as shown: `[+8.1%, +12.0%]`, an end too far from the ratio to bound
/// anything printed as `unbounded` (`stats::compare::bounds`).
fn ci_text(ci: ShownCi) -> String {
    let end = |e: Option<f64>| e.map_or_else(|| "unbounded".to_string(), signed_percent);
    format!("[{}, {}]", end(ci.lo), end(ci.hi))
}

/// A change with its 95% CI: `+10.0% [+8.1%, +12.0%]`, or why there is none.
fn change_text(c: &SampleComparison) -> String {
    match (c.change(), c.shown_ci()) {
        (Some(ch), Some(ci)) => format!("{} {}", signed_percent(ch), ci_text(ci)),
        (Some(ch), None) => format!("{} [no CI]", signed_percent(ch)),
        (None, _) => "n/a (A's median ≤ 0)".to_string(),
    }
}

/// What `unbounded` means, for the rule lines, when a CI shown has an unbounded end.
fn unbounded_line(cmp: &RunComparison) -> Option<String> {
    let open = |c: &SampleComparison| c.shown_ci().is_some_and(|ci| ci.is_open());
    let any = cmp.metrics.iter().any(|m| {
        [m.comparison.as_ref(), m.normalised.as_ref()]
            .into_iter()
            .flatten()
            .any(open)
    });
    any.then(|| {
        format!(
            "unbounded = a CI end more than {}× away from the ratio B/A: the samples do not bound \
             the change on that side (too few, or too noisy); the JSON keeps the computed end.",
            UNBOUNDED_FACTOR
        )
    })
}

/// The p-value the verdict was judged on: adjusted for the metrics compared at once when it
/// was (the rule line says so), else the test's own.
fn shown_p(c: &SampleComparison) -> f64 {
    c.p_adjusted.unwrap_or_else(|| c.p_value())
}

/// A p-value: `<0.001` or three decimals.
fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// The cells of one metric row.
fn metric_cells(m: &MetricComparison, threshold: f64) -> [String; 7] {
    let none = || format::NONE.to_string();
    let Some(c) = &m.comparison else {
        let note = m.note.clone().unwrap_or_default();
        let [e, n] = [m.experiment.clone(), m.metric.clone()];
        return [e, n, none(), none(), note, none(), "not compared".into()];
    };
    let change = change_text(c);
    let mut verdict = machine::verdict_text(m, threshold);
    if m.regression {
        verdict.push_str(" — REGRESSION");
    }
    [
        m.experiment.clone(),
        m.metric.clone(),
        units::value(c.median_a, m.unit),
        units::value(c.median_b, m.unit),
        change,
        p_value(shown_p(machine::deciding(m).unwrap_or(c))),
        verdict,
    ]
}

fn side_line(label: &str, s: &RunSide) -> String {
    let line = format!(
        "{label}: {} · {} · {} · {} · profile {} · sysmeter {}",
        s.id,
        s.kind.as_str(),
        timestamp(s.started_ns),
        s.hostname,
        s.profile,
        s.tool_version
    );
    match s.incomplete {
        true => format!("{line} · {}", crate::model::INCOMPLETE),
        false => line,
    }
}

fn unmatched_line(u: &Unmatched) -> String {
    let mut s = match &u.metric {
        Some(m) => format!("{} · {m}", u.experiment),
        None => u.experiment.clone(),
    };
    if let Some(note) = &u.note {
        s.push_str(&format!(" ({note})"));
    }
    s
}

/// What the verdicts mean and how they came out, then the `--fail-above` outcome.
fn summary_lines(cmp: &RunComparison) -> Vec<String> {
    let c = counts(cmp);
    let mut parts = vec![
        format!("{} slower", c.slower),
        format!("{} faster", c.faster),
        format!("{} no change", c.no_change),
    ];
    for (n, what) in [
        (c.machine_slower, "machine slower"),
        (c.machine_faster, "machine faster"),
        (c.machine_busier, "machine busier (not judged)"),
        (c.machine_quieter, "machine quieter (not judged)"),
        (c.higher, "higher"),
        (c.lower, "lower"),
        (c.not_compared, "not compared"),
    ] {
        if n > 0 {
            parts.push(format!("{n} {what}"));
        }
    }
    let mut lines = vec![
        format!("{}.", parts.join(", ")),
        format!(
            "change = B median / A median − 1 with a bootstrap 95% CI; verdicts need |change| > {} \
             and significance (Mann-Whitney p < {}{} and a CI that excludes 0).",
            units::percent(cmp.options.threshold),
            cmp.options.alpha,
            adjusted_for(cmp)
        ),
    ];
    lines.extend(unbounded_line(cmp));
    lines.extend(machine::rule_lines(cmp));
    if let Some(f) = cmp.fail_above {
        let regressions: Vec<String> = cmp
            .regressions()
            .map(|m| format!("{} · {}", m.experiment, m.metric))
            .collect();
        lines.push(if regressions.is_empty() {
            format!(
                "--fail-above {}: no regression beyond it.",
                units::percent(f)
            )
        } else {
            format!(
                "--fail-above {}: {} regression(s) with the whole CI beyond it: {}.",
                units::percent(f),
                regressions.len(),
                regressions.join("; ")
            )
        });
    }
    lines
}

fn diff_rows(d: &[Difference]) -> Vec<Vec<String>> {
    d.iter()
        .map(|d| vec![d.field.clone(), d.a.clone(), d.b.clone()])
        .collect()
}

/// How the p-values were adjusted, for the rule line: ", adjusted for the N metrics compared
/// at once (Benjamini–Hochberg)," when more than one metric was tested, else nothing.
fn adjusted_for(cmp: &RunComparison) -> String {
    let n = (cmp.metrics.iter())
        .filter(|m| {
            m.comparison
                .as_ref()
                .is_some_and(|c| c.p_adjusted.is_some())
        })
        .count();
    if n > 1 {
        format!(", adjusted for the {n} metrics compared at once (Benjamini–Hochberg),")
    } else {
        String::new()
    }
}
