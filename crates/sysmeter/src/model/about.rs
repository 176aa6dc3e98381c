//! What an experiment says of itself before it measures: what it measures and how
//! ([`About`]: title, what, the timing model, references) and what a model of the machine
//! predicts ([`Estimate`]), as every result carries them; an experiment's [`About`] is read
//! from its Markdown page ([`page`]). Depends only on `run::Unit`.

pub mod page;

use serde::{Deserialize, Serialize};

use super::run::Unit;

/// What an experiment measures and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct About {
    /// Short title.
    pub title: String,
    /// What it measures.
    pub measures: String,
    /// The methodology: exactly what is inside the timed interval and what is subtracted.
    pub methodology: String,
    /// Where the method comes from.
    pub references: Vec<String>,
}

impl About {
    /// An experiment's description from its four parts.
    pub fn new(
        title: impl Into<String>,
        measures: impl Into<String>,
        methodology: impl Into<String>,
        references: &[&str],
    ) -> Self {
        Self {
            title: title.into(),
            measures: measures.into(),
            methodology: methodology.into(),
            references: references.iter().map(|r| r.to_string()).collect(),
        }
    }
}

/// A model-based prediction of a metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// Metric name it predicts (matches [`super::Metric::name`]).
    pub metric: String,
    /// Predicted value in the metric's unit.
    pub value: f64,
    /// Unit.
    pub unit: Unit,
    /// How the value was derived.
    pub basis: String,
}
