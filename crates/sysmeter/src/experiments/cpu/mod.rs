//! The `cpu` group: the processor and the measurement itself. One file per experiment id:
//! `timer.rs`, `loop.rs` (declared `r#loop`, because `loop` is a keyword; the file keeps the
//! id's name), `call.rs`, `ops.rs`. Depends on the harness, `model`, `stats`,
//! `sysmeter-sys` and [`crate::experiments::estimate`]; on no other group. `core_clock.rs`
//! is `cpu.ops`' clock finding (from the machine-state probe's multiply chain), and
//! `plausible.rs` its check of the latency rows against that clock.

pub(super) mod call;
mod core_clock;
mod r#loop;
mod ops;
mod plausible;
mod timer;

use super::Group;

/// The group's registry entry.
pub static GROUP: Group = Group {
    name: "cpu",
    description: "the processor and the measurement itself: timers, loops, calls, instructions",
    experiments: &[
        &timer::CpuTimer,
        &r#loop::CpuLoop,
        &call::CpuCall,
        &ops::CpuOps,
    ],
};
