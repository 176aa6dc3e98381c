//! `cpu.timer`: the cost of reading every clock a program can use, and which of them are
//! answered without entering the kernel.

use std::hint::black_box;

use sysmeter_sys::clock::{self, ClockId};

use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::{HostInfo, Metric};

/// The experiment.
pub struct CpuTimer;

/// Name of the forced-system-call reference metric.
const SYSCALL_METRIC: &str = "clock_gettime(CLOCK_MONOTONIC) forced syscall";

impl Experiment for CpuTimer {
    fn page(&self) -> &'static str {
        include_str!("timer.md")
    }

    // No estimate: no credible model predicts vDSO and hypervisor costs; the finding compares
    // them with the forced system call measured in the same run instead.

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let mut out = Measured::default();
        if let Some(name) = clock::counter_name() {
            let m = ctx.measure(Spec::new(name).note("CPU counter"), |n| {
                for _ in 0..n {
                    black_box(clock::counter());
                }
            })?;
            out.metrics.push(m);
        }
        if clock::has_ordered_counter() {
            let name = if cfg!(target_arch = "x86_64") {
                "rdtscp"
            } else {
                "isb; cntvct_el0"
            };
            let m = ctx.measure(Spec::new(name).note("CPU counter, ordered"), |n| {
                for _ in 0..n {
                    black_box(clock::counter_ordered());
                }
            })?;
            out.metrics.push(m);
        }
        for c in ClockId::ALL {
            let m = ctx.measure(Spec::new(&format!("clock_gettime({})", c.name())), |n| {
                for _ in 0..n {
                    black_box(clock::clock_gettime_ns(black_box(c)));
                }
            })?;
            out.metrics.push(m);
        }
        out.metrics
            .push(ctx.measure(Spec::new("gettimeofday"), |n| {
                for _ in 0..n {
                    black_box(clock::gettimeofday_us());
                }
            })?);
        out.metrics.push(ctx.measure(Spec::new("time()"), |n| {
            for _ in 0..n {
                black_box(clock::time_s());
            }
        })?);
        let sys = ctx.measure(Spec::new(SYSCALL_METRIC).note(SYSCALL), |n| {
            for _ in 0..n {
                black_box(clock::clock_gettime_syscall_ns(ClockId::Monotonic));
            }
        })?;
        out.metrics.push(sys);
        if let Some(sys_ns) = out.median(SYSCALL_METRIC) {
            classify(&mut out.metrics, sys_ns);
        }
        other_findings(&mut out, ctx.calib.tsc_ghz);
        Ok(out)
    }

    fn metric_findings(&self, _host: &HostInfo, out: &mut Measured) {
        findings(out);
    }
}

/// The findings that quote metrics: which clocks enter the kernel (by the notes `classify`
/// gave them) against the forced syscall's figure, and the monotonic clock against the
/// counter.
fn findings(out: &mut Measured) {
    let Some(sys_ns) = out.median(SYSCALL_METRIC) else {
        return;
    };
    let noted = |note: &str| -> Vec<String> {
        (out.metrics.iter())
            .filter(|m| m.name != SYSCALL_METRIC && m.note.as_deref() == Some(note))
            .map(|m| m.name.clone())
            .collect()
    };
    let (user, kernel) = (noted(VDSO), noted(SYSCALL));
    out.find(
        "clocks_without_syscall",
        format!(
            "Served without a system call: {}. Entering the kernel: {}. (A read counts as a \
             system call when it costs at least half of clock_gettime forced through the \
             syscall instruction, {sys_ns:.1} ns.)",
            list_or_none(&user),
            list_or_none(&kernel)
        ),
        Some(user.len() as f64),
    );
    let mono = out.median("clock_gettime(CLOCK_MONOTONIC)");
    let counter = clock::counter_name().and_then(|n| out.median(n));
    if let (Some(mono), Some(counter)) = (mono, counter)
        && let Some(r) = crate::stats::ratio(mono, counter)
    {
        out.find(
            "monotonic_vs_counter",
            format!("clock_gettime(CLOCK_MONOTONIC) costs {r:.1}x a raw counter read."),
            Some(r),
        );
    }
}

/// The findings of this run that quote no metric: the clocks' resolutions and the TSC rate.
fn other_findings(out: &mut Measured, tsc_ghz: Option<f64>) {
    let resolutions: Vec<String> = ClockId::ALL
        .iter()
        .map(|c| format!("{} {}", c.name(), fmt_res(clock::clock_getres_ns(*c))))
        .collect();
    out.find(
        "clock_resolution",
        format!("clock_getres: {}.", resolutions.join(", ")),
        None,
    );
    if let Some(ghz) = tsc_ghz {
        out.find(
            "cycles_are_tsc_ticks",
            format!(
                "Cycle figures are TSC ticks at {ghz:.3} GHz, measured against \
                 CLOCK_MONOTONIC; they equal core cycles only while the core runs at the TSC \
                 rate (no frequency scaling or turbo)."
            ),
            Some(ghz),
        );
    }
}

/// Note of a clock read served in user space.
const VDSO: &str = "no system call (vDSO)";
/// Note of a clock read that enters the kernel.
const SYSCALL: &str = "system call";

/// Note each clock read (not yet noted, other than the forced syscall itself) as served in
/// user space when it costs under half of `sys_ns`, else as a system call.
fn classify(metrics: &mut [Metric], sys_ns: f64) {
    for m in metrics
        .iter_mut()
        .filter(|m| m.name != SYSCALL_METRIC && m.note.is_none())
    {
        let user = m.summary.median < sys_ns / 2.0;
        m.note = Some(if user { VDSO } else { SYSCALL }.into());
    }
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

fn fmt_res(ns: i64) -> String {
    if ns >= 1_000_000 {
        format!("{} ms", ns as f64 / 1e6)
    } else {
        format!("{ns} ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::pooled::{figure, finding, pooled, round};
    use crate::model::Unit;

    #[test]
    fn the_clock_findings_quote_the_pooled_figures() {
        let mono = "clock_gettime(CLOCK_MONOTONIC)";
        let counter = clock::counter_name().unwrap_or("counter");
        let rows = [
            (counter, Unit::Ns, 8.0),
            (mono, Unit::Ns, 20.0),
            ("clock_gettime(CLOCK_BOOTTIME)", Unit::Ns, 400.0),
            (SYSCALL_METRIC, Unit::Ns, 300.0),
        ];
        let mut rounds = [round(&rows, 1.0), round(&rows, 1.5)];
        for metrics in &mut rounds {
            let sys = metrics[3].summary.median;
            metrics[0].note = Some("CPU counter".into());
            metrics[3].note = Some(SYSCALL.into());
            classify(metrics, sys);
        }
        let r = pooled(&CpuTimer, &HostInfo::default(), &rounds);
        let sys = figure(&r, SYSCALL_METRIC);
        assert!(
            (sys - 375.0).abs() < 1e-9,
            "pooled, not the last round's 450: {sys}"
        );
        let (text, users) = finding(&r, "clocks_without_syscall");
        assert!(text.contains(&format!("{sys:.1} ns")), "{text}");
        assert!(
            text.contains("Entering the kernel: clock_gettime(CLOCK_BOOTTIME)."),
            "{text}"
        );
        assert_eq!(users, Some(1.0), "{text}");
        assert!(text.contains(&format!("system call: {mono}.")), "{text}");
        if clock::counter_name().is_some() {
            let ratio = figure(&r, mono) / figure(&r, counter);
            assert_eq!(finding(&r, "monotonic_vs_counter").1, Some(ratio));
        }
    }
}
