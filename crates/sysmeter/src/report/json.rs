//! JSON output: the run record exactly as the model serialises it (the documented contract
//! of docs/json-schema.md, versioned by the record's `schema` field).
//!
//! Pure: no formatting of numbers here; raw ns and bytes go out unchanged.

use super::ReportError;
use crate::model::RunRecord;

/// Pretty-printed JSON of the whole record.
pub(super) fn render(run: &RunRecord) -> Result<String, ReportError> {
    serde_json::to_string_pretty(run).map_err(|source| ReportError::Json {
        run: run.id.clone(),
        source,
    })
}
