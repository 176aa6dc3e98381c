//! The backend choice of the diagnoses that can aggregate in the kernel (`locks`,
//! `profile --off-cpu`): [`Backend`] (BPF programs or perf rings), described once in the
//! floor's backend shape, and [`choose`], which takes `bpf` where [`available`] says
//! it may run. Depends on `observe::backend` and `observe::bpf`; never on a diagnosis.

use super::backend::{self, Chosen, Request, Unavailable};
use super::bpf::available;

backend::backends! {
    /// Where a diagnosis with an in-kernel backend (`locks`, `profile --off-cpu`) measures
    /// (`--backend`; `auto` takes the in-kernel one where it is permitted, [`available`]).
    #[derive(Default)]
    pub enum Backend {
        /// BPF programs aggregate in the kernel; user space reads maps at the end.
        Bpf = "bpf", "In-kernel aggregation (BPF programs, maps read at the end)";
        /// Every event crosses a perf ring to user space.
        #[default]
        Perf = "perf", "perf ring buffers (every switch and waking read by sysmeter)";
    }
    auto "The in-kernel backend where it is permitted, else perf":
        Bpf because "in-kernel aggregation: permitted, kernel BTF present", else Perf;
}

/// The backend of a diagnosis with an in-kernel backend for `request`, checked with
/// [`available`]; `Err` when `bpf` was asked for and cannot run here.
pub fn choose(request: Request<Backend>) -> Result<Chosen<Backend, ()>, Unavailable> {
    backend::choose(request, available)
}
