//! `cpu.ops`: latency of dependent arithmetic, the branch-mispredict penalty, and the cost of
//! everyday primitives (atomic increment, mutex, malloc/free, strlen, memcpy).

use std::ffi::CStr;
use std::hint::black_box;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use sysmeter_sys::kernels::{self, CHAIN_LEN, Chain};
use sysmeter_sys::syscall;

use super::{core_clock, plausible};
use crate::experiments::estimate;
use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::{Estimate, HostInfo};

/// The experiment.
pub struct CpuOps;

const CHAINS: [(Chain, &str, f64); 7] = [
    (Chain::IntAdd, "int add (dependent)", 1.0),
    (Chain::IntMul, "int mul (dependent)", 3.0),
    (Chain::IntDiv, "int div 64-bit (dependent)", 14.0),
    (Chain::FloatAdd, "float add (dependent)", 3.0),
    (Chain::FloatMul, "float mul (dependent)", 3.0),
    (Chain::FloatDiv, "float div (dependent)", 13.0),
    (Chain::FloatSqrt, "float sqrt (dependent)", 15.0),
];
const BRANCH_BYTES: usize = 256 * 1024;
const RANDOM: &str = "branch, random (50% taken)";
const PREDICTABLE: &str = "branch, predictable";
/// 64 bytes before the terminating NUL.
const STRING64: &CStr = c"sysmeter measures what every operation costs on this machine!!!!";

impl Experiment for CpuOps {
    fn page(&self) -> &'static str {
        include_str!("ops.md")
    }

    fn estimate(&self, _host: &HostInfo, tsc_ghz: Option<f64>) -> Vec<Estimate> {
        CHAINS
            .iter()
            .filter_map(|(_, name, cyc)| {
                estimate::cycles(
                    name,
                    *cyc,
                    tsc_ghz,
                    "typical x86-64 latency from published instruction tables",
                )
            })
            .collect()
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let mut out = Measured::default();
        // The core_clock finding's probes bracket the multiply row: the clock it ran at.
        let mut around_mul = Vec::new();
        for (chain, name, _) in CHAINS {
            let mul = chain == Chain::IntMul;
            if mul {
                around_mul.extend(core_clock::probe_clocks());
            }
            let spec = Spec::new(name).ops(CHAIN_LEN).own_loop();
            out.metrics.push(ctx.measure(spec, |n| {
                black_box(kernels::run_chain(chain, black_box(n)));
            })?);
            if mul {
                around_mul.extend(core_clock::probe_clocks());
            }
        }
        branches(ctx, &mut out)?;
        primitives(ctx, &mut out)?;
        // The clock comes from this round's probes, not from a metric.
        if let Some(ghz) = core_clock::find(&mut out, &around_mul, ctx.calib.tsc_ghz) {
            plausible::mark(&mut out.metrics, ghz);
        }
        Ok(out)
    }

    fn metric_findings(&self, _host: &HostInfo, out: &mut Measured) {
        findings(out);
    }
}

fn branches(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let random: Vec<u8> = (0..BRANCH_BYTES).map(|_| rng.u8(..) & 1).collect();
    let steady = vec![1u8; BRANCH_BYTES];
    for (name, data) in [(RANDOM, &random), (PREDICTABLE, &steady)] {
        let spec = Spec::new(name).ops(BRANCH_BYTES as u64).own_loop();
        out.metrics.push(ctx.measure(spec, |n| {
            for _ in 0..n {
                black_box(kernels::branchy_count(black_box(data)));
            }
        })?);
    }
    Ok(())
}

fn primitives(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let counter = AtomicU64::new(0);
    out.metrics.push(
        ctx.measure(Spec::new("atomic increment (uncontended)"), |n| {
            for _ in 0..n {
                black_box(&counter).fetch_add(1, Ordering::SeqCst);
            }
        })?,
    );
    let mutex = Mutex::new(0u64);
    out.metrics.push(
        ctx.measure(Spec::new("mutex lock+unlock (uncontended)"), |n| {
            for _ in 0..n {
                if let Ok(mut g) = black_box(&mutex).lock() {
                    *g += 1;
                }
            }
        })?,
    );
    out.metrics
        .push(ctx.measure(Spec::new("malloc+free 64 B"), |n| {
            for _ in 0..n {
                syscall::malloc_free(black_box(64));
            }
        })?);
    out.metrics.push(ctx.measure(Spec::new("strlen 64 B"), |n| {
        for _ in 0..n {
            black_box(syscall::strlen(black_box(STRING64)));
        }
    })?);
    let src = STRING64.to_bytes_with_nul().to_vec();
    let mut dst = vec![0u8; src.len()];
    out.metrics.push(ctx.measure(Spec::new("memcpy 64 B"), |n| {
        for _ in 0..n {
            syscall::memcpy(black_box(&mut dst), black_box(&src));
        }
    })?);
    Ok(())
}

/// The findings that quote the branch and divide rows.
fn findings(out: &mut Measured) {
    if let (Some(r), Some(p)) = (out.median(RANDOM), out.median(PREDICTABLE)) {
        let penalty = 2.0 * (r - p);
        out.find(
            "branch_mispredict_penalty",
            format!(
                "A mispredicted branch costs about {penalty:.2} ns (random {r:.2} ns vs \
                 predictable {p:.2} ns per branch, half of the random ones mispredicted)."
            ),
            Some(penalty),
        );
    }
    if let (Some(d), Some(a)) = (
        out.median("int div 64-bit (dependent)"),
        out.median("int add (dependent)"),
    ) && let Some(r) = crate::stats::ratio(d, a)
    {
        out.find(
            "div_vs_add",
            format!("A dependent 64-bit integer divide takes {r:.0}x as long as an add."),
            Some(r),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::pooled::{figure, finding, pooled, round};
    use crate::model::Unit;

    #[test]
    fn the_branch_and_divide_findings_quote_the_pooled_figures() {
        let rows = [
            (RANDOM, Unit::Ns, 2.0),
            (PREDICTABLE, Unit::Ns, 0.3),
            ("int div 64-bit (dependent)", Unit::Ns, 7.0),
            ("int add (dependent)", Unit::Ns, 0.25),
        ];
        let rounds = [round(&rows, 1.0), round(&rows, 1.4)];
        let r = pooled(&CpuOps, &HostInfo::default(), &rounds);
        let (rnd, pred) = (figure(&r, RANDOM), figure(&r, PREDICTABLE));
        assert!(
            (rnd - 2.4).abs() < 1e-9,
            "pooled, not the last round's 2.8: {rnd}"
        );
        let (text, value) = finding(&r, "branch_mispredict_penalty");
        assert_eq!(value, Some(2.0 * (rnd - pred)));
        assert!(text.contains(&format!("random {rnd:.2} ns")), "{text}");
        let ratio = figure(&r, "int div 64-bit (dependent)") / figure(&r, "int add (dependent)");
        assert_eq!(finding(&r, "div_vs_add").1, Some(ratio));
    }
}
