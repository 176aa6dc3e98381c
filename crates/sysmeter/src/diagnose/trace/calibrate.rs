//! What tracing costs, measured before each trace with the backend and CPU placement the
//! trace will use: a forked copy of sysmeter makes N `getppid` calls (the cheapest call that
//! must enter the kernel), timing its own loop, once untraced and once traced.
//!
//! - *added per call* = traced loop time / N − untraced loop time / N: how much slower every
//!   traced call makes the program (the slowdown the user sees);
//! - *inside the interval* = median traced `getppid` duration as the backend measures it −
//!   the untraced per-call cost: the part of the tracing cost that falls between the two
//!   timestamps of a call. It is subtracted from every call's duration (clamped at 0). The
//!   untraced cost includes kernel entry and exit, which the tracepoints do not time, so for
//!   that backend the subtraction is slightly too small (conservative).
//!
//! One pair of the one A/B loop (`observe::overhead::paired`) in its per-call mode: each
//! block a child's loop timed in chunks by the wall clock (`Overhead::per_call`), not by CPU
//! time: a ptrace stop costs the program wall time while it is stopped, off CPU, and the
//! subtracted part must be in the unit of the durations traced (see `observe::overhead`).

use std::io;

use sysmeter_sys::ptrace::{CalibrationChild, CalibrationMode, Options, spawn_calibration};
use sysmeter_sys::seccomp::SeccompFilter;

use super::classes::Selection;
use super::names::{self, Arch};
use super::ptrace::Session;
use super::summary::Collector;
use super::tracepoint::{self, Ids, OpenSpec, Rings};
use crate::diagnose::observe::pump::Pump;
use crate::diagnose::observe::witness::Witness;

/// Pairs of untraced and traced loops (one: a traced block is a new child, dear to set up).
const PAIRS: usize = 1;
/// Chunks each calibration loop is timed in (the median chunk is used).
const CHUNKS: usize = 20;
/// Calls per chunk in the untraced and tracepoint-traced loops.
const CALLS_CHEAP: u64 = 1_000;
/// Calls per chunk in the ptrace-traced loop (each stops the tracee).
const CALLS_PTRACE: u64 = 100;

pub use crate::diagnose::observe::overhead::Overhead;
use crate::diagnose::observe::overhead::{Chunks, paired};

fn getppid_key() -> (u32, u64) {
    let arch = Arch::native();
    let nr = names::number(arch, "getppid").unwrap_or(0);
    (arch.audit(), u64::from(nr))
}

fn getppid_only() -> Option<Selection> {
    Selection::parse(&["getppid".to_string()]).ok()
}

/// The chunk times of `child`'s loop of `calls` calls a chunk, once it has ended.
fn chunks(child: &CalibrationChild, calls: u64) -> io::Result<Chunks> {
    Ok(Chunks {
        times_ns: child.chunk_times_ns()?,
        calls,
    })
}

/// The untraced getppid loop (A), in a child on `cpu`.
fn untraced(cpu: Option<usize>) -> io::Result<Chunks> {
    let mut child = spawn_calibration(CHUNKS, CALLS_CHEAP, CalibrationMode::Untraced, cpu)?;
    child.go()?;
    let untraced = chunks(&child, CALLS_CHEAP)?;
    child.wait()?;
    Ok(untraced)
}

/// The overhead from the pairs of loops and the traced calls the backend timed.
fn overhead(pairs: &[(Chunks, Chunks)], c: &Collector) -> io::Result<Overhead> {
    let traced_calls = pairs.iter().map(|(_, b)| b.total_calls()).sum();
    Overhead::per_call(pairs, median_interval(c, traced_calls)?)
        .ok_or_else(|| io::Error::other("a calibration loop timed no chunk"))
}

/// The median traced getppid of `calls` made; none recorded means the tracepoint is hidden
/// from perf (a BPF program on it returns 0), which the error says with what sits there.
fn median_interval(c: &Collector, calls: u64) -> io::Result<f64> {
    let stats = c.call(getppid_key()).ok_or_else(|| {
        let witness = Witness {
            event: "raw_syscalls:sys_enter",
            seen: 0,
            seen_what: "system calls",
            lost: 0,
            counted: calls,
            counted_what: "getppid calls of the calibration loop",
            margin: 2,
        };
        io::Error::other(match witness.judge() {
            Some(blinded) => blinded.text(super::record::BLINDED_FIX),
            None => "the traced calibration loop recorded no getppid call".into(),
        })
    })?;
    crate::stats::median(&stats.samples).map_err(io::Error::other)
}

/// The ptrace backend's overhead, with the seccomp filter when `seccomp`, tracee and
/// tracer placed as for the trace (`cpu` for the tracee; the caller pinned itself).
pub(super) fn ptrace_overhead(seccomp: bool, cpu: Option<usize>) -> io::Result<Overhead> {
    let filter = if seccomp {
        let nr = getppid_key().1 as u32;
        SeccompFilter::trace_only(Arch::native().audit(), &[nr])
    } else {
        None
    };
    let traced = |collector: &mut Collector| {
        let options = Options {
            follow_forks: false,
            seccomp,
            exit_kill: true,
        };
        let mode = CalibrationMode::Ptrace {
            options,
            seccomp: filter.as_ref(),
        };
        let mut child = spawn_calibration(CHUNKS, CALLS_PTRACE, mode, cpu)?;
        let mut session = Session::launched(child.pid(), seccomp, false, false);
        child.go()?;
        session.start()?;
        session.run(collector, &mut |_| false)?;
        child.reaped();
        chunks(&child, CALLS_PTRACE)
    };
    let mut collector = Collector::new(getppid_only(), 0.0);
    let pairs = paired(PAIRS, &mut collector, |_| untraced(cpu), traced)?;
    overhead(&pairs, &collector)
}

/// What the tracepoint backend's traced blocks leave: the last block's events, and the
/// calls recorded in all.
struct TracepointBlocks {
    rings: Option<Rings>,
    collector: Collector,
}

/// One tracepoint-traced loop (B): its events opened on the child on every CPU in `cpus`,
/// its calls pumped into `b.collector`, its events kept in `b.rings`.
fn tracepoint_traced(ids: Ids, cpus: &[usize], b: &mut TracepointBlocks) -> io::Result<Chunks> {
    let mut child = spawn_calibration(CHUNKS, CALLS_CHEAP, CalibrationMode::Untraced, None)?;
    let nr = getppid_key().1 as u32;
    let spec = OpenSpec {
        targets: &[child.pid()],
        cpus,
        follow_forks: false,
        enable_on_exec: false,
        filter: tracepoint::filter_for(&[nr]),
        paths: &[],
    };
    let mut rings = Rings::open(ids, &spec)?;
    rings.enable()?;
    child.go()?;
    let traced = chunks(&child, CALLS_CHEAP)?;
    child.wait()?;
    let collector = std::mem::replace(&mut b.collector, Collector::new(getppid_only(), 0.0));
    let mut calls = rings.calls(collector);
    rings.pump(&mut calls, true);
    b.collector = calls.collector;
    b.rings = Some(rings);
    Ok(traced)
}

/// The tracepoint backend's overhead (events on every CPU in `cpus`), and the calibration's
/// events: keep them open until the trace's own events are open, so the kernel does not
/// unregister and register the tracepoints in between (each costs tens of ms here).
pub(super) fn tracepoint_overhead(ids: Ids, cpus: &[usize]) -> io::Result<(Overhead, Rings)> {
    let mut blocks = TracepointBlocks {
        rings: None,
        collector: Collector::new(getppid_only(), 0.0),
    };
    let pairs = paired(
        PAIRS,
        &mut blocks,
        |_| untraced(None),
        |b| tracepoint_traced(ids, cpus, b),
    )?;
    let rings = blocks
        .rings
        .ok_or_else(|| io::Error::other("the calibration ran no traced loop"))?;
    Ok((overhead(&pairs, &blocks.collector)?, rings))
}
