//! `mem.latency`: load-to-use latency by pointer chasing over working sets from 4 KiB to
//! well beyond the last-level cache, the detected hierarchy (plateaus L1, L2, L3, DRAM with
//! their latency and where each ends) cross-checked against sysfs, the TLB cost, and fixed
//! strides as in lmbench's stride × size table. Chains and sampling live in `points.rs`;
//! naming the detected levels and their findings in `findings.rs`; the TLB and stride
//! findings here.

mod findings;
mod plan;
mod points;
mod ranges;
mod refine;
mod side;

use sysmeter_sys::chase::ChaseBuffer;

use crate::experiments::estimate;
use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::model::{Estimate, HostInfo, Series, Unit, units};
use plan::{Plan, plan};
use points::{Chain, Order, Sampler};

/// The experiment.
pub struct MemLatency;

const KIB: u64 = 1024;
const MIB: u64 = 1024 * KIB;
/// Name of the TLB-friendly random series: the one the hierarchy is detected on.
pub const WINDOWED: &str = "random, 32-page windows";
/// Name of the random series that shows TLB misses.
const RANDOM: &str = "random, every load a new page";

impl Experiment for MemLatency {
    fn time_share(&self) -> f64 {
        // The largest experiment: its curve reaches DRAM, whose chains are the costliest.
        0.3
    }

    fn shares_caches_with_other_cpus(&self) -> bool {
        // The last-level cache's end is what the other CPUs' work moves.
        true
    }

    fn page(&self) -> &'static str {
        include_str!("../latency.md")
    }

    fn estimate(&self, host: &HostInfo, tsc_ghz: Option<f64>) -> Vec<Estimate> {
        estimates(host, tsc_ghz)
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let plan = plan(ctx);
        let mut buf = ChaseBuffer::new(plan.max as usize).map_err(|e| {
            let what = format!(
                "map {} for the pointer-chase buffer (a smaller --max-size needs less)",
                units::size(plan.max)
            );
            ExperimentError::io(&what, e)
        })?;
        let mut out = Measured::default();
        let s = plan.sampler;
        // The curve the hierarchy is read from: two passes in shuffled size order, half the
        // samples each, a probe before every take, then the fine stage (see `refine`).
        let halves = Sampler {
            samples: s.samples.div_ceil(2),
            ..s
        };
        let chain = |kind, name, sampler, probe| Chain {
            kind,
            name,
            line: plan.line,
            sampler,
            probe,
        };
        let w = refine::windowed(
            ctx,
            &mut buf,
            &plan,
            &chain(Order::Windowed, WINDOWED, halves, true),
        )?;
        out.series.push(w.series);
        side::series(ctx, &mut buf, &plan, &mut out)?;
        drop(buf);
        let detected = findings::Detected {
            found: &w.found,
            boundaries: &w.boundaries,
            fine_sizes: w.fine_sizes,
        };
        findings::levels(ctx.host, &detected, &w.metrics, plan.max, &mut out);
        findings::overhead(&plan.sampler, &mut out);
        plan.note(&mut out);
        tlb_and_strides(&mut out);
        Ok(out)
    }

    fn metric_findings(&self, _host: &HostInfo, out: &mut Measured) {
        findings::latency_findings(out);
    }
}

/// Typical load-to-use latencies of current cores, converted at the measured TSC rate.
fn estimates(host: &HostInfo, tsc_ghz: Option<f64>) -> Vec<Estimate> {
    let caches = findings::sysfs_caches(host);
    let line = host.caches.iter().find_map(|c| c.line_bytes).unwrap_or(64);
    let typical = [
        (
            1,
            4.0,
            "L1d load-to-use is 4-5 core cycles on current x86-64 and Arm cores",
        ),
        (2, 13.0, "private L2 hits take 12-14 core cycles"),
        (
            3,
            45.0,
            "L3 hits take 40-50 core cycles (more on large meshes)",
        ),
    ];
    let mut v: Vec<Estimate> = typical
        .iter()
        .filter(|(level, ..)| caches.iter().any(|c| c.0 == *level))
        .filter_map(|(level, cyc, why)| {
            let basis = format!(
                "{why}; one chain element per {line} B line (sysfs); TSC ticks stand in for \
                 core cycles, so a core running above the TSC rate is faster than this"
            );
            estimate::cycles(&format!("L{level} latency"), *cyc, tsc_ghz, &basis)
        })
        .collect();
    let speed = host
        .memory
        .speed_mts
        .map_or("speed not readable".to_string(), |s| format!("{s} MT/s"));
    v.push(Estimate {
        metric: "DRAM latency".into(),
        value: 90.0,
        unit: Unit::Ns,
        basis: format!(
            "DDR4/DDR5 row activation + CAS (~30 ns at the DIMM) plus the memory controller, \
             the on-chip fabric and the cache misses on the way: 80-100 ns idle load-to-use on \
             current servers; memory {speed}"
        ),
    });
    v
}

fn median_at(series: &Series, x: f64) -> Option<f64> {
    series
        .points
        .iter()
        .find(|p| p.x == x)
        .map(|p| p.summary.median)
}

/// TLB-miss cost (all-pages random vs windowed random) and what strides gain.
fn tlb_and_strides(out: &mut Measured) {
    let series = out.series.clone();
    let find = |name: &str| series.iter().find(|s| s.name == name);
    let Some(win) = find(WINDOWED) else {
        return;
    };
    if let Some(rnd) = find(RANDOM) {
        tlb(out, win, rnd);
    }
    let Some((x, w)) = win.points.last().map(|p| (p.x, p.summary.median)) else {
        return;
    };
    for stride in ["stride 64 B", "stride 4 KiB"] {
        let Some(v) = find(stride).and_then(|s| median_at(s, x)) else {
            continue;
        };
        let effect = if v < 0.9 * w {
            format!(
                "predictable addresses let the prefetchers hide {:.0}% of the latency",
                100.0 * (1.0 - v / w)
            )
        } else {
            "no faster than random: nothing is hidden at this size".to_string()
        };
        out.find(
            &format!("stride.{}", stride.replace(' ', "_")),
            format!(
                "At {}, {stride} chains in address order take {v:.1} ns per load vs {w:.1} ns \
                 random: {effect}.",
                units::size(x as u64),
            ),
            Some(v),
        );
    }
}

fn tlb(out: &mut Measured, win: &Series, rnd: &Series) {
    let common: Vec<(f64, f64, f64)> = rnd
        .points
        .iter()
        .filter_map(|p| median_at(win, p.x).map(|w| (p.x, p.summary.median, w)))
        .collect();
    if let Some(&(x, r, w)) = common.last() {
        let effect = if r > 1.05 * w {
            format!(
                "a TLB miss and page walk add about {:.1} ns per load (nested paging makes \
                 walks dearer in a VM)",
                r - w
            )
        } else {
            "no measurable TLB-miss cost at this size".to_string()
        };
        out.find(
            "tlb.miss_cost_ns",
            format!(
                "At {}, random loads each on a new 4 KiB page take {r:.1} ns vs {w:.1} ns \
                 inside 32-page windows: {effect}.",
                units::size(x as u64),
            ),
            Some(r - w),
        );
    }
    // The smallest size from which on every larger one pays over 10% for its TLB misses
    // (a single noisy point near the L1 edge must not count).
    let from = common
        .iter()
        .rposition(|c| c.1 <= 1.1 * c.2)
        .map_or(0, |i| i + 1);
    if let Some(&(x, r, w)) = common.get(from) {
        out.find(
            "tlb.first_visible_bytes",
            format!(
                "From {} on, TLB misses cost over 10% ({:.2}x there): about where a data \
                 TLB's reach with 4 KiB pages ends.",
                units::size(x as u64),
                r / w
            ),
            Some(x),
        );
    }
}
