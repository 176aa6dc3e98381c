//! A machine's between-run noise of one metric, learned from its stored runs: the spread of
//! the per-run value across the recent runs of the same host and profile. It is what a
//! comparison of two single runs lacks — the samples (and the rounds) of one run share the
//! machine's state of that moment and understate how far the next run will land — and it
//! bounds that side's variance from below in the between-run test (`sets::welch_log_with`).
//!
//! The per-run value is the median of the run's round medians (its median when it has no
//! rounds), the quantity the between-run test compares for a side judged on this noise. For
//! a metric that scales with the core clock, compared between runs that both carry the
//! probe, it is first brought to core cycles with each stored run's (round's) probe, so a
//! clock that drifted between the stored runs does not count as noise: a raw comparison is
//! only judged when the two clocks agree within the machine threshold, and a normalised one
//! has the clock divided out. Stored runs without the probe then do not count; without
//! probes on the compared runs the values are taken as measured.
//!
//! Pure: reads run records the caller loaded (`commands::compare`). Depends on the rest of
//! `stats::compare` and `model`.

use super::metric::{at_clock, gather};
use super::sets::{RunNoise, mean_var};
use crate::model::{Metric, RunRecord, Unit};
use crate::stats::normalise::Kind;

/// Fewest stored runs with the metric before their spread is used: with fewer, the sample
/// standard deviation is too uncertain to set a floor (4 degrees of freedom at 5).
pub const MIN_HISTORY_RUNS: usize = 5;
/// Most recent stored runs of a host and profile `compare` reads for the noise.
pub const HISTORY_RUNS: usize = 20;

/// Which metric, and whether its value is taken in core cycles.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wanted<'a> {
    pub experiment: &'a str,
    pub metric: &'a str,
    pub unit: Unit,
    pub in_cycles: bool,
}

impl Wanted<'_> {
    /// Metric `m` of `experiment`, in cycles when it scales with the clock.
    pub fn new<'a>(experiment: &'a str, m: &'a Metric, scales: bool) -> Wanted<'a> {
        Wanted {
            experiment,
            metric: &m.name,
            unit: m.unit,
            in_cycles: scales,
        }
    }
}

/// The runs of `history` that tell `run`'s noise: made on its host with its profile by the
/// same sysmeter version (another version may measure differently: the one that calibrated
/// the harness loop once per run moved calls by 30% between runs), other than the runs
/// compared (`compared`, by id); in `history`'s order (newest first). Chosen once per side.
pub(crate) fn stored_runs<'a>(
    history: &[&'a RunRecord],
    run: &RunRecord,
    compared: &[&str],
) -> Vec<&'a RunRecord> {
    (history.iter().copied())
        .filter(|h| {
            h.host.hostname == run.host.hostname
                && h.config.profile == run.config.profile
                && h.tool_version == run.tool_version
                && !compared.contains(&h.id.as_str())
        })
        .collect()
}

/// The between-run noise of `wanted` over the newest [`HISTORY_RUNS`] of `stored` (see
/// [`stored_runs`]) that measured it. `None` with fewer than [`MIN_HISTORY_RUNS`] of them.
pub(super) fn run_noise(stored: &[&RunRecord], wanted: Wanted<'_>) -> Option<RunNoise> {
    let mut logs: Vec<f64> = (stored.iter())
        .filter_map(|h| run_value_ln(h, wanted))
        .collect();
    logs.truncate(HISTORY_RUNS);
    if logs.len() < MIN_HISTORY_RUNS {
        return None;
    }
    let (_, var) = mean_var(&logs);
    Some(RunNoise {
        runs: logs.len(),
        sd_log: var.sqrt(),
    })
}

/// ln of one stored run's value of the metric (see the module documentation); `None` when
/// the run lacks the metric, or a probe where cycles are wanted.
pub(crate) fn run_value_ln(run: &RunRecord, w: Wanted<'_>) -> Option<f64> {
    let side = gather(&[run], w.experiment, w.metric, w.unit);
    if side.members.is_empty() {
        return None;
    }
    let mut values = Vec::with_capacity(side.members.len());
    for m in &side.members {
        let value = match w.in_cycles {
            false => m.median,
            // At 1 GHz: core cycles for a time, per cycle for a rate.
            true => at_clock(Kind::of(w.unit), m.median, m.ghz?, 1.0),
        };
        if !(value.is_finite() && value > 0.0) {
            return None;
        }
        values.push(value);
    }
    Some(crate::stats::median(&values).ok()?.ln())
}
