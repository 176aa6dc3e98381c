//! The table cells of a metric shared by the text and markdown renderers: the metric row,
//! series rows, notes (noise, outliers, subtracted overhead) and estimate lines. The numbers
//! in them come from [`crate::model::units`].
//!
//! Pure: strings from results; depends only on `model` and `stats` (for the CI width).

use crate::model::units::{cycles, duration_ns, percent, range, sig3, value};
use crate::model::{
    Estimate, ExperimentResult, IntervalBasis, Metric, RoundStats, RunRecord, Series, SeriesPoint,
    Summary, Unit,
};
use crate::stats::compare::history::MIN_HISTORY_RUNS;
use crate::stats::{ratio, relative_ci_width};

/// CV or relative CI width above which a metric is flagged as noisy.
pub const NOISY_THRESHOLD: f64 = 0.10;

/// Column headers of a metric table (text and markdown).
pub const METRIC_HEADERS: [&str; 6] = [
    "metric",
    "median",
    WITHIN_RUN_HEADER,
    "p99",
    "cycles",
    "notes",
];

/// Header of the within-run 95% CI of the median: how well this run's samples pin down this
/// run's median — not where the next run lands.
pub const WITHIN_RUN_HEADER: &str = "within-run 95% CI";

/// Header of the run-to-run interval (`Metric::run_to_run`): where the next run's median
/// should fall on this machine.
pub const RUN_TO_RUN_HEADER: &str = "run to run (next run, 95%)";

/// What the two interval columns are, printed under the tables that show them.
pub const INTERVALS_LEGEND: &str = "within-run 95% CI: of this run's median, from its samples; \
     run to run: where the next run's median should fall on this machine (95% prediction \
     interval over the stored runs of this host, else this run's rounds; \"this run only\" \
     when there are neither); range of rounds (with --rounds): the lowest to the highest \
     round median, around the median of rounds";

/// Shown instead of the median of a metric the harness flagged (`Metric::degenerate`).
pub const NOT_A_RESULT: &str = "not a result";

/// Shown where a value does not exist (no cycles for a non-time metric, ...).
pub const NONE: &str = "—";

/// Whether a summary is noisy: CV or relative CI width above [`NOISY_THRESHOLD`].
pub fn is_noisy(s: &Summary) -> bool {
    s.cv > NOISY_THRESHOLD || ci_width(s) > NOISY_THRESHOLD
}

fn ci_width(s: &Summary) -> f64 {
    relative_ci_width(s.ci95.0, s.ci95.1, s.median)
}

/// Whether a metric reads as noisy: its summary ([`is_noisy`]), or it is not a result.
pub fn metric_is_noisy(m: &Metric) -> bool {
    m.degenerate.is_some() || is_noisy(&m.summary)
}

/// Notes about a summary's quality: `noisy (CV 12%)` (or the CI width when that is what is
/// wide) and the outlier count.
fn quality_notes(s: &Summary, notes: &mut Vec<String>) {
    if s.cv > NOISY_THRESHOLD {
        notes.push(format!("noisy (CV {})", percent(s.cv)));
    } else if ci_width(s) > NOISY_THRESHOLD {
        notes.push(format!("noisy (CI width {})", percent(ci_width(s))));
    }
    match s.outliers {
        0 => {}
        1 => notes.push("1 outlier".to_string()),
        k => notes.push(format!("{k} outliers")),
    }
}

/// Subtracted overhead below this share of the median is left out of the notes: it cannot
/// change the reading (the exact amount is in every other format).
pub const OVERHEAD_NOTE_SHARE: f64 = 0.01;

/// The notes cell of a metric: its own note, noise flag, outliers, and the subtracted
/// overhead when it is a noticeable share of the result.
pub fn metric_notes(m: &Metric) -> String {
    let mut notes: Vec<String> = m
        .degenerate
        .iter()
        .map(|d| format!("not a result: {d}"))
        .collect();
    notes.extend(m.note.iter().cloned());
    quality_notes(&m.summary, &mut notes);
    let share = m.subtracted_overhead_ns / m.summary.median.abs().max(f64::MIN_POSITIVE);
    if m.subtracted_overhead_ns > 0.0 && share >= OVERHEAD_NOTE_SHARE {
        notes.push(format!(
            "−{} overhead subtracted",
            duration_ns(m.subtracted_overhead_ns)
        ));
    }
    notes.join("; ")
}

/// One estimate for people, with how the measurement compares when the experiment has a
/// metric of that name: `null (getppid) ≈ 40.8 ns (basis); measured 1.26× that`.
pub fn estimate_line(e: &Estimate, metrics: &[Metric]) -> String {
    let mut line = format!("{} ≈ {} ({})", e.metric, value(e.value, e.unit), e.basis);
    let measured = metrics
        .iter()
        .find(|m| m.name == e.metric && m.unit == e.unit);
    if let Some(r) = measured.and_then(|m| ratio(m.figure(), e.value)) {
        line.push_str(&format!("; measured {}× that", sig3(r)));
    }
    line
}

/// The one wall time of a run a header shows, with its word: a diagnosis's is the time its
/// session observed the program (`SessionEnd::wall_ns`, the "wall time" its key figures
/// give), not sysmeter's own start to end, which adds setup and symbolisation (issue 43:
/// "took 9.05 s" above "wall time 8.49 s"); a bench's is its start to end. `None` for a run
/// that did not finish.
pub fn wall_time(run: &RunRecord) -> Option<(&'static str, f64)> {
    let observed = run.results.iter().find_map(|r| r.session.as_ref());
    match (observed, run.finished_ns) {
        (Some(session), _) => Some(("observed", session.wall_ns as f64)),
        (None, Some(end)) => Some(("took", end.saturating_sub(run.started_ns) as f64)),
        (None, None) => None,
    }
}

/// [`wall_time`] as a header phrase: `took 41.3 s`, `observed 8.49 s`.
pub fn wall_time_phrase(run: &RunRecord) -> Option<String> {
    wall_time(run).map(|(word, ns)| format!("{word} {}", duration_ns(ns)))
}

/// What the machine-state probe judged over a run: the experiments it saw the machine move
/// in, and how many it probed. The one count the header, the glance and the HTML summary
/// give (issue 43: "unsteady in 10 of 24" above "10 of 19"): every result with a probe,
/// whatever its status.
pub fn probe_counts(run: &RunRecord) -> (Vec<&str>, usize) {
    let probed: Vec<&ExperimentResult> =
        run.results.iter().filter(|r| r.machine.is_some()).collect();
    let moving = probed
        .iter()
        .filter(|r| r.machine.as_ref().is_some_and(|m| !m.stable))
        .map(|r| r.id.as_str())
        .collect();
    (moving, probed.len())
}

fn cycles_cell(c: Option<&Summary>) -> String {
    c.map_or_else(|| NONE.to_string(), |c| cycles(c.median))
}

/// What the run-to-run intervals of `run` were computed from, in words; `None` when no
/// metric has one (a run of another kind, or rendered without them).
pub fn intervals_basis(run: &RunRecord) -> Option<String> {
    let all = (run.results.iter().flat_map(|r| &r.metrics)).filter_map(|m| m.run_to_run);
    let most = |basis| {
        (all.clone().filter(|i| i.basis == basis))
            .map(|i| i.runs)
            .max()
    };
    if let Some(n) = most(IntervalBasis::History) {
        return Some(format!(
            "run to run: from the {n} stored runs of this host, profile and version up to this one"
        ));
    }
    if let Some(n) = most(IntervalBasis::Rounds) {
        return Some(format!(
            "run to run: from this run's {n} rounds (fewer than {MIN_HISTORY_RUNS} stored runs of \
             this host, profile and version)"
        ));
    }
    most(IntervalBasis::ThisRun).map(|_| {
        "run to run: this run only (no stored runs or rounds), so every interval shown is the \
         within-run 95% CI of the median"
            .to_string()
    })
}

/// The cells of a metric's row, in [`METRIC_HEADERS`] order.
pub fn metric_cells(m: &Metric) -> [String; 6] {
    let s = &m.summary;
    [
        m.name.clone(),
        // A degenerate sample set has no value to quote; its CI shows why.
        match m.degenerate {
            Some(_) => NOT_A_RESULT.to_string(),
            None => m.shown(s.median),
        },
        range(s.ci95.0, s.ci95.1, m.unit),
        value(s.p99, m.unit),
        cycles_cell(m.cycles.as_ref()),
        metric_notes(m),
    ]
}

/// The metric table of an experiment: headers and one row per metric. Runs measured
/// without the machine-state probe or rounds get exactly [`METRIC_HEADERS`]. With the probe,
/// `cycles` becomes `TSC cycles` (ticks of the fixed-rate counter) and a `core cycles` column
/// follows (time × the probe's core clock during the experiment); with `--rounds`, the
/// median is the median of the round medians (`RoundStats::median`, the figure the record
/// says to quote), a `round CV` column follows it, and its interval is the range of the
/// round medians ([`ROUNDS_RANGE_HEADER`]): the within-run CI of the pooled samples is of
/// another median, the pooled one, and need not contain this one.
pub fn metric_table(metrics: &[Metric]) -> (Vec<String>, Vec<Vec<String>>) {
    let core = metrics.iter().any(|m| m.core_cycles.is_some());
    let rounds = metrics.iter().any(|m| m.rounds.is_some());
    let mut headers: Vec<String> = METRIC_HEADERS.map(str::to_string).to_vec();
    if core {
        headers[4] = "TSC cycles".to_string();
        headers.insert(5, "core cycles".to_string());
    }
    if rounds {
        headers[1] = "median of rounds".to_string();
        headers[2] = ROUNDS_RANGE_HEADER.to_string();
        headers.insert(2, "round CV".to_string());
    }
    let run_to_run = metrics.iter().any(|m| m.run_to_run.is_some());
    let after_ci = 3 + usize::from(rounds);
    if run_to_run {
        headers.insert(after_ci, RUN_TO_RUN_HEADER.to_string());
    }
    let rows = metrics
        .iter()
        .map(|m| {
            let mut cells = metric_cells(m).to_vec();
            if core {
                cells.insert(5, cycles_cell(m.core_cycles.as_ref()));
            }
            if rounds {
                let r = m.rounds.as_ref();
                cells[2] = r.map_or_else(|| NONE.to_string(), |r| rounds_range(r, m.unit));
                if let Some(r) = r.filter(|_| m.degenerate.is_none()) {
                    cells[1] = m.shown(r.median);
                }
                cells.insert(2, r.map_or_else(|| NONE.to_string(), |r| percent(r.cv)));
            }
            if run_to_run {
                let cell = m.run_to_run.as_ref().map(|i| i.cell(m.unit));
                cells.insert(after_ci, cell.unwrap_or_else(|| NONE.to_string()));
            }
            cells
        })
        .collect();
    let mut table = (headers, rows);
    let singles: Vec<bool> = metrics.iter().map(|m| m.summary.n == 1).collect();
    let no_cycles = metrics.iter().all(|m| m.cycles.is_none());
    single_observations(&mut table, &singles, no_cycles);
    table
}

/// Header of the interval beside the median of the round medians: from the lowest round
/// median to the highest, which always holds their median.
pub const ROUNDS_RANGE_HEADER: &str = "range of rounds";

/// The lowest and highest round median, as a range.
fn rounds_range(r: &RoundStats, unit: Unit) -> String {
    let lo = r.medians.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = r.medians.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    match lo <= hi {
        true => range(lo, hi, unit),
        false => NONE.to_string(),
    }
}

/// Header of the value column of a table of single observations.
pub const VALUE_HEADER: &str = "value";

/// A single observation (one sample: `run`'s real time, a fault count, a fitted
/// coefficient) has no spread: its CI and p99 would only repeat its value. In a table of
/// nothing else, those columns go, `median` reads `value`, and `cycles` goes when no row has
/// any; beside metrics with samples, its CI and p99 cells read `—`.
/// `single` says which rows are single observations; `no_cycles` that no row has cycles.
fn single_observations(
    table: &mut (Vec<String>, Vec<Vec<String>>),
    single: &[bool],
    no_cycles: bool,
) {
    let (headers, rows) = table;
    let column = |h: &[String], name: &str| h.iter().position(|x| x == name);
    let spread = [WITHIN_RUN_HEADER, "p99"].map(|name| column(headers, name));
    if single.is_empty() || !single.iter().all(|s| *s) {
        for (row, _) in rows.iter_mut().zip(single).filter(|(_, s)| **s) {
            for i in spread.iter().flatten() {
                row[*i] = NONE.to_string();
            }
        }
        return;
    }
    let cycles = column(headers, "cycles").filter(|_| no_cycles);
    let mut gone: Vec<usize> = spread.into_iter().chain([cycles]).flatten().collect();
    gone.sort_unstable_by(|a, b| b.cmp(a));
    for i in gone {
        headers.remove(i);
        rows.iter_mut().for_each(|row| {
            row.remove(i);
        });
    }
    if let Some(i) = column(headers, METRIC_HEADERS[1]) {
        headers[i] = VALUE_HEADER.to_string();
    }
}

/// One line on the machine's state around an experiment measured with the probe:
/// `machine: 3.69 GHz core clock, held still` or `machine UNSTABLE: <reason>` (and the number
/// of rounds whose machine moved, with `--rounds`).
pub fn machine_line(r: &ExperimentResult) -> Option<String> {
    let m = r.machine.as_ref()?;
    let clock = format!("{} GHz core clock", sig3(m.core_ghz()));
    let moved = r.round_machines.iter().filter(|x| !x.stable).count();
    let rounds = match r.round_machines.len() {
        0 | 1 => String::new(),
        n => format!(" · {moved} of {n} rounds on a moving machine"),
    };
    Some(match (&m.reason, m.stable) {
        (Some(reason), false) => format!("machine UNSTABLE ({clock}): {reason}{rounds}"),
        _ => format!("machine: {clock}, held still{rounds}"),
    })
}

/// Column headers of a series table: the x label instead of `metric`.
pub fn series_headers(series: &Series) -> [String; 6] {
    let mut headers = METRIC_HEADERS.map(str::to_string);
    headers[0] = series.x_label.clone();
    headers
}

/// The cells of one series point, in [`series_headers`] order.
pub fn point_cells(series: &Series, p: &SeriesPoint) -> [String; 6] {
    let s = &p.summary;
    let mut notes = Vec::new();
    quality_notes(s, &mut notes);
    [
        value(p.x, series.x_unit),
        value(s.median, series.y_unit),
        range(s.ci95.0, s.ci95.1, series.y_unit),
        value(s.p99, series.y_unit),
        cycles_cell(p.cycles.as_ref()),
        notes.join("; "),
    ]
}

/// The table of a series: [`series_headers`] and a row per point ([`point_cells`]), points
/// that are single observations shown as values (as in [`metric_table`]).
pub fn series_table(series: &Series) -> (Vec<String>, Vec<Vec<String>>) {
    let headers = series_headers(series).to_vec();
    let rows = (series.points.iter())
        .map(|p| point_cells(series, p).to_vec())
        .collect();
    let mut table = (headers, rows);
    let singles: Vec<bool> = series.points.iter().map(|p| p.summary.n == 1).collect();
    let no_cycles = series.points.iter().all(|p| p.cycles.is_none());
    single_observations(&mut table, &singles, no_cycles);
    table
}
