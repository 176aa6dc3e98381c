//! `mem.pagefault`: what a page fault costs — the first touch of anonymous memory (a minor
//! fault: allocate and zero a page, map it) with 4 KiB pages and with transparent huge pages,
//! and the fault on a file mapping whose pages were evicted from the page cache (a major
//! fault: read from storage), plus the same file fault when the page is cached. Fault counts
//! from `getrusage` confirm one fault per page; `mincore` confirms each eviction. The
//! file-backed part lives in `file`.

mod file;

use std::time::Instant;

use sysmeter_sys::memory::{self, Advice, FaultCounts, Region};

use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::model::{HostInfo, Metric, Unit};
use crate::stats;

/// The experiment.
pub struct MemPagefault;

const ANON_4K: &str = "minor fault, 4 KiB page (THP off)";
const ANON_HUGE: &str = "minor fault, 2 MiB huge page (THP)";
const ANON_HUGE_PER_4K: &str = "minor fault with THP, per 4 KiB";

impl Experiment for MemPagefault {
    fn page(&self) -> &'static str {
        include_str!("../pagefault.md")
    }

    // No estimate: a fault is kernel software (entry, page allocation, zeroing or I/O,
    // page-table update), not a quantity the machine description predicts. The findings
    // compare the huge-page fault with the zeroing time at the measured bandwidth.

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let mut out = Measured::default();
        anon_small(ctx, &mut out)?;
        anon_huge(ctx, &mut out)?;
        file::faults(ctx, &mut out)?;
        huge_fault_vs_zeroing(ctx, &mut out);
        Ok(out)
    }

    fn metric_findings(&self, host: &HostInfo, out: &mut Measured) {
        findings(host, out);
    }
}

/// Faults seen over the timed intervals of one metric, and the units (pages) touched.
#[derive(Default)]
struct Tally {
    faults: FaultCounts,
    units: u64,
}

impl Tally {
    fn add(&mut self, f: FaultCounts, units: usize) {
        self.faults.minor += f.minor;
        self.faults.major += f.major;
        self.units += units as u64;
    }
    fn per_unit(&self) -> (f64, f64) {
        let u = self.units.max(1) as f64;
        (self.faults.minor as f64 / u, self.faults.major as f64 / u)
    }
}

fn faults() -> Result<FaultCounts, ExperimentError> {
    memory::thread_faults().map_err(|e| ExperimentError::io("getrusage(RUSAGE_THREAD)", e))
}

/// Time `f` (which touches `units` pages), returning ns per unit after subtracting the timer
/// pair, and add the faults it took to `tally`.
fn timed(
    ctx: &Ctx<'_>,
    tally: &mut Tally,
    units: usize,
    f: impl FnOnce(),
) -> Result<f64, ExperimentError> {
    let f0 = faults()?;
    let t0 = Instant::now();
    f();
    let ns = t0.elapsed().as_nanos() as f64;
    tally.add(faults()?.since(f0), units);
    Ok(((ns - ctx.calib.timer_overhead_ns) / units.max(1) as f64).max(0.0))
}

/// The harness's stopping rules for a workload that needs untimed set-up before every
/// sample: `one` returns a sample, or `None` to discard the attempt (e.g. eviction failed).
/// One warm-up sample is discarded. Gives up (returns what it has) after `max_discards`.
fn sample(
    ctx: &Ctx<'_>,
    max_discards: usize,
    mut one: impl FnMut() -> Result<Option<f64>, ExperimentError>,
) -> Result<(Vec<f64>, usize), ExperimentError> {
    let p = ctx.profile;
    let _ = one()?;
    let (mut samples, mut discarded) = (Vec::new(), 0usize);
    let start = Instant::now();
    loop {
        if sysmeter_sys::signal::interrupted() {
            return Err(ExperimentError::Interrupted);
        }
        match one()? {
            Some(s) => samples.push(s),
            None => discarded += 1,
        }
        let (n, spent) = (samples.len(), start.elapsed());
        if discarded > max_discards || n >= p.max_samples || (spent >= p.budget * 4 && n >= 3) {
            break;
        }
        if n < p.min_samples {
            continue;
        }
        if spent >= p.budget {
            break;
        }
        if n.is_multiple_of(8)
            && let Ok((lo, hi)) = stats::median_ci_distribution_free(&samples)
        {
            let med = stats::median(&samples).unwrap_or(0.0);
            if stats::relative_ci_width(lo, hi, med) <= p.target_ci {
                break;
            }
        }
    }
    Ok((samples, discarded))
}

fn io(what: &str) -> impl Fn(std::io::Error) -> ExperimentError + '_ {
    move |e| ExperimentError::io(what, e)
}

fn metric(
    ctx: &Ctx<'_>,
    name: &str,
    samples: Vec<f64>,
    tally: &Tally,
    unit: &str,
) -> Result<Metric, ExperimentError> {
    let (minor, major) = tally.per_unit();
    let mut m = ctx.metric(name, Unit::Ns, samples)?;
    m.ops_per_sample = tally.units / m.summary.n.max(1) as u64;
    m.note = Some(format!(
        "per {unit}; {minor:.2} minor + {major:.2} major faults per {unit}"
    ));
    Ok(m)
}

fn anon_small(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let page = memory::page_size();
    let pages = if ctx.profile.name == "quick" {
        256
    } else {
        1024
    };
    let mut tally = Tally::default();
    let (samples, _) = sample(ctx, 0, || {
        let mut r = Region::anonymous(pages * page).map_err(io("mmap anonymous memory"))?;
        r.advise(Advice::NoHugePage)
            .map_err(io("madvise(MADV_NOHUGEPAGE)"))?;
        let ns = timed(ctx, &mut tally, pages, || {
            r.touch(page);
        })?;
        Ok(Some(ns))
    })?;
    out.metrics
        .push(metric(ctx, ANON_4K, samples, &tally, "4 KiB page")?);
    let (minor, _) = tally.per_unit();
    out.find(
        "faults_per_page.anon_4k",
        format!(
            "First touch of anonymous memory: {minor:.3} minor faults per 4 KiB page \
             (getrusage over {} pages), so the time per page is the cost of one fault.",
            tally.units
        ),
        Some(minor),
    );
    Ok(())
}

fn anon_huge(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let mode = ctx.host.thp.clone().unwrap_or_else(|| "unknown".into());
    let huge = memory::thp_size().filter(|_| mode == "always" || mode == "madvise");
    let Some(huge) = huge else {
        out.find(
            "thp_skipped",
            format!(
                "Huge-page faults not measured: transparent huge pages are '{mode}' (need \
                 'always' or 'madvise' in /sys/kernel/mm/transparent_hugepage/enabled)."
            ),
            None,
        );
        return Ok(());
    };
    let count = if ctx.profile.name == "quick" { 4 } else { 8 };
    let mut tally = Tally::default();
    let (samples, _) = sample(ctx, 0, || {
        let mut r =
            Region::anonymous_aligned(count * huge, huge).map_err(io("mmap anonymous memory"))?;
        r.advise(Advice::HugePage)
            .map_err(io("madvise(MADV_HUGEPAGE)"))?;
        Ok(Some(timed(ctx, &mut tally, count, || {
            r.touch(huge);
        })?))
    })?;
    let (minor, _) = tally.per_unit();
    // One fault per huge page proves THP backed the range; 512 would mean 4 KiB pages.
    if minor > 1.5 {
        out.find(
            "thp_not_used",
            format!(
                "MADV_HUGEPAGE did not give huge pages: {minor:.0} faults per 2 MiB (THP \
                 '{mode}'; memory too fragmented or khugepaged/defrag settings), so no \
                 huge-page figure is reported."
            ),
            Some(minor),
        );
        return Ok(());
    }
    let per_huge = metric(ctx, ANON_HUGE, samples, &tally, "2 MiB page")?;
    let factor = (huge / memory::page_size()) as f64;
    let per_4k = ctx.derive(
        ANON_HUGE_PER_4K,
        &per_huge,
        "derived: huge-page fault / 512",
        |s| s / factor,
    )?;
    out.metrics.extend([per_huge, per_4k]);
    out.find(
        "faults_per_page.anon_huge",
        format!("With MADV_HUGEPAGE: {minor:.3} faults per 2 MiB huge page (THP '{mode}')."),
        Some(minor),
    );
    Ok(())
}

/// The findings of the anonymous faults' metrics (`Experiment::metric_findings`).
fn findings(host: &HostInfo, out: &mut Measured) {
    let small = out.median(ANON_4K);
    if let (Some(s), Some(h)) = (small, out.median(ANON_HUGE_PER_4K))
        && let Some(r) = stats::ratio(s, h)
    {
        out.find(
            "thp_effect",
            format!(
                "A 2 MiB huge-page fault costs {:.1} µs, {h:.0} ns per 4 KiB: {r:.1}x less per \
                 byte than 4 KiB faults ({s:.0} ns each): one fault and one page-table entry \
                 replace 512, though the whole 2 MiB must still be cleared.",
                h * 512.0 / 1000.0
            ),
            Some(r),
        );
    }
    if let (Some(h), Some(s)) = (&host.virtualization, small) {
        out.find(
            "minor_fault_in_vm",
            format!(
                "Under a hypervisor ({h}) a guest's first touch of guest-physical memory that \
                 the host has not backed yet also faults in the host (a nested-paging violation), \
                 so this {s:.0} ns minor fault can vary with what the guest touched before; \
                 compare with a bare-metal run before reading it as the kernel's cost."
            ),
            Some(s),
        );
    }
}

/// The huge-page fault against clearing 2 MiB at mem.bandwidth's DRAM rates, when that
/// ran earlier: it reads the other experiment through `ctx`, so it is drawn in `run`, from
/// this round's fault.
fn huge_fault_vs_zeroing(ctx: &Ctx<'_>, out: &mut Measured) {
    if let Some(h) = out.median(ANON_HUGE)
        && let (Some(w), Some(nt)) = (previous_dram(ctx, "write"), previous_dram(ctx, "nt-write"))
    {
        // The kernel clears a huge page with ordinary or string stores: between the
        // ordinary-store (read-for-ownership) and the streaming-store bandwidths.
        let us = |bw: f64| (2 << 20) as f64 / bw * 1e6;
        out.find(
            "huge_fault_vs_zeroing",
            format!(
                "Writing 2 MiB at the DRAM bandwidths mem.bandwidth measured takes {:.0} µs \
                 with ordinary stores ({:.1} GB/s) and {:.0} µs with streaming stores ({:.1} \
                 GB/s); the huge-page fault takes {:.0} µs, so {}.",
                us(w),
                w / 1e9,
                us(nt),
                nt / 1e9,
                h / 1000.0,
                if h / 1000.0 <= 1.5 * us(w) {
                    "clearing the page is most of its cost"
                } else {
                    "clearing the page explains only part of its cost"
                }
            ),
            Some(h / 1000.0 / us(w)),
        );
    }
}

/// Single-thread DRAM bandwidth of `kernel` from mem.bandwidth, if it ran earlier in this
/// run.
fn previous_dram(ctx: &Ctx<'_>, kernel: &str) -> Option<f64> {
    let r = ctx.previous.iter().find(|r| r.id == "mem.bandwidth")?;
    let prefix = format!("{kernel}, DRAM");
    r.metrics
        .iter()
        .find(|m| m.name.starts_with(&prefix) && m.name.ends_with(", 1 thread"))
        .map(Metric::figure)
        .filter(|&b| b > 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::pooled::{figure, finding, pooled, round};

    #[test]
    fn the_anonymous_fault_findings_quote_the_pooled_figures() {
        let rows = [
            (ANON_4K, Unit::Ns, 600.0),
            (ANON_HUGE_PER_4K, Unit::Ns, 100.0),
        ];
        // Only the 4 KiB fault moves between the rounds.
        let mut rounds = [round(&rows, 1.0), round(&rows[..1], 2.0)];
        rounds[1].push(rounds[0][1].clone());
        let host = HostInfo {
            virtualization: Some("kvm".into()),
            ..HostInfo::default()
        };
        let r = pooled(&MemPagefault, &host, &rounds);
        let (small, huge) = (figure(&r, ANON_4K), figure(&r, ANON_HUGE_PER_4K));
        assert_eq!(small, 900.0, "pooled, not the last round's 1200 ns");
        let (text, value) = finding(&r, "thp_effect");
        assert_eq!(value, stats::ratio(small, huge));
        assert!(text.contains("(900 ns each)"), "{text}");
        let (text, value) = finding(&r, "minor_fault_in_vm");
        assert_eq!(value, Some(small));
        assert!(text.contains("this 900 ns minor fault"), "{text}");
    }
}
