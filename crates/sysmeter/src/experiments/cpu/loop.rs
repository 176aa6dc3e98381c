//! `cpu.loop`: the cost of one iteration of an empty loop that the compiler may not remove.

use std::hint::black_box;

use sysmeter_sys::kernels;

use crate::experiments::estimate;
use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::{Estimate, HostInfo};

/// The experiment.
pub struct CpuLoop;

const ASM_LOOP: &str = "empty loop (dec; jnz)";
const HARNESS_LOOP: &str = "harness loop (black_box counter)";

impl Experiment for CpuLoop {
    fn page(&self) -> &'static str {
        include_str!("loop.md")
    }

    fn estimate(&self, _host: &HostInfo, tsc_ghz: Option<f64>) -> Vec<Estimate> {
        estimate::cycles(
            ASM_LOOP,
            1.0,
            tsc_ghz,
            "a macro-fused decrement-and-branch retires once per cycle (one taken branch \
             per cycle on current cores)",
        )
        .into_iter()
        .collect()
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let mut out = Measured::default();
        let asm = ctx.measure(Spec::new(ASM_LOOP).own_loop(), |n| {
            kernels::tight_loop(black_box(n))
        })?;
        out.metrics.push(asm);
        let harness = ctx.measure(Spec::new(HARNESS_LOOP).own_loop(), |n| {
            crate::harness::reference_loop(black_box(n))
        })?;
        out.metrics.push(harness);
        let calibrated = ctx.calib.loop_overhead_ns;
        if let Some(m) = out.median(HARNESS_LOOP) {
            out.find(
                "harness_loop_overhead",
                format!(
                    "The harness loop costs {m:.2} ns per iteration here (calibrated at run \
                     start: {calibrated:.2} ns); each metric subtracts the turn timed beside \
                     its own samples, since it moves with the machine's state."
                ),
                Some(m),
            );
        }
        Ok(out)
    }
}
