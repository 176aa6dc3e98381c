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
//! Timed in chunks by the wall clock (`Overhead::from_chunks`), not in CPU-timed pairs
//! (`observe::overhead::paired`): a ptrace stop costs the program wall time while it is
//! stopped, off CPU, and the subtracted part must be in the unit of the durations traced
//! (see `observe::overhead`).

use std::io;

use sysmeter_sys::ptrace::{CalibrationMode, Options, spawn_calibration};
use sysmeter_sys::seccomp::SeccompFilter;

use super::classes::Selection;
use super::names::{self, Arch};
use super::ptrace::Session;
use super::summary::Collector;
use super::tracepoint::{self, Ids, OpenSpec, Rings};
use crate::diagnose::observe::pump::Pump;
use crate::diagnose::observe::witness::Witness;

/// Chunks each calibration loop is timed in (the median chunk is used).
const CHUNKS: usize = 20;
/// Calls per chunk in the untraced and tracepoint-traced loops.
const CALLS_CHEAP: u64 = 1_000;
/// Calls per chunk in the ptrace-traced loop (each stops the tracee).
const CALLS_PTRACE: u64 = 100;

use crate::diagnose::observe::overhead::Chunks;
pub use crate::diagnose::observe::overhead::Overhead;

fn getppid_key() -> (u32, u64) {
    let arch = Arch::native();
    let nr = names::number(arch, "getppid").unwrap_or(0);
    (arch.audit(), u64::from(nr))
}

fn getppid_only() -> Option<Selection> {
    Selection::parse(&["getppid".to_string()]).ok()
}

/// The untraced getppid loop's chunk times (A), in a child on `cpu`.
fn untraced(cpu: Option<usize>) -> io::Result<Vec<u64>> {
    let mut child = spawn_calibration(CHUNKS, CALLS_CHEAP, CalibrationMode::Untraced, cpu)?;
    child.go()?;
    let times = child.chunk_times_ns()?;
    child.wait()?;
    Ok(times)
}

/// The overhead from the untraced chunks (`CALLS_CHEAP` calls each), the traced ones
/// (`calls` each) and the traced calls the backend timed.
fn overhead(untraced: &[u64], traced: &[u64], calls: u64, c: &Collector) -> io::Result<Overhead> {
    let untraced = Chunks {
        times_ns: untraced,
        calls: CALLS_CHEAP,
    };
    let traced = Chunks {
        times_ns: traced,
        calls,
    };
    Overhead::from_chunks(untraced, traced, median_interval(c, CHUNKS as u64 * calls)?)
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
    let untraced = untraced(cpu)?;
    let options = Options {
        follow_forks: false,
        seccomp,
        exit_kill: true,
    };
    let filter = if seccomp {
        let nr = getppid_key().1 as u32;
        SeccompFilter::trace_only(Arch::native().audit(), &[nr])
    } else {
        None
    };
    let mode = CalibrationMode::Ptrace {
        options,
        seccomp: filter.as_ref(),
    };
    let mut child = spawn_calibration(CHUNKS, CALLS_PTRACE, mode, cpu)?;
    let mut collector = Collector::new(getppid_only(), 0.0);
    let mut session = Session::launched(child.pid(), seccomp, false, false);
    child.go()?;
    session.start()?;
    session.run(&mut collector, &mut |_| false)?;
    child.reaped();
    overhead(
        &untraced,
        &child.chunk_times_ns()?,
        CALLS_PTRACE,
        &collector,
    )
}

/// The tracepoint backend's overhead (events on every CPU in `cpus`), and the calibration's
/// events: keep them open until the trace's own events are open, so the kernel does not
/// unregister and register the tracepoints in between (each costs tens of ms here).
pub(super) fn tracepoint_overhead(ids: Ids, cpus: &[usize]) -> io::Result<(Overhead, Rings)> {
    let untraced = untraced(None)?;
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
    let times = child.chunk_times_ns()?;
    child.wait()?;
    let mut calls = rings.calls(Collector::new(getppid_only(), 0.0));
    rings.pump(&mut calls, true);
    Ok((
        overhead(&untraced, &times, CALLS_CHEAP, &calls.collector)?,
        rings,
    ))
}
