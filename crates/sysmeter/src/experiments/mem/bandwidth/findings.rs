//! Model estimates and derived findings of `mem.bandwidth`: the L1 model (vector loads and
//! stores per core cycle at the TSC rate), the DRAM transfer rate when the memory speed is
//! readable, and the ratios that explain the measurements (read vs write, thread scaling,
//! copy vs read+write, streaming vs ordinary stores).

use sysmeter_sys::membw;

use super::{Kernel, Level};
use crate::harness::{Ctx, Measured};
use crate::model::{Estimate, HostInfo, Unit};
use crate::stats::ratio;

/// Bytes per core cycle the L1 model allows, and what limits it: current x86-64 and
/// aarch64 cores issue two vector loads and one vector store per cycle.
fn l1_bytes_per_cycle(kernel: Kernel, vb: f64) -> Option<(f64, &'static str)> {
    match kernel {
        Kernel::Read => Some((2.0 * vb, "2 vector loads")),
        Kernel::Write => Some((vb, "1 vector store")),
        Kernel::Copy => Some((vb, "1 vector load + 1 vector store (bytes copied)")),
        Kernel::NtWrite => None,
    }
}

fn thread_counts(threads: usize) -> Vec<usize> {
    if threads > 1 {
        vec![1, threads]
    } else {
        vec![1]
    }
}

fn level<'a>(levels: &'a [Level], label: &str) -> Option<&'a Level> {
    levels.iter().find(|l| l.label == label)
}

/// Estimates beside the measurements: L1 from the TSC rate, DRAM from the memory speed.
pub(super) fn estimates(levels: &[Level], host: &HostInfo, tsc_ghz: Option<f64>) -> Vec<Estimate> {
    let mut v = Vec::new();
    let threads = (host.cpu.usable_cpus as usize).max(1);
    let vb = membw::vector_bytes() as f64;
    if let (Some(l1), Some(ghz)) = (level(levels, "L1"), tsc_ghz.filter(|g| *g > 0.0)) {
        for k in [Kernel::Read, Kernel::Write, Kernel::Copy] {
            let Some((bpc, what)) = l1_bytes_per_cycle(k, vb) else {
                continue;
            };
            for t in thread_counts(threads) {
                v.push(Estimate {
                    metric: l1.metric(k, t),
                    value: bpc * ghz * 1e9 * t as f64,
                    unit: Unit::BytesPerSec,
                    basis: format!(
                        "model: {what} of {vb} B per core cycle x {t} core(s) at the measured \
                         {ghz:.3} GHz TSC rate (assumes the core clock equals the TSC rate)"
                    ),
                });
            }
        }
    }
    if let (Some(dram), Some(mts)) = (level(levels, "DRAM"), host.memory.speed_mts) {
        for t in thread_counts(threads) {
            v.push(Estimate {
                metric: dram.metric(Kernel::Read, t),
                value: 8.0 * mts as f64 * 1e6,
                unit: Unit::BytesPerSec,
                basis: format!(
                    "peak of ONE 64-bit channel: 8 B x {mts} MT/s; the channel count is not \
                     readable, so the machine's peak is this x channels, and one thread is \
                     usually held below it by how many misses it can keep in flight"
                ),
            });
        }
    }
    v
}

const GB: f64 = 1e9;

/// Add every finding the measured metrics support.
pub(super) fn add(out: &mut Measured, levels: &[Level], threads: usize, ctx: &Ctx<'_>) {
    let m = |out: &Measured, k: Kernel, label: &str, t: usize| {
        level(levels, label).and_then(|l| out.median(&l.metric(k, t)))
    };
    if let (Some(r), Some(w)) = (
        m(out, Kernel::Read, "DRAM", 1),
        m(out, Kernel::Write, "DRAM", 1),
    ) && let Some(x) = ratio(r, w)
    {
        let why = if x >= 1.0 {
            "An ordinary store to a line that is not cached first reads the line \
             (read-for-ownership), so every written byte crosses the memory bus twice."
        } else {
            "Writes are faster here: stores retire into the store buffer without waiting, \
             while one thread's reads stall on how many misses it can keep in flight."
        };
        out.find(
            "dram_read_vs_write",
            format!(
                "DRAM read ({:.1} GB/s) is {x:.2}x write ({:.1} GB/s) on one thread. {why}",
                r / GB,
                w / GB
            ),
            Some(x),
        );
    }
    if threads > 1 {
        for l in levels {
            scaling(out, l, threads);
        }
    }
    for label in ["L1", "DRAM"] {
        if let Some(l) = level(levels, label) {
            copy_vs_read_write(out, l);
        }
    }
    streaming(out, levels);
    // cpu.ops times a dependent add, one core cycle: the core clock while measuring.
    let core_ghz = ctx
        .previous_median("cpu.ops", "int add (dependent)")
        .filter(|&ns| ns > 0.0)
        .map(|ns| 1.0 / ns);
    l1_model(out, levels, ctx.calib.tsc_ghz, core_ghz);
    if ctx.host.memory.speed_mts.is_none() {
        out.find(
            "dram_estimate_skipped",
            "No DRAM transfer-rate estimate: the memory speed is not readable here (SMBIOS \
             type 17, `sudo dmidecode -t memory`, usually needs root and is absent in VMs)."
                .into(),
            None,
        );
    }
}

fn scaling(out: &mut Measured, l: &Level, threads: usize) {
    let (Some(one), Some(all)) = (
        out.median(&l.metric(Kernel::Read, 1)),
        out.median(&l.metric(Kernel::Read, threads)),
    ) else {
        return;
    };
    let Some(s) = ratio(all, one) else { return };
    let why = if s > 1.1 * threads as f64 && l.shared {
        "above ideal: each thread's share of this shared level is smaller than one thread's \
         working set, so more of it stays in faster, private levels"
    } else if s >= 0.8 * threads as f64 {
        "close to ideal: each thread has its own share of this level"
    } else if l.shared {
        "below ideal: the threads share this level's bandwidth (memory controller and \
         channels for DRAM; under a hypervisor also other guests)"
    } else {
        "below ideal although the level is private: the cores are probably SMT siblings, \
         throttled, or busy with other work"
    };
    out.find(
        &format!("thread_scaling.{}", l.label),
        format!(
            "{} read with {threads} threads: {:.1} GB/s, {s:.2}x one thread ({:.1} GB/s; ideal \
             {threads}x), {why}.",
            l.label,
            all / GB,
            one / GB
        ),
        Some(s),
    );
}

fn copy_vs_read_write(out: &mut Measured, l: &Level) {
    let get = |k| out.median(&l.metric(k, 1));
    let (Some(c), Some(r), Some(w)) = (get(Kernel::Copy), get(Kernel::Read), get(Kernel::Write))
    else {
        return;
    };
    // Reading B bytes then writing B bytes, one after the other, takes B/R + B/W.
    let serial = 1.0 / (1.0 / r + 1.0 / w);
    let Some(x) = ratio(c, serial) else { return };
    let why = if x > 1.05 {
        "loads and stores overlap"
    } else if x < 0.95 {
        "mixing the two streams costs extra (read-for-ownership of the destination adds a \
         third stream; DRAM pays read/write turnarounds)"
    } else {
        "as if the read and the write ran one after the other"
    };
    out.find(
        &format!("copy_vs_read_write.{}", l.label),
        format!(
            "{} copy: {:.1} GB/s of bytes copied (each byte read once and written once, so \
             twice that in traffic). Reading then writing separately would give 1/(1/R + 1/W) \
             = {:.1} GB/s; copy reaches {x:.2}x that: {why}.",
            l.label,
            c / GB,
            serial / GB
        ),
        Some(x),
    );
}

fn streaming(out: &mut Measured, levels: &[Level]) {
    let get =
        |out: &Measured, label, k| level(levels, label).and_then(|l| out.median(&l.metric(k, 1)));
    if let (Some(nt), Some(w)) = (
        get(out, "DRAM", Kernel::NtWrite),
        get(out, "DRAM", Kernel::Write),
    ) && let Some(x) = ratio(nt, w)
    {
        let why = if x >= 1.0 {
            "streaming stores write whole lines without reading them first (no \
             read-for-ownership) and leave the cache alone"
        } else {
            "streaming stores are slower here for one thread (they serialise on a few \
             write-combining buffers; some hypervisors and AMD parts pay extra for them)"
        };
        out.find(
            "nt_vs_write.DRAM",
            format!(
                "DRAM nt-write {:.1} GB/s is {x:.2}x ordinary write ({:.1} GB/s): {why}.",
                nt / GB,
                w / GB
            ),
            Some(x),
        );
    }
    if let (Some(nt), Some(w)) = (
        get(out, "L1", Kernel::NtWrite),
        get(out, "L1", Kernel::Write),
    ) && let Some(x) = ratio(nt, w)
    {
        out.find(
            "nt_vs_write.L1",
            format!(
                "Inside L1, nt-write runs at {:.1} GB/s, {x:.2}x ordinary write ({:.1} GB/s): \
                 streaming stores bypass the cache even when the data would fit, so use them \
                 only for data that will not be read again soon.",
                nt / GB,
                w / GB
            ),
            Some(x),
        );
    }
}

fn l1_model(out: &mut Measured, levels: &[Level], tsc_ghz: Option<f64>, core_ghz: Option<f64>) {
    let (Some(l1), Some(ghz)) = (level(levels, "L1"), tsc_ghz.filter(|g| *g > 0.0)) else {
        return;
    };
    let Some(r) = out.median(&l1.metric(Kernel::Read, 1)) else {
        return;
    };
    let per_cycle = r / (ghz * GB);
    let model = 2.0 * membw::vector_bytes() as f64;
    let core = match core_ghz {
        Some(c) => format!(
            " At the {c:.2} GHz core clock cpu.ops measured in this run that is {:.1} B per \
             core cycle.",
            r / (c * GB)
        ),
        None => " (Run cpu.ops in the same run to get the core clock.)".to_string(),
    };
    out.find(
        "l1_read_bytes_per_cycle",
        format!(
            "L1 read moves {per_cycle:.1} B per TSC cycle ({:.1} GB/s at {ghz:.3} GHz); the \
             model of 2 loads of {} B per core cycle gives {model:.0} B. A ratio away from 1 \
             means the core clock differs from the TSC rate or the core issues fewer loads.\
             {core}",
            r / GB,
            membw::vector_bytes()
        ),
        Some(per_cycle),
    );
}
