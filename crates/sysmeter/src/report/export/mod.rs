/// Why a run cannot be exported in a format: one sentence with the fix.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The format does not fit this kind of run.
    #[error(
        "{format} export fits {fits} runs, and this is a {kind} run; export one of those, or use --format json"
    )]
    WrongKind {
        /// The format asked for, as `--format` names it.
        format: &'static str,
        /// The kind of the run.
        kind: String,
        /// The kinds it fits, as their commands.
        fits: &'static str,
    },
    /// The run lacks what the format needs (e.g. stored without its stacks).
    #[error("{0}")]
    Missing(String),
}

// The encoders this file names are documented on `pub mod export` in report/mod.rs (this file
// starts with the shared error type, so the branches that add encoders merge trivially).

pub mod callgrind;
pub mod chrome_trace;
pub mod firefox;
pub mod pprof;
pub mod speedscope;
mod stacks;
mod stacks_of;
