//! `cpu.call`: the cost of a procedure call with 0…7 integer arguments, an indirect call
//! through a function pointer, and a dynamic-dispatch (virtual) call.

use std::hint::black_box;

use sysmeter_sys::kernels::{self, Op, OpImpl};

use crate::experiments::estimate;
use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::{Estimate, HostInfo};

/// The experiment.
pub struct CpuCall;

/// Name of the 0-argument direct call metric (also used by `os.syscall`'s ratio).
pub const CALL0: &str = "call, 0 args";

impl Experiment for CpuCall {
    fn page(&self) -> &'static str {
        include_str!("call.md")
    }

    fn estimate(&self, _host: &HostInfo, tsc_ghz: Option<f64>) -> Vec<Estimate> {
        estimate::cycles(
            CALL0,
            2.0,
            tsc_ghz,
            "a predicted call and return (return-stack buffer hit) plus one ALU op",
        )
        .into_iter()
        .collect()
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let mut out = Measured::default();
        macro_rules! call {
            ($name:expr, |$i:ident| $call:expr) => {
                out.metrics.push(ctx.measure(Spec::new($name), |n| {
                    for $i in 0..n {
                        black_box($call);
                    }
                })?)
            };
        }
        call!(CALL0, |_i| kernels::call0());
        call!("call, 1 arg", |i| kernels::call1(i));
        call!("call, 2 args", |i| kernels::call2(i, i));
        call!("call, 3 args", |i| kernels::call3(i, i, i));
        call!("call, 4 args", |i| kernels::call4(i, i, i, i));
        call!("call, 5 args", |i| kernels::call5(i, i, i, i, i));
        call!("call, 6 args", |i| kernels::call6(i, i, i, i, i, i));
        call!("call, 7 args", |i| kernels::call7(i, i, i, i, i, i, i));
        let fp: fn(u64) -> u64 = black_box(kernels::call1);
        call!("indirect call (fn pointer)", |i| fp(i));
        let obj: &dyn Op = black_box(&OpImpl);
        call!("virtual call (dyn trait)", |i| obj.op(i));
        Ok(out)
    }

    fn metric_findings(&self, _host: &HostInfo, out: &mut Measured) {
        findings(out);
    }
}

fn findings(out: &mut Measured) {
    let (Some(c0), Some(c7)) = (out.median(CALL0), out.median("call, 7 args")) else {
        return;
    };
    let per_arg = (c7 - c0) / 7.0;
    out.find(
        "cost_per_argument",
        format!(
            "Each extra integer argument adds about {per_arg:.2} ns (0 args {c0:.2} ns, 7 args \
             {c7:.2} ns): arguments travel in registers, so a call's cost barely depends on \
             their number."
        ),
        Some(per_arg),
    );
    if let (Some(ind), Some(c1)) = (
        out.median("indirect call (fn pointer)"),
        out.median("call, 1 arg"),
    ) {
        out.find(
            "indirect_vs_direct",
            format!(
                "An indirect call costs {:.2} ns vs {c1:.2} ns direct (same argument): a \
                 well-predicted indirect branch is nearly free.",
                ind
            ),
            crate::stats::ratio(ind, c1),
        );
    }
    if let (Some(v), Some(c1)) = (
        out.median("virtual call (dyn trait)"),
        out.median("call, 1 arg"),
    ) {
        out.find(
            "virtual_vs_direct",
            format!("A virtual (dyn trait) call costs {v:.2} ns vs {c1:.2} ns direct."),
            crate::stats::ratio(v, c1),
        );
    }
}
