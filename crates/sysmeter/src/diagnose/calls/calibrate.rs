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
//! One pair of the one A/B loop (`observe::overhead::paired`) in its per-call mode, as
//! `trace`'s: each block a thread's loop timed in chunks by the wall clock
//! (`Overhead::per_call`), as the subtracted part must be in the unit of the durations the
//! probes time (see `observe::overhead`); the CPU time each probed call adds is read around
//! the same chunks (`overhead::cpu_ns`).
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
use crate::diagnose::observe::overhead::{Chunks, CpuOf, Overhead, cpu_ns, own_tid, paired};
use crate::diagnose::observe::pump::Pump;
use crate::diagnose::observe::uprobes::UprobeGroup;

/// Pairs of unprobed and probed loops (one: a probed block opens the probes' events).
const PAIRS: usize = 1;
const CHUNKS: usize = 20;
const CALLS: u64 = 500;
/// The variable looked up (never set).
const UNSET: &str = "SYSMETER_CALIBRATION_NEVER_SET";

/// The loop's chunks and the thread's on-CPU time over all of them, ns.
fn timed_chunks() -> (Chunks, f64) {
    let before = cpu_ns(CpuOf::Thread);
    let times_ns = (0..CHUNKS)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..CALLS {
                std::hint::black_box(std::env::var_os(UNSET));
            }
            t.elapsed().as_nanos() as u64
        })
        .collect();
    let chunks = Chunks {
        times_ns,
        calls: CALLS,
    };
    (chunks, cpu_ns(CpuOf::Thread) - before)
}

/// One block: the loop on a thread of its own, once `before` has had the thread's id (to
/// open the probes' events on it).
fn on_thread(before: impl FnOnce(i32) -> io::Result<()>) -> io::Result<(Chunks, f64)> {
    let (ready_tx, ready_rx) = mpsc::channel();
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let worker = std::thread::spawn(move || -> io::Result<(Chunks, f64)> {
        let tid = own_tid().ok_or_else(|| io::Error::other("/proc/thread-self names no thread"))?;
        let _ = ready_tx.send(tid);
        go_rx.recv().map_err(io::Error::other)?;
        Ok(timed_chunks())
    });
    let tid = ready_rx.recv().map_err(io::Error::other)?;
    before(tid)?;
    let _ = go_tx.send(());
    worker
        .join()
        .map_err(|_| io::Error::other("the calibration thread panicked"))?
}

/// What both blocks use: the probes' events (opened on each probed block's thread) and the
/// threads' CPU time, unprobed and probed, ns.
struct Blocks<'a> {
    rings: Rings,
    spec: OpenSpec<'a>,
    cpu_ns: [f64; 2],
}

impl Blocks<'_> {
    fn unprobed(&mut self) -> io::Result<Chunks> {
        let (chunks, cpu) = on_thread(|_| Ok(()))?;
        self.cpu_ns[0] += cpu;
        Ok(chunks)
    }

    fn probed(&mut self) -> io::Result<Chunks> {
        let (chunks, cpu) = on_thread(|tid| {
            self.rings.add(tid, &self.spec)?;
            self.rings.enable()
        })?;
        self.rings.disable();
        self.cpu_ns[1] += cpu;
        Ok(chunks)
    }
}

/// The probe cost, and the CPU time each probed call adds to the program (ns), which the
/// program's CPU time is corrected by.
pub struct Measured {
    /// As `trace` states it.
    pub overhead: Overhead,
    /// On-CPU time added per probed call, ns.
    pub added_cpu_ns: f64,
}

/// Measures the probe overhead on `cpus`, defining its probes in `probes`. Defining a probe
/// does not insert it (opening its event does), so the unprobed loop runs after.
pub fn overhead(probes: &mut UprobeGroup, cpus: &[usize]) -> io::Result<Measured> {
    let libc =
        elf::own_libc().ok_or_else(|| io::Error::other("sysmeter runs without a libc.so"))?;
    let image = elf::read(&libc).map_err(io::Error::other)?;
    let (_, site) = image
        .plt
        .iter()
        .find(|(name, _)| name == "strlen")
        .ok_or_else(|| io::Error::other("libc has no PLT stub for its strlen"))?;
    let defined = define_pair(probes, "cal", &libc, *site)?;
    let mut blocks = Blocks {
        rings: Rings::new(&[defined]),
        spec: OpenSpec {
            cpus,
            follow_forks: false,
            enable_on_exec: false,
        },
        cpu_ns: [0.0; 2],
    };
    let pairs = paired(PAIRS, &mut blocks, Blocks::unprobed, Blocks::probed)?;
    let mut calls = blocks.rings.calls(Collector::new(1, 0.0, 0.0));
    blocks.rings.pump(&mut calls, true);
    let samples = &calls.collector.stats()[0].samples;
    let interval_ns = crate::stats::median(samples)
        .map_err(|_| io::Error::other("the probed calibration loop recorded no call"))?;
    let overhead = Overhead::per_call(&pairs, interval_ns)
        .ok_or_else(|| io::Error::other("a calibration loop timed no chunk"))?;
    let [unprobed_cpu, probed_cpu] = blocks.cpu_ns;
    let added_cpu_ns = ((probed_cpu - unprobed_cpu) / overhead.calls as f64).max(0.0);
    Ok(Measured {
        overhead,
        added_cpu_ns,
    })
}
