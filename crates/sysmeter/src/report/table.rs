//! The one terminal table of the text renderers (a bench's metric and series tables, the
//! timeline, compare, the tables of the diagnoses): comfy-table's condensed UTF-8 style, the
//! columns that hold numbers aligned right; and the one Markdown (GFM) table of the Markdown
//! renderers (compare, locks), aligned the same way.
//!
//! `force_no_tty` keeps comfy-table from probing the terminal width or styling cells, so the
//! output depends only on what is rendered and the width the caller passes: a table held to
//! a width wraps the cells of its widest columns ([`render_within`]), a line of prose wraps
//! between words ([`wrap`]). Pure; depends on nothing of the crate.

use comfy_table::{
    CellAlignment, ColumnConstraint, ContentArrangement, Row, Table, Width,
    presets::UTF8_FULL_CONDENSED,
};

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
    render_within(headers, rows, right, None)
}

/// [`render`], no wider than `width` characters when one is given: comfy-table wraps the
/// cells that do not fit between words, and a column is never narrower than its longest
/// word up to [`MIN_WORD`] characters, so a number, a verdict or a short name stays whole.
pub(crate) fn render_within(
    headers: impl Into<Row>,
    rows: impl IntoIterator<Item = Vec<String>>,
    right: impl IntoIterator<Item = usize>,
    width: Option<usize>,
) -> String {
    let headers: Row = headers.into();
    let rows: Vec<Vec<String>> = rows.into_iter().collect();
    let mut table = styled(headers, right);
    if let Some(width) = width {
        table
            .set_content_arrangement(ContentArrangement::Dynamic)
            .set_width(u16::try_from(width).unwrap_or(u16::MAX));
        let words = longest_words(&table, &rows);
        for (column, longest) in table.column_iter_mut().zip(words) {
            // The boundary counts the cell padding, one space each side.
            let least = u16::try_from(longest.min(MIN_WORD) + 2).unwrap_or(u16::MAX);
            column.set_constraint(ColumnConstraint::LowerBoundary(Width::Fixed(least)));
        }
    }
    for row in rows {
        table.add_row(row);
    }
    table.to_string()
}

/// The longest word a column keeps whole when the table is held to a width.
const MIN_WORD: usize = 14;

/// The length of the longest word of each column of `table`'s header and `rows`.
fn longest_words(table: &Table, rows: &[Vec<String>]) -> Vec<usize> {
    let header = table
        .header()
        .map(|h| h.cell_iter().map(|c| c.content()).collect::<Vec<String>>());
    let columns = header.as_ref().map_or(0, Vec::len);
    let mut longest = vec![0; columns];
    for cells in header.iter().chain(rows) {
        for (i, cell) in cells.iter().enumerate().take(longest.len()) {
            let word = cell.split_whitespace().map(|w| w.chars().count()).max();
            longest[i] = longest[i].max(word.unwrap_or(0));
        }
    }
    longest
}

/// How many columns `text` takes on a terminal: its characters, without the escape sequences
/// of bold text (`\x1b[1m`, `\x1b[0m`).
fn shown_len(text: &str) -> usize {
    let mut n = 0;
    let mut in_escape = false;
    for c in text.chars() {
        match (in_escape, c) {
            (false, '\x1b') => in_escape = true,
            (true, 'm') => in_escape = false,
            (false, _) => n += 1,
            (true, _) => {}
        }
    }
    n
}

/// `line` broken between words into lines of at most `width` columns, the lines after the
/// first indented by two spaces; a word longer than a line stays whole on its own line.
pub(crate) fn wrap(line: &str, width: usize) -> Vec<String> {
    if shown_len(line) <= width {
        return vec![line.to_string()];
    }
    let rest = line.trim_start_matches(' ');
    let indent = &line[..line.len() - rest.len()];
    let mut lines: Vec<String> = Vec::new();
    let mut current = indent.to_string();
    for word in rest.split(' ') {
        let start = current.trim().is_empty();
        if !start && shown_len(&current) + 1 + shown_len(word) > width {
            lines.push(std::mem::replace(&mut current, format!("{indent}  ")));
        } else if !start {
            current.push(' ');
        }
        current.push_str(word);
    }
    lines.push(current);
    lines
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_and_tables_fit_a_width() {
        let line = format!("only in A: {}", vec!["fs.write · write"; 40].join("; "));
        let lines = wrap(&line, 60);
        assert!(lines.len() > 5 && lines.iter().all(|l| l.chars().count() <= 60));
        assert_eq!(
            lines.join(" ").split_whitespace().count(),
            line.split_whitespace().count()
        );
        assert_eq!(wrap("\x1b[1mshort\x1b[0m", 5), ["\x1b[1mshort\x1b[0m"]);
        let rows = vec![vec!["a".to_string(), "x ".repeat(300)]];
        let table = render_within(vec!["name", "note"], rows, [], Some(80));
        assert!(table.lines().all(|l| l.chars().count() <= 80), "{table}");
    }
}
