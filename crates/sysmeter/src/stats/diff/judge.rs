//! The 95% interval of one key's change between two sides of rounds, and its verdict: the
//! sampling interval from the counted events, the between-round interval from the spread of
//! the per-round values (Welch), the wider of the two (see `stats::diff`). Pure.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::KeyVerdict;
use crate::model::tally::Cell;
use crate::stats::compare::sets::mean_var;

/// The normal quantile of a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

/// One round's value of a key: the value, the events behind it (if counted) and what the
/// round is normalised by.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Obs {
    /// The raw value.
    pub value: f64,
    /// The events it sums, when counted.
    pub events: Option<f64>,
    /// What it is divided by.
    pub norm: f64,
}

impl Obs {
    /// The observation of `cell` (`None`: the key is absent from the round, a zero with no
    /// events when the table counts events) under `norm`.
    pub fn of(cell: Option<Cell>, counted: bool, norm: f64) -> Obs {
        let cell = cell.unwrap_or(Cell {
            value: 0.0,
            events: counted.then_some(0.0),
        });
        Obs {
            value: cell.value,
            events: cell.events,
            norm,
        }
    }
}

/// Where an interval came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// The counted events of the rounds (binomial or Poisson).
    Samples,
    /// The spread between rounds (Welch's t).
    Rounds,
    /// Neither: the values were not counted and each side is one round.
    None,
}

impl Basis {
    /// How the pages and the JSON say it.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Samples => "samples",
            Basis::Rounds => "rounds",
            Basis::None => "none",
        }
    }
}

/// Both sides' normalised values over their rounds and the 95% interval of `b − a`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    /// A's value over its rounds.
    pub a: f64,
    /// B's value over its rounds.
    pub b: f64,
    /// Low end of the 95% interval of `b − a`.
    pub low: f64,
    /// High end.
    pub high: f64,
    /// Which noise bounded it (the wider).
    pub basis: Basis,
}

impl Interval {
    /// The verdict on the key whose rounds are `a` and `b`.
    pub fn verdict(&self, a: &[Obs], b: &[Obs]) -> KeyVerdict {
        let absent = |side: &[Obs]| side.iter().all(|o| o.value == 0.0);
        if self.basis == Basis::None {
            return KeyVerdict::Unjudged;
        }
        if self.low <= 0.0 && self.high >= 0.0 {
            return KeyVerdict::NoChange;
        }
        match (absent(a), absent(b), self.low > 0.0) {
            (true, _, _) => KeyVerdict::New,
            (_, true, _) => KeyVerdict::Gone,
            (_, _, true) => KeyVerdict::Grew,
            _ => KeyVerdict::Shrank,
        }
    }
}

/// A side pooled over its rounds: value / norm, the events (if every round counted them),
/// the norm.
fn pooled(side: &[Obs]) -> (f64, Option<f64>, f64) {
    let value: f64 = side.iter().map(|o| o.value).sum();
    let norm: f64 = side.iter().map(|o| o.norm).sum();
    let events = side.iter().map(|o| o.events).sum::<Option<f64>>();
    let x = if norm > 0.0 { value / norm } else { 0.0 };
    (x, events, norm)
}

/// The interval of the change of `b` against `a` (`share`: the values are shares of their
/// round's total, so a share's sampling noise is binomial rather than Poisson).
pub fn judge(a: &[Obs], b: &[Obs], share: bool) -> Interval {
    let ((xa, ea, na), (xb, eb, nb)) = (pooled(a), pooled(b));
    let d = xb - xa;
    // The mean size of one event, in raw units: a side without events borrows the other's.
    let size = |x: f64, e: Option<f64>, n: f64| e.filter(|e| *e > 0.0).map(|e| x * n / e);
    let (sa, sb) = (size(xa, ea, na), size(xb, eb, nb));
    let sampling = match (ea, eb) {
        (Some(ea), Some(eb)) => {
            let s_a = sa.or(sb).unwrap_or(1.0);
            let s_b = sb.or(sa).unwrap_or(1.0);
            let var = |x: f64, e: f64, n: f64, s: f64| {
                let binomial = if share {
                    (1.0 - x).clamp(0.0, 1.0)
                } else {
                    1.0
                };
                // An absent key counts as one event: zero events bound nothing.
                s * s * e.max(1.0) * binomial / (n * n).max(f64::MIN_POSITIVE)
            };
            let se = (var(xa, ea, na, s_a) + var(xb, eb, nb, s_b)).sqrt();
            Some((d - Z95 * se, d + Z95 * se))
        }
        _ => None,
    };
    let rounds = between_rounds(a, b).map(|(se, q)| (d - q * se, d + q * se));
    let width = |i: &Option<(f64, f64)>| i.map_or(-1.0, |(lo, hi)| hi - lo);
    let (basis, (low, high)) = match (sampling, rounds) {
        (None, None) => (Basis::None, (d, d)),
        (Some(s), None) => (Basis::Samples, s),
        (None, Some(r)) => (Basis::Rounds, r),
        (Some(s), Some(r)) if width(&Some(s)) >= width(&Some(r)) => (Basis::Samples, s),
        (_, Some(r)) => (Basis::Rounds, r),
    };
    Interval {
        a: xa,
        b: xb,
        low,
        high,
        basis,
    }
}

/// The standard error of the change from the per-round values and the t quantile of its
/// 95% interval; `None` unless a side has two rounds. A side of one round is taken to vary
/// as the other side's rounds do.
fn between_rounds(a: &[Obs], b: &[Obs]) -> Option<(f64, f64)> {
    let term = |side: &[Obs]| {
        let x: Vec<f64> = side
            .iter()
            .map(|o| if o.norm > 0.0 { o.value / o.norm } else { 0.0 })
            .collect();
        let n = x.len() as f64;
        (x.len() >= 2).then(|| {
            let var = mean_var(&x).1;
            (var, var / n, n - 1.0)
        })
    };
    let (se2, df) = match (term(a), term(b)) {
        (None, None) => return None,
        (Some((one, mean, df)), None) | (None, Some((one, mean, df))) => (one + mean, df),
        (Some((_, qa, da)), Some((_, qb, db))) => {
            let denom = qa * qa / da + qb * qb / db;
            let df = if denom > 0.0 {
                (qa + qb).powi(2) / denom
            } else {
                da + db
            };
            (qa + qb, df)
        }
    };
    let q = StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975);
    Some((se2.sqrt(), q))
}
