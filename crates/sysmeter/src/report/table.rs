//! The one terminal table of the text renderers (a bench's metric and series tables, the
//! timeline, compare, the tables of the diagnoses): comfy-table's condensed UTF-8 style, the
//! columns that hold numbers aligned right.
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
