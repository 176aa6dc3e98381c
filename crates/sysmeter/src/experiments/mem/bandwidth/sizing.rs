//! The working sets of `mem.bandwidth`: one inside each cache level sysfs describes, and
//! one in DRAM sized by what was measured and by the time budget, not by a reported L3
//! alone. A guest of a large Intel Xeon reports a 480 MiB L3; 8 × that is 3.75 GiB, mapped
//! and written once for one thread and again for the team, in every round: 36.5 s of a
//! `--quick` run there. The samples stream 1 MiB chunks, so a metric's time is its sampling
//! budget whatever the set; what grows with the set is mapping it and writing it once. The
//! DRAM set is 4 × where `mem.latency`, earlier in the same run, saw its random chase come
//! within 20% of DRAM latency (8 × the sysfs L3 when it did not run), and at most what
//! [`DRAM_SHARE`] of the experiment's budget maps and writes at [`TOUCH_RATE`]. The chase
//! nears DRAM latency early, TLB misses adding to cache hits (at 5.5 MiB on a guest whose
//! measured L3 ends at 7-10 MiB), so a set up to that point may still be cache; 4 × past it
//! a stream is served by memory.

use std::time::Duration;

use super::{KIB, Level, MIB, data_cache, is_shared, round, size_label};
use crate::model::{ExperimentResult, HostInfo};

/// DRAM working set when the last-level cache size is unknown.
pub const DRAM_FALLBACK: usize = 256 * MIB;
/// Share of the experiment's time budget that mapping and writing the DRAM buffers may take
/// (the metrics' sampling budgets take the rest).
pub const DRAM_SHARE: f64 = 0.4;
/// Bytes per second a fresh buffer is mapped, faulted in and written once, assumed low: a
/// guest pays a nested page fault per page where transparent huge pages are off.
pub const TOUCH_RATE: f64 = 1e9;

/// The levels to measure and notes about how they were chosen.
pub struct Plan {
    pub levels: Vec<Level>,
    pub notes: Vec<(&'static str, String)>,
}

/// What bounds the DRAM working set besides the machine.
#[derive(Debug, Clone, Copy)]
pub struct Sizing {
    /// The experiment's time budget (`Ctx::time_budget`).
    pub budget: Duration,
    /// Where `mem.latency` saw the DRAM plateau begin in this run, bytes.
    pub dram_from: Option<u64>,
    /// Threads of the team (one per CPU; 1: no team).
    pub threads: usize,
}

impl Sizing {
    /// No time bound and nothing measured: the model estimates.
    pub fn unbounded() -> Sizing {
        Sizing {
            budget: Duration::MAX,
            dram_from: None,
            threads: 1,
        }
    }

    /// Buffers of the DRAM size each round writes: one thread's, then one per thread of the
    /// team (DRAM is not split between them, `Level::per_thread`).
    pub fn buffers(&self) -> f64 {
        match self.threads {
            0 | 1 => 1.0,
            n => 1.0 + n as f64,
        }
    }

    /// The largest DRAM set whose buffers are written within [`DRAM_SHARE`] of the budget.
    pub fn dram_cap(&self) -> usize {
        let bytes = self.budget.as_secs_f64() * DRAM_SHARE * TOUCH_RATE / self.buffers();
        if bytes >= usize::MAX as f64 {
            usize::MAX
        } else {
            bytes as usize
        }
    }
}

/// Where `mem.latency`'s windowed curve (earlier in this run) first came within 20% of the
/// DRAM latency it reported: the working set from which loads are served by memory.
pub fn dram_from(previous: &[ExperimentResult], series: &str) -> Option<u64> {
    let latency = previous.iter().find(|r| r.id == "mem.latency")?;
    let dram = latency
        .metrics
        .iter()
        .find(|m| m.name == "DRAM latency")?
        .summary
        .median;
    let curve = latency.series.iter().find(|s| s.name == series)?;
    curve
        .points
        .iter()
        .find(|p| p.summary.median >= 0.8 * dram)
        .map(|p| p.x as u64)
}

/// Choose a working set inside each level: half of L1d and of L2 (room for the stack, page
/// tables and the other half of copy's pair), a quarter of L3 (at least twice L2, so it
/// does not fit in L2), and DRAM (see the module), capped by `--max-size` and a quarter of
/// the available memory.
pub fn plan(host: &HostInfo, max_size: Option<u64>, sizing: &Sizing) -> Plan {
    let cap = max_size.map_or(usize::MAX, |m| m as usize);
    let mut plan = Plan {
        levels: cache_levels(host, cap),
        notes: Vec::new(),
    };
    dram_level(host, cap, sizing, &mut plan);
    plan
}

fn cache_levels(host: &HostInfo, cap: usize) -> Vec<Level> {
    let mut levels = Vec::new();
    let mut below = 0usize;
    for (lvl, label, fraction) in [(1, "L1", 2), (2, "L2", 2), (3, "L3", 4)] {
        let Some(c) = data_cache(host, lvl) else {
            continue;
        };
        let cache = c.size_bytes as usize;
        let mut size = round(cache / fraction);
        if size < 2 * below {
            size = round(cache / 2);
        }
        if size >= 2 * below && size <= cap {
            levels.push(Level {
                label,
                size,
                shared: is_shared(c),
            });
        }
        below = cache;
    }
    levels
}

/// The DRAM level, or the note that says why there is none.
fn dram_level(host: &HostInfo, cap: usize, sizing: &Sizing, plan: &mut Plan) {
    let Plan { levels, notes } = plan;
    let llc = host.caches.iter().map(|c| c.size_bytes as usize).max();
    // Up to where the chase neared DRAM latency may still be cache (module doc); 4 × past it.
    let edge = match sizing.dram_from {
        Some(from) => from as usize,
        None => llc.unwrap_or(0),
    };
    let want = match (sizing.dram_from, llc) {
        (Some(from), _) => 4 * from as usize,
        (None, Some(l)) => 8 * l,
        (None, None) => DRAM_FALLBACK,
    };
    if sizing.dram_from.is_none() && llc.is_none() {
        notes.push((
            "dram_size_assumed",
            "The cache sizes are unknown (no sysfs cache description), so DRAM is measured \
             over 256 MiB."
                .to_string(),
        ));
    }
    let avail = match host.memory.available_bytes as usize {
        0 => usize::MAX,
        a => a / 4,
    };
    let allowed = want.min(cap).min(avail);
    let size = match allowed.min(sizing.dram_cap()) {
        s if s >= 2 * MIB => s / MIB * MIB,
        s => round(s.max(4 * KIB)),
    };
    let why = why_capped(sizing, allowed, size);
    let text = if size <= edge {
        let from = match sizing.dram_from {
            Some(_) => "where mem.latency's chase reached DRAM latency",
            None => "the last-level cache sysfs lists",
        };
        format!(
            "DRAM not measured: {why}, and that is within {from} ({}).",
            size_label(edge)
        )
    } else {
        levels.push(Level {
            label: "DRAM",
            size,
            shared: true,
        });
        format!(
            "The DRAM working set is {} instead of {}: {why}; part of it may be served by \
             the cache, so DRAM figures may read high.",
            size_label(size),
            size_label(want)
        )
    };
    // Rounding to whole MiB is not a cap worth a note.
    if allowed.min(sizing.dram_cap()) < want {
        notes.push(("dram_size_capped", text));
    }
}

/// What capped the DRAM set at `size`: the time budget, or `--max-size` and the memory.
fn why_capped(sizing: &Sizing, allowed: usize, size: usize) -> String {
    if sizing.dram_cap() < allowed {
        format!(
            "the time budget ({:.1} s for this experiment) allows {} of buffer",
            sizing.budget.as_secs_f64(),
            size_label(size)
        )
    } else {
        "--max-size or a quarter of the available memory caps it".to_string()
    }
}
