//! The backend choice of the diagnoses that can aggregate in the kernel (`locks`,
//! `profile --off-cpu`): [`Backend`] (BPF programs or perf rings), described once in the
//! floor's backend shape, and [`choose`], which takes `bpf` where [`available`] says
//! it may run. Depends on `observe::backend` and `observe::bpf`; never on a diagnosis.

use super::backend::{self, Chosen, Request, Unavailable};
use super::bpf::available;

/// Where a diagnosis with an in-kernel backend (`locks`, `profile --off-cpu`) measures
/// (`--backend`; `auto` takes the in-kernel one where it is permitted, [`available`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// BPF programs aggregate in the kernel; user space reads maps at the end.
    Bpf,
    /// Every event crosses a perf ring to user space.
    #[default]
    Perf,
}

impl backend::Backend for Backend {
    const PREFERRED: Backend = Backend::Bpf;
    const FALLBACK: Backend = Backend::Perf;
    const CHOICES: &'static [Request<Backend>] = &[
        Request::Auto,
        Request::Only(Backend::Bpf),
        Request::Only(Backend::Perf),
    ];
    const AUTO_HELP: &'static str = "The in-kernel backend where it is permitted, else perf";
    const PREFERRED_BECAUSE: &'static str = "in-kernel aggregation: permitted, kernel BTF present";

    fn name(self) -> &'static str {
        match self {
            Backend::Bpf => "bpf",
            Backend::Perf => "perf",
        }
    }

    fn help(self) -> &'static str {
        match self {
            Backend::Bpf => "In-kernel aggregation (BPF programs, maps read at the end)",
            Backend::Perf => "perf ring buffers (every switch and waking read by sysmeter)",
        }
    }
}

/// The backend of a diagnosis with an in-kernel backend for `request`, checked with
/// [`available`]; `Err` when `bpf` was asked for and cannot run here.
pub fn choose(request: Request<Backend>) -> Result<Chosen<Backend, ()>, Unavailable> {
    backend::choose(request, available)
}
