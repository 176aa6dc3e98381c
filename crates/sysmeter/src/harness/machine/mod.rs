//! Machine state beside an experiment: was the machine the same at the end as at the start,
//! and did anything else use the measuring CPU meanwhile?
//!
//! The probe ([`sysmeter_sys::probe`]) gives the effective core clock (dependent multiply
//! chain), the ALU throughput (independent adds) and the null-syscall cost; a [`Watch`] takes
//! it with the kernel's counters at the start of an experiment, and at the end produces the
//! [`MachineState`](crate::model::MachineState) stored in the result (`ExperimentResult.machine`), whose `stable` flag
//! and one-line `reason` come from the pure [`judge()`].
//!
//! One job per file: [`sample`] (probe → [`ProbeSample`]), [`procfs`] (pure parsers of
//! `/proc/stat`, `/proc/thread-self/status` and `schedstat`), [`counters`] (reading them and
//! the differences over an interval), [`mod@judge`] (thresholds and the stability verdict),
//! [`state`] (the serialised record), [`watch`] (start/finish around an experiment).
//!
//! **Timed interval** of a [`Watch`]: from just after the start probe and counter read to
//! just before the end counter read and probe; the probes themselves (≈ 0.2 ms each) are
//! outside it. Depends on `sysmeter-sys` (the probe), `serde` and `thiserror`; not on
//! `model`, `stats` or the experiments.

pub mod cache;
pub mod counters;
pub mod judge;
pub mod procfs;
pub mod sample;
pub mod state;
pub mod watch;

pub use counters::{Beside, Counters};
pub use judge::{Limits, Verdict, judge, judge_series};
pub use sample::{CYCLES_PER_MUL, ProbeSample};
pub use state::{assemble, end_of, start_of};
pub use watch::Watch;

/// Why the machine state could not be read.
#[derive(Debug, thiserror::Error)]
pub enum MachineError {
    /// A /proc file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A /proc file lacked what the parser looks for.
    #[error("{path} has no {what}; this kernel's format is not the one sysmeter knows")]
    Format {
        /// The file.
        path: String,
        /// What was missing.
        what: String,
    },
}

#[cfg(test)]
mod tests;
