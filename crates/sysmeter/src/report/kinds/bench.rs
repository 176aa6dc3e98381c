//! A `bench` run: in the terminal the concise view (`concise.rs`), or with `--full` every
//! table followed by "this machine at a glance"; in HTML bar charts that share units, the
//! glance cards, and as the answer the findings per group, ranked, the first three shown.
//!
//! Pure. Depends on `model` and `report` (concise, text, glance, the HTML views).

use super::KindView;
use crate::model::RunRecord;
use crate::report::glance::{self, Glance};
use crate::report::html::answer::{AnswerView, GroupFindings};
use crate::report::html::rich::rich;
use crate::report::html::view::{self, ExperimentView, FindingView};
use crate::report::{concise, text};

/// The view of `bench`.
pub(super) struct Bench;

impl KindView for Bench {
    fn text(&self, run: &RunRecord, color: bool, full: bool) -> Option<String> {
        if !full {
            return Some(concise::render(run, color));
        }
        let mut out = text::render(run, self, color);
        out.push('\n');
        out.push_str(&glance::text(&glance::glance(run)).join("\n"));
        out.push('\n');
        Some(out)
    }

    fn html_bars(&self) -> bool {
        true
    }

    fn html_glance(&self, run: &RunRecord) -> Option<Glance> {
        Some(glance::glance(run))
    }

    fn html_answer(&self, run: &RunRecord, _views: &mut [ExperimentView]) -> AnswerView {
        answer(run)
    }
}

/// How many findings of a group are shown before "N more".
const SHOWN_PER_GROUP: usize = 3;

/// Ranks a group's findings: the ones "at a glance" quotes first (in its order), then what
/// the experiments found (in run order), the machine state's notes (`machine.*`: how still
/// the machine was) last; all but the first [`SHOWN_PER_GROUP`] folded.
fn rank(g: &mut GroupFindings) {
    g.findings.sort_by_key(|(_, id, f)| {
        let top = glance::top_rank(id, &f.key).unwrap_or(usize::MAX);
        (top, f.key.starts_with("machine."))
    });
    if g.findings.len() > SHOWN_PER_GROUP {
        g.more = g.findings.split_off(SHOWN_PER_GROUP);
    }
}

/// The top of the bench page: the findings per group, in run order ("this machine at a
/// glance" is above them).
fn answer(run: &RunRecord) -> AnswerView {
    let mut groups: Vec<GroupFindings> = Vec::new();
    for r in &run.results {
        let group = r.id.split('.').next().unwrap_or(&r.id).to_string();
        let found = r.findings.iter().map(|f| {
            let finding = FindingView {
                key: f.key.clone(),
                text_html: rich(&f.text),
            };
            (view::anchor(&r.id), r.id.clone(), finding)
        });
        let found: Vec<_> = found.collect();
        match groups.iter_mut().find(|g| g.group == group) {
            Some(g) => g.findings.extend(found),
            None => groups.push(GroupFindings {
                group,
                findings: found,
                more: Vec::new(),
            }),
        }
    }
    groups.retain(|g| !g.findings.is_empty());
    for g in &mut groups {
        rank(g);
    }
    AnswerView {
        heading: "Findings per group".into(),
        groups,
        ..AnswerView::default()
    }
}
