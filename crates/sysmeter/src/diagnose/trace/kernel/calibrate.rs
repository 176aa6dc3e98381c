//! What the in-kernel backend costs, measured before each trace with the programs the trace
//! will use (trace/calibrate.rs has the method): a forked copy of sysmeter makes `getppid`
//! calls in timed chunks, once untraced and once as a target of the loaded programs (one
//! pair of `observe::overhead::paired`, the one A/B loop, in its per-call mode). The
//! traced calls' median duration comes from their log2 histogram, interpolated. The
//! calibration's calls are then taken out of the maps, so the trace starts from empty maps.

use std::io;

use sysmeter_sys::ptrace::{CalibrationMode, spawn_calibration};

use super::super::names::{self, Arch};
use super::KernelTrace;
use super::maps::{KEY_BYTES, median_ns};
use crate::diagnose::observe::bpf::{BUCKETS, VALUE_WORDS, u32_at, u64_at};
use crate::diagnose::observe::overhead::{Chunks, Overhead, paired};

/// Pairs of untraced and traced loops (one: each block is a new child).
const PAIRS: usize = 1;
/// Chunks each calibration loop is timed in (the median chunk is used).
const CHUNKS: usize = 20;
/// Calls per chunk.
const CALLS: u64 = 1_000;

/// The getppid loop's chunks in a forked child; `traced`: a target of `k` meanwhile.
fn chunk_times(k: Option<&mut KernelTrace>) -> io::Result<(Chunks, i32)> {
    let mut child = spawn_calibration(CHUNKS, CALLS, CalibrationMode::Untraced, None)?;
    let pid = child.pid();
    if let Some(k) = k {
        k.target(pid).map_err(io::Error::other)?;
    }
    child.go()?;
    let times_ns = child.chunk_times_ns()?;
    child.wait()?;
    Ok((
        Chunks {
            times_ns,
            calls: CALLS,
        },
        pid,
    ))
}

/// One traced loop (B): its getppid calls added to `hist` (their durations' log2
/// histogram), then taken out of `k`'s maps.
fn traced(k: &mut KernelTrace, hist: &mut [u64; BUCKETS]) -> io::Result<Chunks> {
    let (traced, pid) = chunk_times(Some(k))?;
    let maps = k.read().map_err(io::Error::other)?;
    let getppid = names::number(Arch::native(), "getppid").map(u64::from);
    for (key, v) in &maps.calls {
        if u32_at(key, 0) == pid as u32 && Some(u64_at(key, 8)) == getppid {
            hist.iter_mut().zip(&v[2..]).for_each(|(h, n)| *h += n);
        }
    }
    forget(k, pid, &maps.calls).map_err(io::Error::other)?;
    k.base = maps.counter(super::slot::CALLS);
    Ok(traced)
}

/// The overhead of `k`'s programs per traced call; the maps are emptied of the calibration
/// loop's calls afterwards.
pub(in crate::diagnose::trace) fn overhead(k: &mut KernelTrace) -> io::Result<Overhead> {
    let mut hist = [0u64; BUCKETS];
    let pairs = paired(
        PAIRS,
        k,
        |_| chunk_times(None).map(|(untraced, _)| untraced),
        |k| traced(k, &mut hist),
    )?;
    let interval = median_ns(&hist).ok_or_else(|| {
        io::Error::other("the in-kernel calibration loop recorded no getppid call")
    })?;
    Overhead::per_call(&pairs, interval)
        .ok_or_else(|| io::Error::other("a calibration loop timed no chunk"))
}

/// Takes process `pid` (the calibration loop) out of the targets and its calls out of the
/// maps.
fn forget(
    k: &mut KernelTrace,
    pid: i32,
    calls: &[([u8; KEY_BYTES], [u64; VALUE_WORDS])],
) -> Result<(), crate::diagnose::observe::bpf::BpfError> {
    k.untarget(pid)?;
    for (key, _) in calls.iter().filter(|(key, _)| u32_at(key, 0) == pid as u32) {
        k.loaded
            .remove::<[u8; KEY_BYTES], [u64; VALUE_WORDS]>("calls", key)?;
    }
    k.loaded
        .remove::<u32, [u8; super::START_BYTES]>("starts", &(pid as u32))
}
