//! The plan of one `mem.latency` run — working sets, points per octave, samples — sized to
//! the experiment's time budget (`Ctx::time_budget`), not to the last-level cache sysfs
//! reports alone: a guest of a large Intel Xeon reports a 480 MiB L3 (the host's, shared
//! with every other tenant), and sizing from it made `--quick` take 56 s there. Sysfs says
//! how far the curve should reach (16 × its L3 by default, 4 × quick); the budget says how
//! far it can: the largest working set is the largest power of two whose chains — built
//! at the cost per element measured on this machine just before (`link_ns`) — and takes fit
//! [`PLANNED_SHARE`] of the budget. The fine re-measurement around the level ends spends
//! what is left, checked as it goes ([`Plan::affordable`]).

use std::time::{Duration, Instant};

use sysmeter_sys::chase::ChaseBuffer;

use super::points::{self, Order, Sampler, sizes, thinned};
use super::{KIB, MIB, findings};
use crate::harness::{Ctx, Measured, Profile};
use crate::model::{HostInfo, units};

/// Largest working set unless `--max-size` says otherwise.
pub const DEFAULT_CAP: u64 = 512 * MIB;
/// Share of the time budget the coarse curve and the side series are planned for.
pub const PLANNED_SHARE: f64 = 0.7;
/// A machine-state probe before a take of the windowed curve (≈ 0.2 ms), with margin, ns.
const PROBE_NS: f64 = 300_000.0;
/// A warm-up pass's cost per load, assumed high (a DRAM load): small chains warm in a pass.
const WARM_LOAD_NS: f64 = 100.0;
/// Working set of the pilot chain whose build is timed (`link_ns`).
const PILOT_BYTES: u64 = 16 * MIB;

/// What one run measures.
pub struct Plan {
    pub max: u64,
    pub line: usize,
    pub windowed_per_octave: u64,
    /// Points per octave of the fine re-measurement around candidate boundaries.
    pub fine_per_octave: u64,
    /// At most this many fine sizes in all.
    pub max_fine: usize,
    /// Extra passes over the last level's edge (see `refine::last_edge`).
    pub edge_passes: usize,
    pub random_per_octave: u64,
    pub stride_per_octave: u64,
    pub strides: &'static [usize],
    pub sampler: Sampler,
    /// Samples per point of the random and stride series.
    pub side_samples: usize,
    /// Beyond this size (4 × the last-level cache sysfs names, at most 128 MiB) the coarse
    /// windowed and the random series keep one size per octave: DRAM's plateau needs a few
    /// points, and its chains are the costliest to build (`u64::MAX`: no thinning).
    pub thin_beyond: u64,
    /// Measured cost of ordering and linking one chain element, ns.
    pub link_ns: f64,
    /// The experiment's time budget and when it started.
    pub budget: Duration,
    pub started: Instant,
    /// The largest working set sysfs asked for, when the budget allowed less.
    pub cut_from: Option<u64>,
}

/// The chains a plan builds and the takes it samples, before the fine stages.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Work {
    /// Chain elements ordered and linked (every series and pass).
    pub elements: u64,
    /// Takes sampled (one point of one pass).
    pub takes: u64,
    /// Bytes of chain built, summed over every chain.
    pub bytes: u64,
    /// Expected wall time of the takes (samples, warm-up, probe), ns.
    pub takes_ns: f64,
}

impl Work {
    fn add(&mut self, passes: u64, bytes: u64, elements: u64, take_ns: f64) {
        self.elements += passes * elements.max(1);
        self.bytes += passes * bytes;
        self.takes += passes;
        self.takes_ns += passes as f64 * take_ns;
    }
}

impl Plan {
    /// The coarse curve (two passes of half the samples) and the side series of this plan.
    pub fn work(&self) -> Work {
        let mut w = self.coarse_work();
        let side = self.side_work();
        w.elements += side.elements;
        w.takes += side.takes;
        w.bytes += side.bytes;
        w.takes_ns += side.takes_ns;
        w
    }

    /// The coarse windowed curve: two passes of half the samples.
    fn coarse_work(&self) -> Work {
        let coarse = thinned(
            sizes(4 * KIB, self.max, self.windowed_per_octave),
            self.thin_beyond,
        );
        let halves = self.sampler.samples.div_ceil(2);
        let line = self.line as u64;
        let mut w = Work::default();
        for &s in &coarse {
            w.add(2, s, s / line, self.take_ns(s / line, halves));
        }
        w
    }

    /// The side series (random, strides), measured after the fine stages.
    fn side_work(&self) -> Work {
        let random = thinned(
            sizes(4 * KIB, self.max, self.random_per_octave),
            self.thin_beyond,
        );
        let line = self.line as u64;
        let mut w = Work::default();
        for &s in &random {
            w.add(1, s, s / line, self.take_ns(s / line, self.side_samples));
        }
        for &stride in self.strides {
            for s in sizes(2 * stride as u64, self.max, self.stride_per_octave) {
                let n = s / stride as u64;
                w.add(1, s, n, self.take_ns(n, self.side_samples));
            }
        }
        w
    }

    /// Expected wall time of one take of `samples` samples over a chain of `elements`: the
    /// samples, the warm-up (a full pass, up to the profile's warm-up time) and a probe.
    fn take_ns(&self, elements: u64, samples: usize) -> f64 {
        samples as f64 * self.sampler.sample_ns
            + (elements as f64 * WARM_LOAD_NS).min(self.sampler.warm_ns)
            + PROBE_NS
    }

    /// Expected wall time of [`Plan::work`]: its takes, and its chain elements at the
    /// measured cost of one.
    pub fn planned(&self) -> Duration {
        self.duration_of(&self.work())
    }

    fn duration_of(&self, w: &Work) -> Duration {
        Duration::from_nanos((w.takes_ns + w.elements as f64 * self.link_ns) as u64)
    }

    /// The prefix of `sizes` (each measured `passes` times) that fits in what is left of the
    /// budget once the side series, still to come, are set aside: the fine stages stop
    /// where the budget ends, and the side series measured after them keep their time.
    pub fn affordable(&self, sizes: &[u64], passes: usize) -> Vec<u64> {
        let left = self
            .budget
            .saturating_sub(self.started.elapsed())
            .saturating_sub(self.duration_of(&self.side_work()))
            .as_nanos() as f64;
        let mut spent = 0.0;
        sizes
            .iter()
            .copied()
            .take_while(|&s| {
                let n = s / self.line as u64;
                let one = n as f64 * self.link_ns + self.take_ns(n, self.sampler.samples);
                spent += passes as f64 * one;
                spent <= left
            })
            .collect()
    }
}

impl Plan {
    /// The finding that says the budget cut the largest working set, if it did.
    pub fn note(&self, out: &mut Measured) {
        let Some(asked) = self.cut_from else {
            return;
        };
        out.find(
            "budget.max_size",
            format!(
                "The largest working set is {}, not the {} the cache sizes sysfs lists ask \
                 for: that is what this experiment's time budget ({:.1} s) allows at {:.0} ns \
                 to build each chain element here (--max-size sets it).",
                units::size(self.max),
                units::size(asked),
                self.budget.as_secs_f64(),
                self.link_ns
            ),
            Some(self.max as f64),
        );
    }
}

/// The plan of this run: the sampler from the profile and calibration, the cost of a chain
/// element timed on a pilot chain, then [`plan_for`].
pub fn plan(ctx: &Ctx<'_>) -> Plan {
    let share = if ctx.profile.name == "default" {
        0.5
    } else {
        1.0
    };
    let sampler = Sampler {
        samples: samples(ctx.profile).0,
        sample_ns: (ctx.profile.sample_target.as_nanos() as f64 * share)
            .max(ctx.calib.min_sample_ns),
        warm_ns: ctx.profile.warmup.as_nanos() as f64 * share,
        timer_ns: ctx.calib.timer_overhead_ns,
        loop_ns: points::loop_overhead_ns(ctx.calib.timer_overhead_ns),
    };
    let started = Instant::now();
    plan_for(
        ctx.profile,
        ctx.host,
        ctx.params.max_size,
        sampler,
        (ctx.time_budget(), started),
        link_ns(),
    )
}

/// (samples, side samples) per take. The default takes ~200 takes of 15 samples of half
/// its 1 ms sample each, where a take's best 5th percentile is what the levels are read
/// from; a 0.5 ms sample still holds 5 000 DRAM loads or 400 000 L1 loads.
fn samples(profile: &Profile) -> (usize, usize) {
    match profile.name {
        "quick" => (9, 9),
        "thorough" => (31, 31),
        _ => (15, 9),
    }
}

/// ns to order and link one element of a random chain over [`PILOT_BYTES`] (first touch of
/// its pages included); at least 2 ns, and 100 ns if the pilot cannot be built.
fn link_ns() -> f64 {
    let t0 = Instant::now();
    let built = ChaseBuffer::new(PILOT_BYTES as usize)
        .ok()
        .and_then(|mut b| {
            let o = points::order(Order::Random, PILOT_BYTES as usize, 64, 0x7069_6c6f);
            b.link(&o).ok().map(|_| o.len())
        });
    match built {
        Some(n) => (t0.elapsed().as_nanos() as f64 / n as f64).max(2.0),
        None => 100.0,
    }
}

/// The plan for `profile` on `host`, its largest working set the largest power of two that
/// sysfs asks for (16 × its last-level cache, 4 × quick; at least 64 MiB, 32 MiB quick) and
/// [`PLANNED_SHARE`] of `budget` allows, but never below 4 MiB past the smallest; an
/// explicit `max_size` is taken as given.
pub fn plan_for(
    profile: &Profile,
    host: &HostInfo,
    max_size: Option<u64>,
    sampler: Sampler,
    (budget, started): (Duration, Instant),
    link_ns: f64,
) -> Plan {
    let quick = profile.name == "quick";
    let thorough = profile.name == "thorough";
    let llc = findings::sysfs_caches(host).last().map_or(0, |c| c.1);
    let line = line_bytes(host);
    // DRAM only dominates once a random chain is many times the LLC (at 4x, a quarter of
    // the loads still hit it), so the default asks for 16x; quick settles for 4x.
    let floor = if quick { 32 * MIB } else { 64 * MIB };
    let want = (llc * if quick { 4 } else { 16 }).max(floor);
    let avail = host.memory.available_bytes;
    let limit = |m: u64| if avail > 0 { m.min(avail / 4) } else { m };
    let (_, side_samples) = samples(profile);
    let (per, fine, edge_passes) = match profile.name {
        "quick" => ([4, 1, 1], (8, 24), 2),
        "thorough" => ([8, 4, 2], (16, 96), 4),
        _ => ([4, 2, 1], (8, 48), 2),
    };
    let mut plan = Plan {
        max: limit(
            max_size.map_or(want.next_power_of_two().min(DEFAULT_CAP), |m| {
                m.max(8 * KIB)
            }),
        ),
        line,
        windowed_per_octave: per[0],
        fine_per_octave: fine.0,
        max_fine: fine.1,
        edge_passes,
        random_per_octave: per[1],
        stride_per_octave: per[2],
        side_samples,
        thin_beyond: match (llc, thorough) {
            (0, _) | (_, true) => u64::MAX,
            _ => (4 * llc).min(128 * MIB),
        },
        strides: match (quick, thorough) {
            (true, _) => &[64, 4096],
            (_, true) => &[64, 128, 256, 512, 1024, 2048, 4096],
            _ => &[64, 256, 1024, 4096],
        },
        sampler,
        link_ns,
        budget,
        started,
        cut_from: None,
    };
    if max_size.is_none() {
        fit(&mut plan, limit(floor));
    }
    plan
}

/// The cache line sysfs names (64 B when it names none), the chains' element spacing.
fn line_bytes(host: &HostInfo) -> usize {
    host.caches
        .iter()
        .find_map(|c| c.line_bytes)
        .map_or(64, |l| l as usize)
        .clamp(8, 4096)
}

/// Halve the largest working set until the planned work fits [`PLANNED_SHARE`] of the
/// budget, not below `floor`.
fn fit(plan: &mut Plan, floor: u64) {
    let asked = plan.max;
    let allowed = plan.budget.mul_f64(PLANNED_SHARE);
    while plan.max / 2 >= floor && plan.planned() > allowed {
        plan.max /= 2;
    }
    if plan.max < asked {
        plan.cut_from = Some(asked);
    }
}

#[cfg(test)]
mod tests;
