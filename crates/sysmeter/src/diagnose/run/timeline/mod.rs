//! The timeline of a run: rates between consecutive samples of the system counters (the
//! vmstat / iostat / netstat view) and of the command's own CPU use, the whole-run totals the
//! verdict reads (busiest disk and interface, swapping, idle share), and the conversion of
//! the points into [`Series`] with x = seconds since the start. The dentry cache's size
//! (in use, unused, negative) is a level at each sample, not a rate.
//!
//! Pure: samples in, numbers out.

use super::procfs::{CpuTimes, Device, PidStat};
use super::sample::{ProcessSample, SystemSample};
use crate::diagnose::run::classify::DeviceLoad;
use crate::model::{Series, SeriesPoint, Unit};
use crate::stats::summarize;

/// diskstats counts 512-byte sectors whatever the device's sector size.
const SECTOR: f64 = 512.0;

/// Rates over one sampling interval, ending at `t_s`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    /// End of the interval, seconds since the start.
    pub t_s: f64,
    /// Machine CPU shares, % of all CPUs: user, system, iowait, idle, steal.
    pub cpu: Option<[f64; 5]>,
    /// Bytes/s read and written on the disks.
    pub disk_rw: [f64; 2],
    /// Busy share of the busiest disk in the interval, %.
    pub disk_busy_pct: f64,
    /// Bytes/s received and sent on the interfaces.
    pub net_rx_tx: [f64; 2],
    /// Per second: page faults, major faults, pages swapped in, pages swapped out.
    pub paging: Option<[f64; 4]>,
    /// The command's CPU use, % of one CPU (its process and reaped children).
    pub cmd_cpu_pct: Option<f64>,
    /// The dentry cache at the end of the interval: entries in use, unused (cached, first
    /// to be reclaimed), negative (where the kernel reports them).
    pub dentries: Option<[Option<f64>; 3]>,
}

/// CPU shares (user, system, iowait, idle, steal) in % between two /proc/stat readings.
fn cpu_shares(a: &CpuTimes, b: &CpuTimes) -> Option<[f64; 5]> {
    let total = b.total().checked_sub(a.total()).filter(|&t| t > 0)? as f64;
    let pct = |x: u64, y: u64| y.saturating_sub(x) as f64 / total * 100.0;
    Some([
        pct(a.user, b.user),
        pct(a.system, b.system),
        pct(a.iowait, b.iowait),
        pct(a.idle, b.idle),
        pct(a.steal, b.steal),
    ])
}

/// Each device of `b` with its counters in `a` before it (one absent from `a` is left out).
fn paired<'s, T: Device>(a: &'s [T], b: &'s [T]) -> impl Iterator<Item = (&'s T, &'s T)> {
    b.iter()
        .filter_map(|d| Some((a.iter().find(|x| x.name() == d.name())?, d)))
}

/// Per-device (name, read bytes, written bytes, busy ms) deltas.
fn disk_deltas(a: &SystemSample, b: &SystemSample) -> Vec<(String, f64, f64, f64)> {
    paired(&a.disks, &b.disks)
        .map(|(p, d)| {
            (
                d.name.clone(),
                d.read_sectors.saturating_sub(p.read_sectors) as f64 * SECTOR,
                d.write_sectors.saturating_sub(p.write_sectors) as f64 * SECTOR,
                d.io_ticks_ms.saturating_sub(p.io_ticks_ms) as f64,
            )
        })
        .collect()
}

/// Per-interface (name, received, sent) byte deltas.
fn net_deltas(a: &SystemSample, b: &SystemSample) -> Vec<(String, f64, f64)> {
    paired(&a.nets, &b.nets)
        .map(|(p, n)| {
            (
                n.name.clone(),
                n.rx_bytes.saturating_sub(p.rx_bytes) as f64,
                n.tx_bytes.saturating_sub(p.tx_bytes) as f64,
            )
        })
        .collect()
}

fn child_ticks(s: &PidStat) -> u64 {
    s.cutime + s.cstime
}

/// The command's CPU time between two process samples, s: per-thread schedstat run time
/// (ns, exact; a thread first seen in `q` counts from zero) plus the clock ticks of children
/// reaped meanwhile. Without schedstats, the stat clock ticks (10 ms granularity) of all.
fn cmd_cpu_s(p: &ProcessSample, q: &ProcessSample, ticks_per_s: u64) -> f64 {
    let tick_s = 1.0 / ticks_per_s.max(1) as f64;
    let ns: Option<u64> = q
        .threads
        .iter()
        .map(|(tid, t)| {
            let before = p.threads.get(tid).map_or(Some(0), |x| x.oncpu_ns);
            Some(t.oncpu_ns?.saturating_sub(before?))
        })
        .sum();
    let children = child_ticks(&q.stat).saturating_sub(child_ticks(&p.stat)) as f64 * tick_s;
    match ns.filter(|_| !q.threads.is_empty()) {
        Some(ns) => ns as f64 / 1e9 + children,
        None => {
            let own = |s: &PidStat| s.utime + s.stime;
            own(&q.stat).saturating_sub(own(&p.stat)) as f64 * tick_s + children
        }
    }
}

/// The rates between system samples `a` and `b`, with the command's CPU from process
/// samples taken at the same moments (`ticks_per_s`: /proc/PID/stat clock ticks).
pub fn point(
    a: &SystemSample,
    b: &SystemSample,
    procs: Option<(&ProcessSample, &ProcessSample)>,
    ticks_per_s: u64,
) -> Point {
    let dt = b.t.saturating_sub(a.t).as_secs_f64().max(1e-6);
    let disks = disk_deltas(a, b);
    let nets = net_deltas(a, b);
    let paging = a.vm.zip(b.vm).map(|(x, y)| {
        [
            y.pgfault.saturating_sub(x.pgfault) as f64 / dt,
            y.pgmajfault.saturating_sub(x.pgmajfault) as f64 / dt,
            y.pswpin.saturating_sub(x.pswpin) as f64 / dt,
            y.pswpout.saturating_sub(x.pswpout) as f64 / dt,
        ]
    });
    let cmd_cpu_pct = procs.map(|(p, q)| {
        let pdt = q.t.saturating_sub(p.t).as_secs_f64().max(1e-6);
        cmd_cpu_s(p, q, ticks_per_s) / pdt * 100.0
    });
    Point {
        t_s: b.t.as_secs_f64(),
        cpu: a.cpu.zip(b.cpu).and_then(|(x, y)| cpu_shares(&x, &y)),
        disk_rw: [
            disks.iter().map(|d| d.1).sum::<f64>() / dt,
            disks.iter().map(|d| d.2).sum::<f64>() / dt,
        ],
        disk_busy_pct: disks
            .iter()
            .map(|d| (d.3 / (dt * 1000.0) * 100.0).min(100.0))
            .fold(0.0, f64::max),
        net_rx_tx: [
            nets.iter().map(|n| n.1).sum::<f64>() / dt,
            nets.iter().map(|n| n.2).sum::<f64>() / dt,
        ],
        paging,
        cmd_cpu_pct,
        dentries: b.dentries.map(|d| {
            [
                Some(d.total.saturating_sub(d.unused) as f64),
                Some(d.unused as f64),
                d.negative.map(|n| n as f64),
            ]
        }),
    }
}

/// Whole-run figures the verdict reads.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Totals {
    /// Machine CPU shares over the run (user, system, iowait, idle, steal), %.
    pub cpu: Option<[f64; 5]>,
    /// The disk with the largest busy share (ties: most bytes).
    pub disk: Option<DeviceLoad>,
    /// The interface that moved the most bytes.
    pub net: Option<DeviceLoad>,
    /// Pages swapped in+out per second, machine-wide.
    pub swap_pages_per_s: f64,
}

/// Totals between the first and the last system sample.
pub fn totals(first: &SystemSample, last: &SystemSample) -> Totals {
    let dt = last.t.saturating_sub(first.t).as_secs_f64().max(1e-6);
    let disk = disk_deltas(first, last)
        .into_iter()
        .map(|(name, r, w, busy)| DeviceLoad {
            name,
            busy_pct: Some((busy / (dt * 1000.0) * 100.0).min(100.0)),
            bytes_per_s: (r + w) / dt,
        })
        .max_by(|x, y| {
            (x.busy_pct, x.bytes_per_s)
                .partial_cmp(&(y.busy_pct, y.bytes_per_s))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
    let net = net_deltas(first, last)
        .into_iter()
        .map(|(name, rx, tx)| DeviceLoad {
            name,
            busy_pct: None,
            bytes_per_s: (rx + tx) / dt,
        })
        .max_by(|x, y| x.bytes_per_s.total_cmp(&y.bytes_per_s));
    let swap = first.vm.zip(last.vm).map_or(0.0, |(a, b)| {
        (b.pswpin.saturating_sub(a.pswpin) + b.pswpout.saturating_sub(a.pswpout)) as f64 / dt
    });
    Totals {
        cpu: first
            .cpu
            .zip(last.cpu)
            .and_then(|(a, b)| cpu_shares(&a, &b)),
        disk,
        net,
        swap_pages_per_s: swap,
    }
}

/// Seed of the (single-sample) summaries of timeline points.
const SEED: u64 = 1;

fn series(name: &str, unit: Unit, points: &[Point], y: impl Fn(&Point) -> Option<f64>) -> Series {
    Series {
        name: name.to_string(),
        x_label: "seconds since start".to_string(),
        x_unit: Unit::Count,
        y_unit: unit,
        points: points
            .iter()
            .filter_map(|p| {
                let v = y(p).filter(|v| v.is_finite())?;
                Some(SeriesPoint {
                    x: p.t_s,
                    summary: summarize(&[v], SEED).ok()?,
                    cycles: None,
                })
            })
            .collect(),
    }
}

/// The timeline as series (empty series are left out).
pub fn to_series(points: &[Point]) -> Vec<Series> {
    let cpu = |i: usize| move |p: &Point| p.cpu.map(|c| c[i]);
    let pg = |i: usize| move |p: &Point| p.paging.map(|c| c[i]);
    let dc = |i: usize| move |p: &Point| p.dentries.and_then(|d| d[i]);
    let all = vec![
        series("command CPU %", Unit::Count, points, |p| p.cmd_cpu_pct),
        series("machine user %", Unit::Count, points, cpu(0)),
        series("machine system %", Unit::Count, points, cpu(1)),
        series("machine iowait %", Unit::Count, points, cpu(2)),
        series("machine idle %", Unit::Count, points, cpu(3)),
        series("machine steal %", Unit::Count, points, cpu(4)),
        series("disk read", Unit::BytesPerSec, points, |p| {
            Some(p.disk_rw[0])
        }),
        series("disk write", Unit::BytesPerSec, points, |p| {
            Some(p.disk_rw[1])
        }),
        series("disk busy %", Unit::Count, points, |p| {
            Some(p.disk_busy_pct)
        }),
        series("net receive", Unit::BytesPerSec, points, |p| {
            Some(p.net_rx_tx[0])
        }),
        series("net send", Unit::BytesPerSec, points, |p| {
            Some(p.net_rx_tx[1])
        }),
        series("page faults/s", Unit::Count, points, pg(0)),
        series("major faults/s", Unit::Count, points, pg(1)),
        series("swap-ins/s", Unit::Count, points, pg(2)),
        series("swap-outs/s", Unit::Count, points, pg(3)),
        series("dentries in use", Unit::Count, points, dc(0)),
        series("dentries unused", Unit::Count, points, dc(1)),
        series("negative dentries", Unit::Count, points, dc(2)),
    ];
    all.into_iter().filter(|s| !s.points.is_empty()).collect()
}

#[cfg(test)]
mod tests;
