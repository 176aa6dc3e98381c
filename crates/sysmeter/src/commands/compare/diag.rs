//! `compare` of two diagnosis runs (or sets): each run's rounds read from its results
//! (`model::tally`), compared key by key (`stats::diff`), printed by `report::diff`, and
//! `--fail-above` turned into exit status 1 when a function, site or call grew beyond it
//! with its whole interval.

use super::super::outfile::OutFile;
use super::super::{Outcome, UsageError, console, emit};
use super::write;
use crate::cli::CompareArgs;
use crate::model::RunRecord;
use crate::model::tally::{self, Tally};
use crate::report::compare_text::CompareFormat;
use crate::report::diff::{self, Sides};
use crate::stats::diff::{DiagDiff, diff as compare_rounds};

/// The ids of the results of `run` that are tallied (`profile`, `offcpu`, …), in order.
fn tallied(run: &RunRecord) -> Vec<&str> {
    let results = run.results.iter();
    results
        .filter(|r| tally::of(r).is_some())
        .map(|r| r.id.as_str())
        .collect()
}

/// Whether the runs are diagnoses that `compare` reads round by round.
pub(super) fn is_diagnosis(a: &[RunRecord], b: &[RunRecord]) -> bool {
    a.iter().chain(b).all(|r| !tallied(r).is_empty())
}

/// Every round of `run`: the rounds of its tallied results side by side (`profile --both`
/// has two), as one tally per round.
fn rounds_of(run: &RunRecord) -> Vec<Tally> {
    let per_result: Vec<Vec<Tally>> = (run.results.iter())
        .filter(|r| tally::of(r).is_some())
        .map(tally::rounds)
        .collect();
    let n = per_result.iter().map(Vec::len).min().unwrap_or(0);
    (0..n)
        .map(|i| {
            let parts = per_result.iter().map(|rounds| &rounds[i]);
            let mut t = Tally {
                whole: true,
                ..Tally::default()
            };
            for p in parts {
                t.wall_ns = t.wall_ns.max(p.wall_ns);
                t.whole &= p.whole;
                t.tables.extend(p.tables.iter().cloned());
            }
            t
        })
        .collect()
}

/// The runs of both sides observe the same thing (`profile` against `profile --off-cpu`
/// does not): else the usage error naming both.
fn check_same(a: &[RunRecord], b: &[RunRecord]) -> Result<(), UsageError> {
    let first = &a[0];
    let want = tallied(first);
    match a.iter().chain(b).find(|r| tallied(r) != want) {
        None => Ok(()),
        Some(other) => Err(UsageError(format!(
            "run {} observed {} and run {} observed {}: compare needs runs of the same \
             diagnosis; compare two runs made with the same options",
            first.id,
            want.join(" and "),
            other.id,
            tallied(other).join(" and ")
        ))),
    }
}

/// Compares diagnosis runs `a` and `b` and prints the result where `args` say.
pub(super) fn compare(
    a: &[RunRecord],
    b: &[RunRecord],
    args: &CompareArgs,
    (html, markdown): (Option<OutFile>, Option<OutFile>),
) -> anyhow::Result<Outcome> {
    check_same(a, b)?;
    let to_stdout = [&html, &markdown]
        .iter()
        .any(|o| o.as_ref().is_some_and(OutFile::is_stdout));
    let rounds = |side: &[RunRecord]| side.iter().flat_map(rounds_of).collect::<Vec<_>>();
    let d = compare_rounds(&rounds(a), &rounds(b), args.normalise);
    let (ra, rb): (Vec<&RunRecord>, Vec<&RunRecord>) = (a.iter().collect(), b.iter().collect());
    let sides = Sides::of(&ra, &rb);
    if let Some(out) = html {
        write(out, &diff::html::render(&d, &sides), "HTML comparison")?;
    }
    if let Some(out) = markdown {
        let text = diff::render(&d, &sides, CompareFormat::Markdown, None);
        write(out, &text, "Markdown comparison")?;
    }
    if !to_stdout {
        let width = (!args.full).then(super::terminal_width).flatten();
        emit(&diff::render(&d, &sides, args.format, width))?;
    }
    gate(&d, args.fail_above)
}

/// `--fail-above PCT`: exit 1 when a function, site or call (not a whole stack) grew by
/// more than PCT of A with its whole interval.
fn gate(d: &DiagDiff, fail_above: Option<f64>) -> anyhow::Result<Outcome> {
    let Some(pct) = fail_above else {
        return Ok(Outcome::Success);
    };
    let over: Vec<String> = (d.tables.iter().filter(|t| !t.stacks))
        .flat_map(|t| {
            let grew = t.keys.iter().filter(|k| k.grew_beyond(pct));
            grew.map(move |k| format!("{} ({})", k.key, t.name))
        })
        .collect();
    if over.is_empty() {
        return Ok(Outcome::Success);
    }
    console::errln(format!(
        "regression: {} key(s) grew beyond --fail-above {} with the whole 95% interval: {}",
        over.len(),
        crate::model::units::percent(pct),
        over.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
    ));
    Ok(Outcome::Code(1))
}
