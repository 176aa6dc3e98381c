//! `mem.bandwidth`: read, write, copy and non-temporal write bandwidth in bytes per second,
//! over working sets inside L1, L2, L3 and DRAM, on one thread and on one pinned thread per
//! CPU. Sizes come from the sysfs cache description; the kernels are the assembly loops of
//! `sysmeter_sys::membw`; threads and buffers live in `team`, conclusions in `findings`.

mod findings;
mod sizing;
mod team;

use std::hint::black_box;

use sysmeter_sys::{membw, sched};

use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::host::cpulist::parse_cpu_list;
use crate::model::CacheInfo;
use crate::model::{About, Estimate, HostInfo, Metric, Unit};
use sizing::{Plan, Sizing, plan};
use team::{CHUNK, Lane, Team};

/// The experiment.
pub struct MemBandwidth;

const KIB: usize = 1024;
const MIB: usize = 1024 * 1024;

/// One bandwidth kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Kernel {
    Read = 0,
    Write = 1,
    Copy = 2,
    NtWrite = 3,
}

impl Kernel {
    const ALL: [Kernel; 4] = [Kernel::Read, Kernel::Write, Kernel::Copy, Kernel::NtWrite];

    fn name(self) -> &'static str {
        match self {
            Kernel::Read => "read",
            Kernel::Write => "write",
            Kernel::Copy => "copy",
            Kernel::NtWrite => "nt-write",
        }
    }

    fn from_u8(v: u8) -> Kernel {
        match v {
            0 => Kernel::Read,
            1 => Kernel::Write,
            2 => Kernel::Copy,
            _ => Kernel::NtWrite,
        }
    }
}

/// A working-set size chosen to sit inside one level of the memory hierarchy.
#[derive(Debug, Clone, PartialEq)]
struct Level {
    /// `L1`, `L2`, `L3` or `DRAM`.
    label: &'static str,
    /// Working set of one thread alone, bytes.
    size: usize,
    /// Whether the level is shared between CPUs (then N threads split `size`).
    shared: bool,
}

impl Level {
    /// Working set of each of `threads` threads: a private cache is per core, so each thread
    /// gets all of it; a shared cache (L3) is split so the total stays inside it. DRAM is
    /// never split: each thread streams a whole DRAM set, past the caches whether the
    /// last-level cache is one for every CPU (the sum is larger still) or one per group of
    /// CPUs (each set is). Split, two threads streamed 9 MiB each where one thread's DRAM set
    /// was 18 MiB, and read 123 GB/s, 2.5× one thread (a 2-vCPU EPYC guest, 7 Dec 2026).
    fn per_thread(&self, threads: usize) -> usize {
        if self.shared && threads > 1 && self.label != "DRAM" {
            round(self.size / threads)
        } else {
            self.size
        }
    }

    fn metric(&self, kernel: Kernel, threads: usize) -> String {
        let size = size_label(self.per_thread(threads));
        match threads {
            1 => format!("{}, {} ({size}), 1 thread", kernel.name(), self.label),
            n => format!(
                "{}, {} ({size} each), {n} threads",
                kernel.name(),
                self.label
            ),
        }
    }
}

/// Sizes rounded so the chunked walk divides them: whole chunks above a chunk, whole pages
/// below.
fn round(size: usize) -> usize {
    if size >= CHUNK {
        size / CHUNK * CHUNK
    } else {
        (size / (4 * KIB)).max(1) * 4 * KIB
    }
}

fn size_label(bytes: usize) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{} KiB", bytes / KIB)
    }
}

fn data_cache(host: &HostInfo, level: u32) -> Option<&CacheInfo> {
    host.caches
        .iter()
        .find(|c| c.level == level && c.kind != "Instruction" && c.size_bytes > 0)
}

fn is_shared(c: &CacheInfo) -> bool {
    parse_cpu_list(&c.shared_cpus).is_some_and(|v| v.len() > 1)
}

/// Share of the profile's per-metric budget each bandwidth metric may spend at most.
const BUDGET_SHARE: f64 = 0.4;
/// Metrics of a full run: 4 kernels × 4 levels × 1 and N threads.
const METRICS: f64 = 32.0;

/// Share of the profile's per-metric budget each metric may spend: [`BUDGET_SHARE`], or less
/// when the metrics would not fit what the DRAM buffers leave of the experiment's time
/// budget (a metric takes up to about twice its budget on a busy host; `--quick`'s three
/// rounds leave each 0.7 s).
fn metric_share(ctx: &Ctx<'_>) -> f64 {
    let left = ctx.time_budget().as_secs_f64() * (1.0 - sizing::DRAM_SHARE);
    let per_metric = ctx.profile.budget.as_secs_f64() * 2.0 * METRICS;
    (left / per_metric).min(BUDGET_SHARE)
}

impl Experiment for MemBandwidth {
    fn time_share(&self) -> f64 {
        0.2
    }

    fn page(&self) -> &'static str {
        include_str!("../bandwidth.md")
    }

    fn about(&self) -> About {
        // The vector instructions the kernels use are known only where it runs.
        About::from_page(self.page()).fill("isa", membw::vector_isa())
    }

    fn estimate(&self, host: &HostInfo, tsc_ghz: Option<f64>) -> Vec<Estimate> {
        findings::estimates(
            &plan(host, None, &Sizing::unbounded()).levels,
            host,
            tsc_ghz,
        )
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let kernels: Vec<Kernel> = Kernel::ALL
            .into_iter()
            .filter(|&k| k != Kernel::NtWrite || membw::nt_write_supported())
            .collect();
        let sizing = Sizing {
            budget: ctx.time_budget(),
            dram_from: sizing::dram_from(ctx.previous, super::latency::WINDOWED),
            threads: ctx.cpus.len(),
        };
        let plan: Plan = plan(ctx.host, ctx.params.max_size, &sizing);
        let mut out = Measured::default();
        for (key, text) in &plan.notes {
            out.find(key, text.clone(), None);
        }
        for level in &plan.levels {
            // The levels are the points of this long series: probe between them.
            ctx.probe_between_points();
            let mut lane = Lane::new(level.size).map_err(|e| {
                ExperimentError::io(
                    &format!("map {} for {}", size_label(level.size), level.label),
                    e,
                )
            })?;
            for &k in &kernels {
                let bytes = lane.bytes_per_iter(k);
                let m = measure(ctx, &level.metric(k, 1), bytes, |n| {
                    black_box(lane.run(k, n));
                })?;
                out.metrics.push(m);
            }
        }
        let threads = multi_thread(ctx, &plan.levels, &kernels, &mut out)?;
        findings::add(&mut out, &plan.levels, threads, ctx);
        Ok(out)
    }
}

/// The same with one pinned thread per CPU; returns the thread count (1 when not run).
fn multi_thread(
    ctx: &mut Ctx<'_>,
    levels: &[Level],
    kernels: &[Kernel],
    out: &mut Measured,
) -> Result<usize, ExperimentError> {
    let cpus = ctx.cpus.to_vec();
    if cpus.len() < 2 {
        out.find(
            "multi_thread_skipped",
            "Multi-thread bandwidth skipped: this process may use only one CPU (widen the \
             affinity or cpuset to measure scaling)."
                .into(),
            None,
        );
        return Ok(1);
    }
    // Unpinned measuring thread (pinning failed earlier): pin it to the first CPU for the
    // team and restore the full set afterwards.
    let own = ctx.cpu.or_else(|| {
        let c = cpus[0];
        sched::pin_current_thread(c).ok().map(|_| c)
    });
    let result = team_metrics(ctx, levels, kernels, &cpus, own, out);
    if ctx.cpu.is_none() {
        let _ = sched::set_current_thread_cpus(&cpus);
    }
    result
}

fn team_metrics(
    ctx: &mut Ctx<'_>,
    levels: &[Level],
    kernels: &[Kernel],
    cpus: &[usize],
    own: Option<usize>,
    out: &mut Measured,
) -> Result<usize, ExperimentError> {
    let threads = cpus.iter().filter(|&&c| Some(c) != own).count() + 1;
    for level in levels {
        ctx.probe_between_points();
        let mut team = match Team::start(level.per_thread(threads), cpus, own) {
            Ok(t) => t,
            Err(e) => {
                out.find(
                    "multi_thread_skipped",
                    format!("Multi-thread bandwidth skipped: could not start the threads: {e}."),
                    None,
                );
                return Ok(1);
            }
        };
        for &k in kernels {
            let bytes = team.bytes_per_iter(k);
            let name = level.metric(k, team.threads());
            let m = measure(ctx, &name, bytes, |n| {
                black_box(team.run(k, n));
            })?;
            out.metrics.push(m);
        }
    }
    Ok(threads)
}

/// Time `work(iters)` through the harness as ns per byte, then turn every sample into
/// bytes per second.
fn measure(
    ctx: &mut Ctx<'_>,
    name: &str,
    bytes_per_iter: u64,
    work: impl FnMut(u64),
) -> Result<Metric, ExperimentError> {
    // 32 metrics: at most 0.4 of the budget each keeps the experiment near 3 s; a level's
    // figure rarely reaches the 2% CI on a shared host anyway.
    let spec = Spec::new(name)
        .ops(bytes_per_iter)
        .own_loop()
        .budget_share(metric_share(ctx));
    let per_byte = ctx.measure(spec, work)?;
    let samples = per_byte
        .samples
        .iter()
        .filter(|&&s| s > 0.0)
        .map(|s| 1e9 / s)
        .collect();
    let mut m = ctx.metric(name, Unit::BytesPerSec, samples)?;
    m.ops_per_sample = per_byte.ops_per_sample;
    m.note = Some(format!("best {:.1} GB/s", m.summary.max / 1e9));
    Ok(m)
}

#[cfg(test)]
mod tests;
