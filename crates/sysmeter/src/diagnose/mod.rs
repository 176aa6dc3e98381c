//! Program diagnosis: eight ways of looking at a program, each producing a
//! [`crate::model::RunRecord`] so results are stored and rendered like bench runs:
//!
//! - `run`: the time split (user, system, waiting), the /proc timeline and the verdict
//!   (CPU-, kernel- or I/O-bound; `run/classify` decides it);
//! - `trace`: the system-call summary (ptrace or kernel tracepoints);
//! - `calls`: library calls counted and timed through uprobes;
//! - `profile`: the sampling CPU profile (flat profile, call graph, flame graph);
//! - `offcpu` (`profile --off-cpu`, `--both`): where and why threads block, with their wakers;
//! - `locks`: contended futexes per lock and call site;
//! - `alloc`: a heap profile (allocations, leaks, peak, temporaries per call stack);
//! - `scale`: how the run time grows with the input size;
//! - `live`: a running program watched as it runs (the window a local web view reads).
//!
//! `price` turns counted calls into time with a stored bench run. Everything the diagnoses
//! share — the target and its launch, tracefs, perf rings and their records, uprobes, ELF
//! symbols, address spaces, symbolisation and stack scanning, stack-sampled sessions with
//! their flat profiles and call graphs, the end of a session — lives in [`observe`], the
//! floor they stand on: a diagnosis may import `observe` and nothing of another diagnosis
//! (checked by `layers::tests`).

pub mod alloc;
pub mod calls;
pub mod live;
pub mod locks;
pub mod observe;
pub mod offcpu;
pub mod price;
pub mod profile;
pub mod run;
pub mod scale;
pub mod trace;
