//! `sysmeter scale`: run a command at growing input sizes, time every run, fit its complexity
//! class and look for a knee.
//!
//! The command's `{n}` is replaced by each size; every size runs `repeat` times, all runs in
//! one seeded random order (so drift — another tenant warming up, a file cache filling —
//! spreads over all sizes instead of biasing the largest). One untimed warm-up run of the
//! smallest size loads the program into the page cache first. A run is timed from just
//! before the spawn to the moment the kernel reports the exit (see `child`): process
//! start-up is inside the interval and ends up in the fit's fixed cost b.
//!
//! This module measures ([`measure`]) and assembles the [`RunRecord`] ([`record`]); the fit
//! and the knee are `stats::fit`, and turning them into metrics, series and findings is
//! [`analyse`](fn@analyse). It touches the OS only through `child`; it never prints or stores.

mod analyse;
mod child;
mod findings;
pub mod text;

pub use analyse::analyse;

use std::time::Duration;

use crate::diagnose::observe::session::{self, Ended, SessionEnd, Watch};
use crate::model::{HostInfo, RunConfig, RunKind, RunRecord};

/// The placeholder replaced by the size in the command's arguments.
pub const PLACEHOLDER: &str = "{n}";

/// Which time of each run is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TimeBasis {
    /// Wall time from spawn to exit (the default): what a user waits.
    #[default]
    Wall,
    /// User + system CPU time of the child: steadier on a busy machine (waiting for a CPU
    /// does not count), but blind to I/O and sleeping.
    Cpu,
}

impl TimeBasis {
    /// `wall time` or `CPU time (user+sys)`.
    pub fn label(self) -> &'static str {
        match self {
            TimeBasis::Wall => "wall time",
            TimeBasis::Cpu => "CPU time (user+sys)",
        }
    }
}

/// Which statistic of each size's runs is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum FitStat {
    /// The median run (the default): the typical time.
    #[default]
    Median,
    /// The fastest run: steadier where interference only ever slows runs down (a busy or
    /// shared machine), at the price of describing the luckiest run.
    Min,
}

/// What to run and how.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleConfig {
    /// Program and arguments, with [`PLACEHOLDER`] in at least one argument.
    pub command: Vec<String>,
    /// Sizes, in any order, without duplicates.
    pub sizes: Vec<u64>,
    /// Timed runs per size.
    pub repeat: u32,
    /// Untimed runs of the smallest size first.
    pub warmup: u32,
    /// A run taking longer is killed and the measurement stops.
    pub timeout: Option<Duration>,
    /// Seed of the run order (and of the bootstrap statistics).
    pub seed: u64,
    /// Inherit stdout/stderr instead of discarding them.
    pub show_output: bool,
    /// Sizes to predict the time at.
    pub predict: Vec<u64>,
    /// The time that is fitted.
    pub basis: TimeBasis,
    /// The statistic of each size's runs that is fitted.
    pub stat: FitStat,
}

impl ScaleConfig {
    /// Checks what clap cannot: a placeholder, at least three sizes. The error says what to
    /// change.
    pub fn validate(&self) -> Result<(), String> {
        if self.command.is_empty() {
            return Err("no command given; write it after --, e.g. -- ./prog {n}".into());
        }
        if !self.command.iter().any(|a| a.contains(PLACEHOLDER)) {
            return Err(format!(
                "the command has no {PLACEHOLDER} placeholder, so every size would run the \
                 same thing; put {PLACEHOLDER} where the size goes, e.g. -- ./prog {PLACEHOLDER}"
            ));
        }
        if self.sizes.len() < crate::stats::fit::MIN_SIZES {
            return Err(format!(
                "a complexity fit needs at least {} sizes but {} were given; add sizes to \
                 --sizes or widen --range",
                crate::stats::fit::MIN_SIZES,
                self.sizes.len()
            ));
        }
        Ok(())
    }

    /// The command for size `n`: every `{n}` in every argument replaced.
    pub fn argv(&self, n: u64) -> Vec<String> {
        let n = n.to_string();
        self.command
            .iter()
            .map(|a| a.replace(PLACEHOLDER, &n))
            .collect()
    }

    /// The command as one line for people, `{n}` left in.
    pub fn command_line(&self) -> String {
        self.command.join(" ")
    }
}

/// One timed run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSample {
    /// Its size.
    pub size: u64,
    /// Position in the run order (0-based, warm-up not counted).
    pub order: usize,
    /// Wall time from spawn to exit, ns.
    pub wall_ns: f64,
    /// User CPU time of the child, ns.
    pub user_ns: f64,
    /// System CPU time of the child, ns.
    pub system_ns: f64,
    /// Peak RSS of the child, KiB.
    pub max_rss_kib: u64,
}

/// Why the measurement stopped before the plan was done.
#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    /// Ctrl-C (SIGINT/SIGTERM).
    Interrupted,
    /// A run failed (exit status, signal, timeout); the text says which and what to do.
    Failed(String),
}

/// Everything measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measured {
    /// Finished runs in run order.
    pub runs: Vec<RunSample>,
    /// Runs planned (sizes × repeat).
    pub planned: usize,
    /// Why it stopped early, if it did.
    pub stop: Option<Stop>,
    /// Wall time of the whole session (warm-up included) and sysmeter's own CPU time in it
    /// (not the command's: a child's time is not the process's), ns.
    pub watched: (u64, u64),
}

/// The command could not be started at all (a usage problem, not a measurement).
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot run '{program}': {source}; check the path (or PATH) and that the file is executable"
)]
pub struct SpawnError {
    /// The program.
    pub program: String,
    /// Why.
    pub source: std::io::Error,
}

/// The run order: every size `repeat` times, shuffled with `seed`.
pub fn plan(sizes: &[u64], repeat: u32, seed: u64) -> Vec<u64> {
    let mut order: Vec<u64> = sizes
        .iter()
        .flat_map(|&n| std::iter::repeat_n(n, repeat as usize))
        .collect();
    fastrand::Rng::with_seed(seed).shuffle(&mut order);
    order
}

/// Warm up, then run the plan, calling `progress(done, total, size)` before each timed run.
/// Stops at the first failed run or at Ctrl-C, keeping what finished.
pub fn measure(
    cfg: &ScaleConfig,
    progress: &mut dyn FnMut(usize, usize, u64),
) -> Result<Measured, SpawnError> {
    let order = plan(&cfg.sizes, cfg.repeat, cfg.seed);
    let watch = Watch::start();
    let mut out = Measured {
        planned: order.len(),
        ..Measured::default()
    };
    let smallest = cfg.sizes.iter().copied().min().unwrap_or(1);
    let warmups = std::iter::repeat_n(None, cfg.warmup as usize);
    let timed = order.iter().enumerate().map(|(i, &n)| Some((i, n)));
    for step in warmups.chain(timed) {
        if sysmeter_sys::signal::interrupted() {
            out.stop = Some(Stop::Interrupted);
            break;
        }
        let (index, size) = step.unwrap_or((usize::MAX, smallest));
        if step.is_some() {
            progress(index, order.len(), size);
        }
        let ran = match child::run_once(cfg, size) {
            Ok(ran) => ran,
            // A command that never starts is a usage problem; one that stops starting
            // halfway (out of processes or memory) is a failed measurement.
            Err(e) if out.runs.is_empty() => return Err(e),
            Err(e) => {
                out.stop = Some(Stop::Failed(e.to_string()));
                break;
            }
        };
        match ran {
            Ok(t) if step.is_some() => out.runs.push(RunSample { order: index, ..t }),
            Ok(_) => {}
            Err(why) => {
                out.stop = Some(if sysmeter_sys::signal::interrupted() {
                    Stop::Interrupted
                } else {
                    Stop::Failed(why.describe(cfg, size, step.map(|(i, _)| (i, order.len()))))
                });
                break;
            }
        }
    }
    out.watched = watch.read();
    Ok(out)
}

/// The run record of one `scale` invocation, with its single result.
pub fn record(
    cfg: &ScaleConfig,
    host: HostInfo,
    started_ns: i64,
    finished_ns: i64,
    measured: &Measured,
) -> RunRecord {
    let interrupted = measured.stop == Some(Stop::Interrupted);
    let config = RunConfig {
        profile: "scale".into(),
        cpu: None,
        selected: vec![cfg.command_line()],
        target_ci_width: 0.0,
        calibration: None,
        seed: cfg.seed,
    };
    let mut run = RunRecord::new(RunKind::Scale, started_ns, host, config);
    run.finished_ns = (!interrupted).then_some(finished_ns);
    run.interrupted = interrupted;
    let mut result = analyse(cfg, measured);
    result.session = Some(session_end(measured));
    run.results = vec![result];
    run
}

/// The one end of the whole session (a `scale` run has one result for all its sizes): Ctrl-C
/// is `interrupted`, anything else — every run done, or a failed run that stopped the rest,
/// said by its finding — `finished`. No exit code: the command ran many times; nothing
/// travels through a ring, so nothing is lost.
fn session_end(measured: &Measured) -> SessionEnd {
    let ended = match measured.stop {
        Some(Stop::Interrupted) => Ended::Interrupted,
        _ => Ended::Finished,
    };
    session::end(ended, None, measured.watched, 0, None)
}

#[cfg(test)]
mod tests;
