//! What an experiment measures and how ([`About`]): its title, what it measures, the timing
//! model and the references, as every result carries them. Depends on nothing.

use serde::{Deserialize, Serialize};

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
