//! A `trace` run (system calls): read like `calls` — the `strace -c`-style table
//! (`calls/table.rs`, with the errors by errno) and the top calls as the HTML answer.
//!
//! Pure. Depends on `model` and the `calls` view.

use super::TableKind;
use super::calls::{self, table};

/// The view of `trace`.
pub(super) const TRACE: TableKind = TableKind {
    text: table::text,
    markdown: table::markdown,
    answer: calls::answer,
};
