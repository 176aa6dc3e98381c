//! The comparison of two diagnosis runs key by key (`compare` of two `profile`, `alloc`,
//! `locks`, `trace` or `calls` runs): per table of a round's tally (`model::tally`: samples
//! per stack and per function, bytes per heap site, waits per lock site, calls per system
//! call) both sides' values, the change, its 95% interval and a verdict.
//!
//! Two noises bound a change, and the wider interval is kept ([`judge`]): the sampling noise
//! of one round, from the counted events behind each value (a count of events is Poisson,
//! its share of all of them binomial; a value that sums events of mean size s has the
//! variance s² per event), and the spread between rounds when a side has several (Welch's
//! t on the per-round values). A verdict other than "no change" is given only when the
//! interval excludes zero; a key absent from every round of one side is then "new" or
//! "gone". A table of values that were not counted (off-CPU time per stack) has no sampling
//! noise: with one round per side it is "unjudged".
//!
//! Pure: depends on `model` and `statrs` only.

mod judge;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use serde::Serialize;

use crate::model::Unit;
use crate::model::tally::{Table, Tally, with_functions};

pub use judge::{Interval, Obs, judge};

/// What every value is divided by before the sides are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Normalise {
    /// As counted in one run of the command (the default when every round saw a launched
    /// command from start to exit).
    Run,
    /// Per second of wall time observed (the default when a round was attached with `-p` or
    /// cut by `--duration`).
    Wall,
    /// As a share of the table's total in its round (samples of all stacks, all bytes).
    Total,
}

impl Normalise {
    /// How the pages say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Normalise::Run => "per run of the command",
            Normalise::Wall => "per second of wall time",
            Normalise::Total => "as a share of the total",
        }
    }
}

/// The verdict on one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyVerdict {
    /// Larger in B, beyond the noise.
    Grew,
    /// Smaller in B, beyond the noise.
    Shrank,
    /// Within the noise.
    NoChange,
    /// Absent from every round of A, beyond the noise in B.
    New,
    /// Absent from every round of B, beyond the noise in A.
    Gone,
    /// Neither side carries a noise to judge by (values not counted, one round each).
    Unjudged,
}

impl KeyVerdict {
    /// How the pages and the JSON say it.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyVerdict::Grew => "grew",
            KeyVerdict::Shrank => "shrank",
            KeyVerdict::NoChange => "no change",
            KeyVerdict::New => "new",
            KeyVerdict::Gone => "gone",
            KeyVerdict::Unjudged => "unjudged",
        }
    }

    /// Whether the change is beyond the noise.
    pub fn is_change(self) -> bool {
        !matches!(self, KeyVerdict::NoChange | KeyVerdict::Unjudged)
    }
}

/// One key (stack, function, site, call) of one table compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyChange {
    /// The stack (`a;b;c`), function, site or call.
    pub key: String,
    /// A's value, normalised, over its rounds.
    pub a: f64,
    /// B's value, normalised, over its rounds.
    pub b: f64,
    /// `b − a`.
    pub change: f64,
    /// The change's 95% interval and where it came from.
    pub interval: Interval,
    /// The verdict.
    pub verdict: KeyVerdict,
}

impl KeyChange {
    /// The change relative to A (`None` when A is zero).
    pub fn relative(&self) -> Option<f64> {
        (self.a > 0.0).then(|| self.change / self.a)
    }

    /// Whether the key grew by more than `fraction` of A with its whole interval.
    pub fn grew_beyond(&self, fraction: f64) -> bool {
        self.verdict == KeyVerdict::Grew && self.a > 0.0 && self.interval.low / self.a > fraction
    }
}

/// One table compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableDiff {
    /// The table's name (`CPU samples per function (self)`).
    pub name: String,
    /// Unit of its raw values.
    pub unit: Unit,
    /// What the values were divided by.
    pub normalise: Normalise,
    /// Whether its keys are call stacks (what a differential flame graph is drawn from).
    pub stacks: bool,
    /// Changed keys first (largest change first), then the rest by size.
    pub keys: Vec<KeyChange>,
}

impl TableDiff {
    /// The keys beyond the noise.
    pub fn changed(&self) -> impl Iterator<Item = &KeyChange> {
        self.keys.iter().filter(|k| k.verdict.is_change())
    }
}

/// Two runs compared: the rounds of each side and every table both have.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagDiff {
    /// Rounds of side A (over every run of its set).
    pub rounds_a: usize,
    /// Rounds of side B.
    pub rounds_b: usize,
    /// Every table both sides have.
    pub tables: Vec<TableDiff>,
}

/// Compares the rounds `b` against `a`, every table by its name, normalised by `normalise`
/// or, when `None`, by [`Normalise::Run`] when every round of both saw the whole command,
/// else [`Normalise::Wall`].
pub fn diff(a: &[Tally], b: &[Tally], normalise: Option<Normalise>) -> DiagDiff {
    let whole = a.iter().chain(b).all(|t| t.whole);
    let normalise = normalise.unwrap_or(match whole {
        true => Normalise::Run,
        false => Normalise::Wall,
    });
    let tables_a: Vec<Vec<Table>> = a.iter().map(|t| with_functions(&t.tables)).collect();
    let tables_b: Vec<Vec<Table>> = b.iter().map(|t| with_functions(&t.tables)).collect();
    let names: Vec<(String, Unit, bool)> = match tables_a.first() {
        Some(first) => first
            .iter()
            .map(|t| (t.name.clone(), t.unit, t.stacks))
            .collect(),
        None => Vec::new(),
    };
    let tables = names
        .into_iter()
        .filter_map(|(name, unit, stacks)| {
            let side_a = side(a, &tables_a, &name, normalise)?;
            let side_b = side(b, &tables_b, &name, normalise)?;
            let keys = compare_keys(&side_a, &side_b, normalise == Normalise::Total);
            Some(TableDiff {
                name,
                unit,
                normalise,
                stacks,
                keys,
            })
        })
        .collect();
    DiagDiff {
        rounds_a: a.len(),
        rounds_b: b.len(),
        tables,
    }
}

/// One side's rounds of table `name` with each round's normaliser; `None` when a round lacks
/// the table.
fn side<'a>(
    tallies: &[Tally],
    tables: &'a [Vec<Table>],
    name: &str,
    normalise: Normalise,
) -> Option<Vec<(&'a Table, f64)>> {
    tallies
        .iter()
        .zip(tables)
        .map(|(tally, round)| {
            let t = round.iter().find(|t| t.name == name)?;
            let norm = match normalise {
                Normalise::Run => 1.0,
                Normalise::Wall => tally.wall_ns as f64 / 1e9,
                Normalise::Total => t.total(),
            };
            Some((t, norm))
        })
        .collect()
}

/// Every key of either side judged (`share`: the values are shares of their round's total),
/// sorted: changes first by the size of the change, then
/// the rest by their larger value.
fn compare_keys(a: &[(&Table, f64)], b: &[(&Table, f64)], share: bool) -> Vec<KeyChange> {
    let keys: BTreeSet<&String> = a.iter().chain(b).flat_map(|(t, _)| t.rows.keys()).collect();
    let counted = (a.iter().chain(b))
        .flat_map(|(t, _)| t.rows.values())
        .any(|c| c.events.is_some());
    let mut out: Vec<KeyChange> = keys
        .into_iter()
        .map(|key| {
            let obs = |side: &[(&Table, f64)]| -> Vec<Obs> {
                side.iter()
                    .map(|(t, norm)| Obs::of(t.rows.get(key).copied(), counted, *norm))
                    .collect()
            };
            let (oa, ob) = (obs(a), obs(b));
            let interval = judge(&oa, &ob, share);
            let verdict = interval.verdict(&oa, &ob);
            KeyChange {
                key: key.clone(),
                a: interval.a,
                b: interval.b,
                change: interval.b - interval.a,
                interval,
                verdict,
            }
        })
        .collect();
    out.sort_by(|x, y| {
        let size = |k: &KeyChange| match k.verdict.is_change() {
            true => (1, k.change.abs()),
            false => (0, k.a.max(k.b)),
        };
        size(y)
            .partial_cmp(&size(x))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    out
}
