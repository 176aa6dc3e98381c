//! Renderers: turn a finished [`RunRecord`] into the text a user reads (terminal table,
//! markdown) or a program parses (JSON, CSV).
//!
//! Pure: renderers never query the database and never measure; they see only the record
//! they are given, so every format is snapshot-tested from `model::fixture::sample_run`. Depends
//! on `model` and `stats` (noise rules) only. What differs per run kind (bench, run, trace,
//! calls, profile, locks, scale) lives in `kinds`, one view per kind behind one trait, picked
//! in one place (`kinds::view`). `host_text` renders a [`HostInfo`] on its own for `sysmeter
//! host`.
//!
//! [`HostInfo`]: crate::model::HostInfo

pub mod charts;
pub mod compare_text;
mod concise;
mod csv;
pub mod diff;
/// Exports of a stored run for the viewers people already use (`sysmeter export --format
/// …`; docs/export.md, docs/export-viewers.md): one file per format,
/// `report/export/<format>.rs`, each with `encode(run) -> bytes` or an `ExportError` sentence
/// with the fix: `pprof` (go tool pprof, Pyroscope, Grafana) and `speedscope` over the stacks
/// and weights the run record stores (`stacks_of`), `callgrind` (KCachegrind,
/// callgrind_annotate) from `calls --functions`, `chrome_trace` (Perfetto, chrome://tracing)
/// from `run`'s /proc timeline, `firefox` (the Firefox Profiler's processed format) from
/// `profile`. Pure like every renderer: only the record it is given (and the format crates).
pub mod export;
pub mod fleet;
pub mod format;
pub mod glance;
pub mod host_text;
pub mod html;
mod json;
mod kinds;
pub mod live;
mod markdown;
pub mod openmetrics;
mod spark;
mod table;
mod text;
pub use text::STYLES;
mod timeline;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_glance;
#[cfg(test)]
mod tests_intervals;
#[cfg(test)]
mod tests_single;
#[cfg(test)]
pub(crate) mod truth;

use crate::model::RunRecord;

/// Output format of a run report (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Format {
    /// Terminal tables (the default).
    #[default]
    Text,
    /// The full record as pretty JSON (documented in docs/json-schema.md).
    Json,
    /// One row per metric and per series point.
    Csv,
    /// GitHub-flavoured markdown.
    Markdown,
}

/// Why a report could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Serialising the run record to JSON failed.
    #[error("could not serialise run {run} to JSON: {source}")]
    Json {
        /// Run id.
        run: String,
        /// Underlying error.
        source: serde_json::Error,
    },
    /// Writing a CSV row failed.
    #[error("could not write run {run} as CSV: {source}")]
    Csv {
        /// Run id.
        run: String,
        /// Underlying error.
        source: ::csv::Error,
    },
    /// The CSV writer could not be flushed into its buffer.
    #[error("could not finish the CSV output of run {run}: {detail}")]
    CsvFinish {
        /// Run id.
        run: String,
        /// What went wrong.
        detail: String,
    },
}

/// Renders `run` in `format` in the layout of its kind (`kinds::view`, the one place that
/// decides how a bench, run, trace, calls, profile, locks or scale run reads). `color` allows
/// ANSI bold headers in [`Format::Text`]; when it is `false` the output contains no escape
/// sequence at all. Other formats ignore it. A bench run reads concisely in text (see
/// [`render_view`]).
pub fn render(run: &RunRecord, format: Format, color: bool) -> Result<String, ReportError> {
    render_view(run, format, color, false)
}

/// [`render`], with `full` choosing the complete tables of a bench run in [`Format::Text`]
/// (`--full`) over the concise default; both end with "this machine at a glance". JSON, CSV
/// and Markdown always hold everything, whatever `full` says.
pub fn render_view(
    run: &RunRecord,
    format: Format,
    color: bool,
    full: bool,
) -> Result<String, ReportError> {
    let kind = kinds::view(run.kind);
    match format {
        // A kind without a layout of its own (or a profile without one: an empty profile)
        // reads as the tables.
        Format::Text => Ok(kind
            .text(run, color, full)
            .unwrap_or_else(|| text::render(run, kind, color))),
        Format::Json => json::render(run),
        Format::Csv => csv::render(run),
        Format::Markdown => Ok(markdown::render(run, kind)),
    }
}

/// "This machine at a glance" alone (`show --summary`): the terminal block, or one Markdown
/// table; `None` for the formats it has no form in (JSON and CSV hold the whole record).
pub fn summary(run: &RunRecord, format: Format) -> Option<String> {
    let g = glance::glance(run);
    match format {
        Format::Text => Some(glance::text(&g).join("\n") + "\n"),
        Format::Markdown => Some(glance::markdown(&g)),
        Format::Json | Format::Csv => None,
    }
}
