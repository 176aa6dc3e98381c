//! The terminal form of `sysmeter compare`: the two runs and the verdict counts first, then
//! the machine and what differs, the metric table, what only one side measured and the rules,
//! every line held to the width the caller passes (`TextLayout`).
//!
//! Pure: builds a string from the comparison; the cells come from the parent module, the
//! tables and the wrapping from `report::table`.

use super::{Difference, diff_rows, headers, machine, metric_rows, right_columns, side_line};
use super::{summary_lines, unmatched_line};
use crate::report::table;
use crate::stats::compare::RunComparison;

/// The terminal text: the two runs and the verdict counts first, then the machine, the
/// differences, the metric table, what only one side measured and the rules. Held to `width`
/// columns when given: tables wrap their cells, prose lines wrap between words.
pub(super) fn text(
    cmp: &RunComparison,
    machine: &[Difference],
    run: &[Difference],
    color: bool,
    width: Option<usize>,
) -> String {
    let bold = |s: &str| crate::report::text::bold(s.to_string(), color);
    let table = |h: Vec<&str>, rows: Vec<Vec<String>>, right: Vec<usize>| {
        table::render_within(h, rows, right, width)
    };
    let summary = summary_lines(cmp);
    let (counts, rules) = summary
        .split_first()
        .map_or((None, &[][..]), |(c, r)| (Some(c), r));
    let mut out = vec![
        side_line("A (baseline) ", &cmp.sides.a),
        side_line("B (candidate)", &cmp.sides.b),
    ];
    out.extend(counts.map(|c| bold(&format!("Verdicts: {c}"))));
    out.extend(machine_blocks(cmp, machine, run, &bold, width));
    out.push(String::new());
    if cmp.metrics.is_empty() {
        out.push("No metric is measured in both runs.".to_string());
    } else {
        let normalised = machine::has_normalised(cmp);
        let (h, right) = (headers(normalised), right_columns(normalised));
        out.push(table(h, metric_rows(cmp), right));
    }
    for (label, list) in [("only in A", &cmp.only_in_a), ("only in B", &cmp.only_in_b)] {
        if !list.is_empty() {
            let items: Vec<String> = list.iter().map(unmatched_line).collect();
            out.push(format!("{label}: {}", items.join("; ")));
        }
    }
    out.push(String::new());
    out.extend(rules.iter().cloned());
    held_to(out, width)
}

/// What differs between the two sides: the sets' lines, the machine's speed, the machine
/// differences and the run settings, the tables held to `width`.
fn machine_blocks(
    cmp: &RunComparison,
    machine: &[Difference],
    run: &[Difference],
    bold: &dyn Fn(&str) -> String,
    width: Option<usize>,
) -> Vec<String> {
    let mut out = machine::set_lines(cmp);
    let speed = machine::machine_lines(cmp);
    if !speed.is_empty() {
        out.push(String::new());
        out.extend(
            speed
                .into_iter()
                .map(|l| match l.starts_with("Machine speed") {
                    true => bold(&l),
                    false => l,
                }),
        );
    }
    let differences = [
        (
            machine,
            "Machine differences (a change below may come from these, not from the code):",
            "machine",
        ),
        (run, "Run settings differ:", "setting"),
    ];
    for (list, title, field) in differences.into_iter().filter(|d| !d.0.is_empty()) {
        out.extend([String::new(), bold(title)]);
        let rows = diff_rows(list);
        out.push(table::render_within(vec![field, "A", "B"], rows, [], width));
    }
    out
}

/// The blocks of the text joined into lines, every line of prose wrapped to `width` (tables
/// are already drawn to it).
fn held_to(blocks: Vec<String>, width: Option<usize>) -> String {
    let mut s = String::new();
    for block in blocks {
        for line in block.split('\n') {
            match width {
                Some(w) => table::wrap(line, w).into_iter().for_each(|l| {
                    s.push_str(&l);
                    s.push('\n');
                }),
                None => {
                    s.push_str(line);
                    s.push('\n');
                }
            }
        }
    }
    s
}
