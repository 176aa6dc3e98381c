//! Naming the detected levels of `mem.latency` after the sysfs caches they match, the level
//! metrics (so "L1 latency" … "DRAM latency" appear in tables) and the findings: each
//! level's latency and end next to sysfs, disagreements, missing levels, minor steps, and
//! the subtracted loop overhead.

use crate::harness::Measured;
use crate::model::{Finding, HostInfo, Metric, units};
use crate::stats::hierarchy::{self, Boundary, Config, Hierarchy, Level};

use super::points::Sampler;
use super::ranges::{between, range_findings, unconfirmed};

/// Data and unified caches from sysfs as (level, size), ascending, one per level.
pub fn sysfs_caches(host: &HostInfo) -> Vec<(u32, u64)> {
    let mut v: Vec<(u32, u64)> = host
        .caches
        .iter()
        .filter(|c| c.kind != "Instruction" && c.size_bytes > 0)
        .map(|c| (c.level, c.size_bytes))
        .collect();
    v.sort_unstable();
    v.dedup_by_key(|c| c.0);
    v
}

/// A cache size this far outside a confirmed range (one coarse step) still agrees with it.
const ADJACENT: f64 = 1.25;

/// What the windowed curve showed: the levels (latencies in ns; a confirmed end is the middle
/// of its range, an unconfirmed one the candidate), and each end's range and confirmation.
pub struct Detected<'a> {
    /// The levels.
    pub found: &'a Hierarchy,
    /// Range and confirmation per level end.
    pub boundaries: &'a [Boundary],
    /// Sizes re-measured around the candidates.
    pub fine_sizes: usize,
}

/// Names of the detected levels (`L1`, `L2`, …, `DRAM`) and the sysfs comparison rows.
fn names(d: &Detected<'_>, caches: &[(u32, u64)], max: u64) -> (Vec<String>, Vec<Row>) {
    let found = d.found;
    let with_end: Vec<usize> = (0..found.levels.len())
        .filter(|&k| found.levels[k].ends_at_bytes.is_some())
        .collect();
    let ends: Vec<u64> = with_end
        .iter()
        .filter_map(|&k| found.levels[k].ends_at_bytes)
        .collect();
    let n = found.levels.len();
    let sizes: Vec<u64> = caches.iter().map(|c| c.1).collect();
    let matches = hierarchy::match_caches(&ends, &sizes);
    // Memory is reached when the curve went past twice the last cache sysfs lists, or when
    // it passed as many level ends as sysfs lists caches and flattened after them: a guest may
    // be told of its host's whole L3 (480 MiB on a large Xeon) while its share ends sooner.
    let flat_last = found.levels.last().is_some_and(|l| l.flat);
    let reached_memory = caches.last().is_none_or(|c| max >= 2 * c.1)
        || (n > 1 && flat_last && ends.len() >= caches.len());
    let names = (0..n)
        .map(|i| {
            let m = matches.iter().find(|m| m.detected == Some(i));
            match (i + 1 == n, m.and_then(|m| m.sysfs)) {
                (true, _) if reached_memory => "DRAM".to_string(),
                (true, _) => "last level".to_string(),
                (false, Some(j)) => format!("L{}", caches[j].0),
                (false, None) => format!("level {}", i + 1),
            }
        })
        .collect();
    let rows = matches
        .iter()
        .map(|m| {
            let b = m
                .detected
                .and_then(|i| d.boundaries.iter().find(|b| b.level == with_end[i]));
            let range = b
                .filter(|b| b.unconfirmed.is_none())
                .and_then(|b| Some((b.lo_bytes?, b.hi_bytes?)));
            let sysfs = m.sysfs.map(|j| caches[j]);
            let agree = match (range, sysfs) {
                (Some((lo, hi)), Some((_, size))) => {
                    hierarchy::range_agrees(lo, hi, size, ADJACENT)
                }
                _ => m.agree,
            };
            Row {
                detected: m.detected.map(|i| ends[i]),
                sysfs,
                ratio: m.ratio,
                agree,
                range,
            }
        })
        .collect();
    (names, rows)
}

struct Row {
    detected: Option<u64>,
    sysfs: Option<(u32, u64)>,
    ratio: Option<f64>,
    agree: bool,
    /// The confirmed range (last size inside, first beyond).
    range: Option<(u64, u64)>,
}

/// The `hierarchy.<name>.latency_ns` finding of every level metric (`<name> latency`): its
/// figure ([`Metric::figure`], what every page shows), in TSC cycles too, and where it was
/// measured (the metric's note). Drawn from the metrics alone, so `--rounds` draws it again
/// from the pooled ones (`Experiment::metric_findings`).
pub fn latency_findings(out: &mut Measured) {
    let found: Vec<Finding> = out
        .metrics
        .iter()
        .filter_map(|m| {
            let name = m.name.strip_suffix(" latency")?;
            let x = m.figure();
            // TSC ticks per ns: the cycles summary is the time summary at the TSC rate.
            let tsc = m.cycles.map(|c| c.median / m.summary.median);
            let cyc = tsc
                .filter(|g| g.is_finite())
                .map_or(String::new(), |g| format!(" ({:.0} TSC cycles)", x * g));
            let at = m
                .note
                .as_deref()
                .map_or(String::new(), |n| format!(": {n}"));
            Some(Finding::new(
                &format!("hierarchy.{name}.latency_ns"),
                format!("{} {}{cyc}{at}.", m.name, units::duration_ns(x)),
                Some(x),
            ))
        })
        .collect();
    out.findings.extend(found);
}

/// The metric of one level (`L1 latency` … `DRAM latency`): its representative point's, with
/// where it lies in its note. Its figure is the level's latency in every finding and on
/// every page.
fn level_metric(
    level: &Level,
    name: &str,
    xs: &[u64],
    metrics: &[Metric],
    last: bool,
) -> Option<Metric> {
    let i = representative(level, xs, metrics, last)?;
    let mut m = metrics[i].clone();
    let shape = if level.flat {
        "on the plateau"
    } else {
        "still rising over"
    };
    m.name = format!("{name} latency");
    m.note = Some(format!(
        "random chain at {}, {shape} {}–{}",
        units::size(xs[i]),
        units::size(level.first_size),
        units::size(level.last_size)
    ));
    Some(m)
}

/// Level metrics and hierarchy findings from the detected levels of the windowed curve
/// (`metrics`: its points', by size).
pub fn levels(host: &HostInfo, d: &Detected<'_>, metrics: &[Metric], max: u64, out: &mut Measured) {
    let caches = sysfs_caches(host);
    let found = d.found;
    let (names, rows) = names(d, &caches, max);
    let xs: Vec<u64> = out.series[0].points.iter().map(|p| p.x as u64).collect();
    let mut table = Vec::new();
    for (k, (level, name)) in found.levels.iter().zip(&names).enumerate() {
        let last = k + 1 == found.levels.len();
        out.metrics
            .extend(level_metric(level, name, &xs, metrics, last));
        let Some(end) = level.ends_at_bytes else {
            // Its latency is its metric's figure, quoted by its own finding.
            table.push(format!("{name} (the curve ends in it)"));
            continue;
        };
        let row = rows.iter().find(|r| r.detected == Some(end));
        let sysfs = row.and_then(|r| r.sysfs).map(|c| c.1);
        let sysfs = sysfs.map_or("—".into(), units::size);
        let boundary = d.boundaries.iter().find(|b| b.level == k);
        if let Some(why) = boundary.and_then(|b| b.unconfirmed) {
            table.push(format!("{name} end not confirmed (sysfs {sysfs})"));
            unconfirmed(out, name, end, why);
            continue;
        }
        let range = row.and_then(|r| r.range).unwrap_or((end, end));
        table.push(format!("{name} ends {} (sysfs {sysfs})", between(range)));
        range_findings(out, name, range, boundary.map_or(0.0, |b| b.jump));
        size_findings(out, name, (end, range), row, host.virtualization.as_deref());
    }
    missing(out, &rows, max);
    no_memory(out, &names, &caches, max);
    minor_steps(out, found);
    out.find(
        "hierarchy.fine_sizes",
        format!(
            "{} sizes around the candidate level ends were measured again, finely and twice \
             each, before a level's end was accepted.",
            d.fine_sizes
        ),
        Some(d.fine_sizes as f64),
    );
    out.find(
        "hierarchy.table",
        format!("Detected vs sysfs: {}.", table.join("; ")),
        None,
    );
}

/// The point standing for a level: the largest size for the last level (fewest LLC hits);
/// otherwise the middle of the level's undisturbed plateau points: those whose median is
/// within the detection's tolerance (15%) of the lowest median on the plateau. Another
/// tenant's burst on the shared last-level cache lifts whole points to DRAM latency (an L3
/// plateau of 12 ns read 22–74 ns at half its sizes in one run of 7 Dec 2026), and
/// interference only ever adds latency, so the points that kept the lowest value are the
/// level; the middle of all plateau points followed the disturbed ones (12 vs 34 ns).
fn representative(level: &Level, xs: &[u64], metrics: &[Metric], last: bool) -> Option<usize> {
    if last {
        return metrics.len().checked_sub(1);
    }
    let median = |i: usize| metrics[i].summary.median;
    let plateau: Vec<usize> = (0..metrics.len().min(xs.len()))
        .filter(|&i| xs[i] >= level.first_size && xs[i] <= level.last_size)
        .filter(|&i| median(i).is_finite())
        .collect();
    let lowest = plateau.iter().map(|&i| median(i)).reduce(f64::min)?;
    let ceiling = lowest * (1.0 + Config::default().tolerance);
    let mut still: Vec<usize> = plateau
        .into_iter()
        .filter(|&i| median(i) <= ceiling)
        .collect();
    still.sort_by(|&a, &b| median(a).total_cmp(&median(b)));
    still.get(still.len().saturating_sub(1) / 2).copied()
}

fn size_findings(
    out: &mut Measured,
    name: &str,
    (end, range): (u64, (u64, u64)),
    row: Option<&Row>,
    hypervisor: Option<&str>,
) {
    let Some(Row {
        sysfs: Some((level, size)),
        ratio: Some(ratio),
        agree,
        ..
    }) = row
    else {
        out.find(
            &format!("hierarchy.{name}.size_bytes"),
            format!(
                "{name} ends {} but sysfs lists no cache of about that size: an extra \
                 step (a TLB's reach, or a cache the kernel does not report).",
                between(range)
            ),
            Some(end as f64),
        );
        return;
    };
    let verdict = if *agree {
        "agree: inside or next to the range"
    } else {
        "DISAGREE: outside the range"
    };
    out.find(
        &format!("hierarchy.{name}.size_bytes"),
        format!(
            "{name} ends {} (middle {}), sysfs says {} ({verdict}; middle {ratio:.2}x).",
            between(range),
            units::size(end),
            units::size(*size)
        ),
        Some(end as f64),
    );
    if !agree {
        disagreement(out, *level, range, *size, *ratio, hypervisor);
    }
}

fn disagreement(
    out: &mut Measured,
    level: u32,
    range: (u64, u64),
    size: u64,
    r: f64,
    vm: Option<&str>,
) {
    let why = match (r < 1.0, vm) {
        (true, Some(h)) => format!(
            "this guest gets only a slice of it — under a hypervisor ({h}) the host shares the \
             cache with other guests' cores or partitions it, and sysfs reports the physical \
             size, not this VM's share"
        ),
        (true, None) => "the usable share is smaller: other cores' working sets share it, or \
             over-full sets (4 KiB page colours in a physically indexed cache) evict lines early"
            .to_string(),
        (false, _) => "a larger level beyond it (or a victim cache) still serves part of the \
             working set"
            .to_string(),
    };
    out.find(
        &format!("hierarchy.L{level}.disagreement"),
        format!(
            "L{level}: detected end {} ({r:.2}x the sysfs size {} at its middle) neither \
             contains nor adjoins the sysfs size: {why}.",
            between(range),
            units::size(size)
        ),
        Some(r),
    );
}

fn missing(out: &mut Measured, rows: &[Row], max: u64) {
    for r in rows.iter().filter(|r| r.detected.is_none()) {
        let Some((level, size)) = r.sysfs else {
            continue;
        };
        let why = if 2 * size > max {
            format!(
                "the largest working set ({}) is too small to pass it",
                units::size(max)
            )
        } else {
            "its latency is too close to a neighbouring level's (< 1.5x) to form a step".into()
        };
        out.find(
            &format!("hierarchy.L{level}.missing"),
            format!(
                "sysfs lists an L{level} of {}, but the latency curve shows no level ending \
                 near it: {why}.",
                units::size(size)
            ),
            Some(size as f64),
        );
    }
}

/// Why there is no DRAM level, when the curve ended inside a cache.
fn no_memory(out: &mut Measured, names: &[String], caches: &[(u32, u64)], max: u64) {
    let (Some(last), Some(&(level, size))) = (names.last(), caches.last()) else {
        return;
    };
    if last == "DRAM" {
        return;
    }
    out.find(
        "hierarchy.DRAM.missing",
        format!(
            "No DRAM latency: the largest working set ({}) is less than twice the L{level} \
             sysfs lists ({}), and the curve shows no level beyond one ending near it, so its \
             last level may still be that cache (see the budget finding, or raise --max-size).",
            units::size(max),
            units::size(size)
        ),
        Some(max as f64),
    );
}

fn minor_steps(out: &mut Measured, found: &Hierarchy) {
    for (k, s) in found.minor_steps.iter().enumerate() {
        out.find(
            &format!("hierarchy.minor_step.{k}"),
            format!(
                "A {:.2}x rise after {} is counted inside its level, not as a cache (levels \
                 must differ by at least 1.5x): typically a TLB's reach or over-full sets.",
                s.ratio,
                units::size(s.at_bytes)
            ),
            Some(s.at_bytes as f64),
        );
    }
}

/// The subtracted loop overhead, so the report says what was subtracted.
pub fn overhead(s: &Sampler, out: &mut Measured) {
    out.find(
        "loop_overhead_ns_per_load",
        format!(
            "Subtracted from every point: loop control {:.4} ns per load (the chase loop \
             without loads; one dec+jnz per 16 loads, which in fact overlaps the loads) and \
             the {:.0} ns timer pair spread over the sample's loads.",
            s.loop_ns, s.timer_ns
        ),
        Some(s.loop_ns),
    );
}

#[cfg(test)]
mod tests;
