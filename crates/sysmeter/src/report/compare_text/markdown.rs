//! The markdown form of `sysmeter compare` (for a pull-request comment, or `--markdown
//! FILE`): the verdict counts and the metrics slower in B first, then the same parts as the
//! terminal text, as GFM tables and lists.
//!
//! Pure: builds a string.

use super::{
    Difference, diff_rows, headers, machine, metric_rows, right_columns, side_line, summary_lines,
    unmatched_line,
};
use crate::report::table::{markdown as md_table, md_escape};
use crate::stats::compare::{RunComparison, Verdict};

/// The answer first: the verdict counts and the metrics slower in B (or regressions).
fn answer(cmp: &RunComparison) -> Vec<String> {
    let mut blocks = Vec::new();
    if let Some(counts) = summary_lines(cmp).first() {
        blocks.push(format!("**Verdicts:** {}", md_escape(counts)));
    }
    let slower: Vec<String> = cmp
        .metrics
        .iter()
        .filter(|m| m.regression || m.verdict == Verdict::Slower)
        .map(|m| format!("- {} · {}", md_escape(&m.experiment), md_escape(&m.metric)))
        .collect();
    if !slower.is_empty() {
        blocks.push(format!("**Slower in B**\n\n{}", slower.join("\n")));
    }
    blocks
}

/// The comparison as GitHub markdown.
pub(super) fn render(cmp: &RunComparison, machine: &[Difference], run: &[Difference]) -> String {
    let mut blocks = vec![
        format!(
            "# sysmeter compare {} → {}",
            md_escape(&cmp.sides.a.id),
            md_escape(&cmp.sides.b.id)
        ),
        format!(
            "- {}\n- {}",
            md_escape(&side_line("**A** (baseline)", &cmp.sides.a)),
            md_escape(&side_line("**B** (candidate)", &cmp.sides.b))
        ),
    ];
    blocks.extend(answer(cmp));
    let sets = machine::set_lines(cmp);
    if !sets.is_empty() {
        blocks.push(md_escape(&sets.join(" ")));
    }
    let speed = machine::machine_lines(cmp);
    if let Some((first, rest)) = speed.split_first() {
        let mut lines = vec![format!("**{}**", md_escape(first))];
        lines.extend(rest.iter().map(|l| md_escape(l)));
        blocks.push(lines.join("\n\n"));
    }
    if !machine.is_empty() {
        blocks.push(
            "**Machine differences** (a change below may come from these, not from the code):"
                .into(),
        );
        blocks.push(md_table(&["machine", "A", "B"], diff_rows(machine), []));
    }
    if !run.is_empty() {
        blocks.push("**Run settings differ:**".into());
        blocks.push(md_table(&["setting", "A", "B"], diff_rows(run), []));
    }
    if cmp.metrics.is_empty() {
        blocks.push("No metric is measured in both runs.".into());
    } else {
        let normalised = machine::has_normalised(cmp);
        blocks.push(md_table(
            &headers(normalised),
            metric_rows(cmp),
            right_columns(normalised),
        ));
    }
    for (label, list) in [("Only in A", &cmp.only_in_a), ("Only in B", &cmp.only_in_b)] {
        if !list.is_empty() {
            let items: Vec<String> = list
                .iter()
                .map(|u| format!("- {}", md_escape(&unmatched_line(u))))
                .collect();
            blocks.push(format!("**{label}**\n\n{}", items.join("\n")));
        }
    }
    blocks.push(summary_lines(cmp).join("\n\n"));
    let mut out = blocks.join("\n\n");
    out.push('\n');
    out
}
