//! The one terminal table of the text renderers (a bench's metric and series tables, the
//! timeline, compare, the tables of the diagnoses): comfy-table's condensed UTF-8 style, the
//! columns that hold numbers aligned right; and the one Markdown (GFM) table of the Markdown
//! renderers (compare, locks), aligned the same way.
//!
//! `force_no_tty` keeps comfy-table from probing the terminal width or styling cells, so the
//! output depends only on what is rendered. Pure; depends on nothing of the crate.

use comfy_table::{CellAlignment, Row, Table, presets::UTF8_FULL_CONDENSED};

/// A table of `headers` without rows yet, the columns `right` aligned right; the rows added
/// to it take the alignment of their column.
pub(crate) fn styled(headers: impl Into<Row>, right: impl IntoIterator<Item = usize>) -> Table {
    let mut table = Table::new();
    table
        .force_no_tty()
        .load_style(UTF8_FULL_CONDENSED)
        .set_header(headers);
    for index in right {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    table
}

/// The text of a table of `headers` and `rows`, the columns `right` aligned right.
pub(crate) fn render(
    headers: impl Into<Row>,
    rows: impl IntoIterator<Item = Vec<String>>,
    right: impl IntoIterator<Item = usize>,
) -> String {
    let mut table = styled(headers, right);
    for row in rows {
        table.add_row(row);
    }
    table.to_string()
}

/// Makes text safe inside a Markdown table cell (`|` escaped, line breaks as spaces).
pub(crate) fn md_escape(text: &str) -> String {
    text.replace('|', "\\|").replace(['\r', '\n'], " ")
}

/// A Markdown table of `headers` and `rows`, every cell escaped, the columns `right`
/// aligned right.
pub(crate) fn markdown(
    headers: &[&str],
    rows: impl IntoIterator<Item = Vec<String>>,
    right: impl IntoIterator<Item = usize>,
) -> String {
    let line = |cells: &[String]| {
        let cells: Vec<String> = cells.iter().map(|c| md_escape(c)).collect();
        format!("| {} |", cells.join(" | "))
    };
    let right: Vec<usize> = right.into_iter().collect();
    let rule: Vec<&str> = (0..headers.len())
        .map(|i| if right.contains(&i) { "--:" } else { "---" })
        .collect();
    let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
    let mut lines = vec![line(&headers), format!("|{}|", rule.join("|"))];
    lines.extend(rows.into_iter().map(|cells| line(&cells)));
    lines.join("\n")
}
