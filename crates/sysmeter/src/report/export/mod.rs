/// Why a run cannot be exported in a format: one sentence with the fix.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The format does not fit this kind of run.
    #[error(
        "{format} export fits {fits} runs, and this is a {kind} run; export one of those, or use --format json"
    )]
    WrongKind {
        format: &'static str,
        kind: String,
        fits: &'static str,
    },
    /// The run lacks what the format needs (e.g. stored without its stacks).
    #[error("{0}")]
    Missing(String),
}

pub mod pprof;
pub mod speedscope;
mod stacks;
mod stacks_of;
