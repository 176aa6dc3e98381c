//! What a probed call costs, measured before each `calls` run with the same mechanism: a
//! thread of sysmeter looks up an unset environment variable N times (`std::env::var_os`:
//! libc's `getenv`, which calls `strlen` once through libc's own PLT stub), timing its own
//! loop, once unprobed and once with entry and return probes on that PLT stub — the same
//! kind of instruction (`jmp *GOT(%rip)`, single-stepped out of line by the kernel, several
//! times dearer than a probe on a function's first instruction here) as the program's PLT
//! stubs `calls` probes. The same [`Overhead`] as `trace`'s calibration:
//!
//! - *added per call* = traced − untraced loop time per call: the slowdown each probed call
//!   gives the program;
//! - *inside the interval* = median probed duration − untraced per-call cost: the part of
//!   the probe cost between a call's two timestamps, subtracted from every duration.
//!
//! The thread is ours, so the perf events are opened on its thread id only; other
//! processes calling strlen inside libc during the few milliseconds are slowed, not counted.

use std::io;

use std::sync::mpsc;
use std::time::Instant;

use super::collector::Collector;
use super::probes::define_pair;
use super::rings::{OpenSpec, Rings};
use crate::diagnose::observe::elf;
use crate::diagnose::observe::overhead::Overhead;
use crate::diagnose::observe::pump::Pump;
use crate::diagnose::observe::uprobes::UprobeGroup;

const CHUNKS: usize = 20;
const CALLS: u64 = 500;
/// The variable looked up (never set).
const UNSET: &str = "SYSMETER_CALIBRATION_NEVER_SET";

/// On-CPU time of the calling thread so far, ns (`/proc/thread-self/schedstat`).
fn thread_cpu_ns() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// Chunk times and the thread's on-CPU time over all chunks, ns.
fn timed_chunks() -> (Vec<u64>, f64) {
    let before = thread_cpu_ns();
    let times = chunk_times();
    (times, thread_cpu_ns() - before)
}

fn chunk_times() -> Vec<u64> {
    (0..CHUNKS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..CALLS {
                std::hint::black_box(std::env::var_os(UNSET));
            }
            t.elapsed().as_nanos() as u64
        })
        .collect()
}

fn per_call(chunks: &[u64]) -> io::Result<f64> {
    let times: Vec<f64> = chunks.iter().map(|&t| t as f64).collect();
    let median = crate::stats::median(&times).map_err(io::Error::other)?;
    Ok(median / CALLS as f64)
}

fn own_tid() -> io::Result<i32> {
    let link = std::fs::read_link("/proc/thread-self")?;
    link.file_name()
        .and_then(|f| f.to_str()?.parse().ok())
        .ok_or_else(|| io::Error::other("/proc/thread-self names no thread"))
}

/// The probe cost, and the CPU time each probed call adds to the program (ns), which the
/// program's CPU time is corrected by.
pub struct Measured {
    /// As `trace` states it.
    pub overhead: Overhead,
    /// On-CPU time added per probed call, ns.
    pub added_cpu_ns: f64,
}

/// Measures the probe overhead on `cpus`, defining its probes in `probes`.
pub fn overhead(probes: &mut UprobeGroup, cpus: &[usize]) -> io::Result<Measured> {
    let libc =
        elf::own_libc().ok_or_else(|| io::Error::other("sysmeter runs without a libc.so"))?;
    let image = elf::read(&libc).map_err(io::Error::other)?;
    let (_, site) = image
        .plt
        .iter()
        .find(|(name, _)| name == "strlen")
        .ok_or_else(|| io::Error::other("libc has no PLT stub for its strlen"))?;
    let (ready_tx, ready_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let worker = std::thread::spawn(move || -> io::Result<(Vec<u64>, f64)> {
        let untraced = timed_chunks();
        let _ = ready_tx.send((own_tid()?, untraced));
        go_rx.recv().map_err(io::Error::other)?;
        Ok(timed_chunks())
    });
    let (tid, (untraced, untraced_cpu)) = ready_rx.recv().map_err(io::Error::other)?;
    let defined = define_pair(probes, "cal", &libc, *site)?;
    let mut rings = Rings::new(&[defined]);
    let spec = OpenSpec {
        cpus,
        follow_forks: false,
        enable_on_exec: false,
    };
    rings.add(tid, &spec)?;
    rings.enable()?;
    let _ = go_tx.send(());
    let (traced, traced_cpu) = worker
        .join()
        .map_err(|_| io::Error::other("the calibration thread panicked"))??;
    rings.disable();
    let mut calls = rings.calls(Collector::new(1, 0.0, 0.0));
    rings.pump(&mut calls, true);
    let collector = calls.collector;
    let samples = &collector.stats()[0].samples;
    let interval_ns = crate::stats::median(samples)
        .map_err(|_| io::Error::other("the probed calibration loop recorded no call"))?;
    let calls = CHUNKS as u64 * CALLS;
    let overhead = Overhead {
        untraced_ns: per_call(&untraced)?,
        traced_ns: per_call(&traced)?,
        interval_ns,
        calls,
    };
    let added_cpu_ns = ((traced_cpu - untraced_cpu) / calls as f64).max(0.0);
    Ok(Measured {
        overhead,
        added_cpu_ns,
    })
}
