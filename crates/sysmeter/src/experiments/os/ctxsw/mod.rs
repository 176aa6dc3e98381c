//! `os.ctxsw`: context switch cost between processes and between threads on one CPU, the
//! futex and sched_yield hand-offs, and the round trip between two CPUs. The forked echo
//! process is the shared [`crate::experiments::peer`]; the thread peers are in `peers`.
//! Depends on the harness, `model` and `stats`; on no other group.

mod peers;

use std::os::fd::AsRawFd;

use sysmeter_sys::{sched, syscall};

use crate::experiments::peer::pipe_echo_process;
use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::HostInfo;
use peers::{EchoThread, FutexPeer, YieldPeer};

/// The experiment.
pub struct OsCtxsw;

const PIPE: &str = "pipe write+read 1 B, no switch";
/// Same-CPU process round trip over pipes.
pub const PROC_RTT: &str = "process round trip, same CPU (pipes)";
const PROC_SW: &str = "process context switch";
const THREAD_RTT: &str = "thread round trip, same CPU (pipes)";
const THREAD_SW: &str = "thread context switch";
const FUTEX: &str = "thread hand-off, same CPU (futex)";
const YIELD: &str = "sched_yield hand-off, same CPU";
const CROSS: &str = "process round trip, cross CPU (pipes)";

impl Experiment for OsCtxsw {
    fn page(&self) -> &'static str {
        include_str!("../ctxsw.md")
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let mut out = Measured::default();
        let pipe = pipe_cost(ctx)?;
        let pipe_ns = pipe.summary.median;
        out.metrics.push(pipe);
        let cpu = ctx.cpu;
        let mut buf = [0u8; 1];
        let (ends, child) = pipe_echo_process(1, cpu)?;
        let rtt = ctx.try_measure(Spec::new(PROC_RTT).note("raw"), |n| {
            (0..n).try_for_each(|_| ends.round_trip(&mut buf))
        })?;
        drop((ends, child));
        let sw = ctx.derive(PROC_SW, &rtt, "derived: (rtt - 2 x pipe) / 2", |s| {
            (s - 2.0 * pipe_ns) / 2.0
        })?;
        out.metrics.extend([rtt, sw]);
        let peer = EchoThread::start(1, cpu)?;
        let ends = peer
            .ends()
            .ok_or_else(|| ExperimentError::Failed("echo thread has no pipes".into()))?;
        let rtt = ctx.try_measure(Spec::new(THREAD_RTT).note("raw"), |n| {
            (0..n).try_for_each(|_| ends.round_trip(&mut buf))
        })?;
        drop(peer);
        let sw = ctx.derive(THREAD_SW, &rtt, "derived: (rtt - 2 x pipe) / 2", |s| {
            (s - 2.0 * pipe_ns) / 2.0
        })?;
        out.metrics.extend([rtt, sw]);
        handoffs(ctx, &mut out)?;
        cross_cpu(ctx, &mut out)?;
        Ok(out)
    }

    fn metric_findings(&self, host: &HostInfo, out: &mut Measured) {
        findings(out, host.virtualization.as_deref());
    }
}

fn pipe_cost(ctx: &mut Ctx<'_>) -> Result<crate::model::Metric, ExperimentError> {
    let (r, w) = std::io::pipe().map_err(|e| ExperimentError::io("create a pipe", e))?;
    let (rfd, wfd) = (r.as_raw_fd(), w.as_raw_fd());
    let mut buf = [0u8; 1];
    ctx.try_measure(Spec::new(PIPE), |n| {
        for _ in 0..n {
            if syscall::write(wfd, b"x") != 1 || syscall::read(rfd, &mut buf) != 1 {
                return Err(ExperimentError::Failed("pipe write/read failed".into()));
            }
        }
        Ok(())
    })
}

fn handoffs(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let cpu = ctx.cpu;
    let peer = FutexPeer::start(cpu)?;
    // One round trip is two hand-offs: report per hand-off.
    let m = ctx.measure(Spec::new(FUTEX).ops(2).note("wake+wait+switch"), |n| {
        (0..n).for_each(|_| peer.round_trip())
    })?;
    drop(peer);
    out.metrics.push(m);
    let peer = YieldPeer::start(cpu)?;
    let before = peer.yields();
    let mut mine = 0u64;
    // Each of our yields lets the peer run until it yields back: two hand-offs.
    let m = ctx.measure(Spec::new(YIELD).ops(2).note("yield+switch"), |n| {
        for _ in 0..n {
            sched::yield_now();
        }
        mine += n;
    })?;
    let theirs = peer.yields() - before;
    drop(peer);
    out.metrics.push(m);
    let share = theirs as f64 / mine.max(1) as f64;
    out.find(
        "yield_handoff_share",
        format!(
            "The yield partner ran {theirs} times for our {mine} yields ({:.0}%): {}",
            share * 100.0,
            if share > 0.8 {
                "sched_yield handed the CPU over nearly every time."
            } else {
                "sched_yield often returned without switching, so the yield figure underestimates a switch."
            }
        ),
        Some(share),
    );
    Ok(())
}

fn cross_cpu(ctx: &mut Ctx<'_>, out: &mut Measured) -> Result<(), ExperimentError> {
    let Some(other) = ctx.other_cpu() else {
        out.find(
            "cross_cpu_skipped",
            "Cross-CPU round trip skipped: this process may use only one CPU (run with \
             taskset or a cpuset that allows two)."
                .into(),
            None,
        );
        return Ok(());
    };
    let (ends, child) = pipe_echo_process(1, Some(other))?;
    let mut buf = [0u8; 1];
    let m = ctx.try_measure(
        Spec::new(CROSS).note(&format!("peer on CPU {other}")),
        |n| (0..n).try_for_each(|_| ends.round_trip(&mut buf)),
    )?;
    drop((ends, child));
    out.metrics.push(m);
    Ok(())
}

fn findings(out: &mut Measured, hypervisor: Option<&str>) {
    if let (Some(p), Some(t)) = (out.median(PROC_SW), out.median(THREAD_SW)) {
        out.find(
            "process_vs_thread_switch",
            format!(
                "A process switch ({p:.0} ns) costs {} a thread switch ({t:.0} ns): threads \
                 share an address space, so no page-table (CR3/TTBR) switch or TLB refill.",
                crate::stats::ratio(p, t).map_or("n/a x".into(), |r| format!("{r:.2}x"))
            ),
            crate::stats::ratio(p, t),
        );
    }
    let (Some(same), Some(cross)) = (out.median(PROC_RTT), out.median(CROSS)) else {
        return;
    };
    let Some(r) = crate::stats::ratio(cross, same) else {
        return;
    };
    let why = if r > 1.5 {
        match hypervisor {
            Some(h) => format!(
                " Cross-CPU is much slower because each wake-up of the idle peer CPU is an \
                 inter-processor interrupt; under a hypervisor ({h}) that IPI and the halted \
                 vCPU's wake-up are VM exits handled by the host, costing microseconds, while \
                 a same-CPU wake-up is a local run-queue operation."
            ),
            None => " Cross-CPU is slower because each wake-up of the idle peer CPU needs an \
                 inter-processor interrupt and the idle CPU's exit from its sleep state, and the \
                 message's cache line moves between cores."
                .to_string(),
        }
    } else {
        " Both CPUs stay busy enough that a wake-up costs about the same on either.".to_string()
    };
    out.find(
        "cross_vs_same_cpu",
        format!("A round trip between two CPUs ({cross:.0} ns) costs {r:.2}x one on the same CPU ({same:.0} ns).{why}"),
        Some(r),
    );
}
