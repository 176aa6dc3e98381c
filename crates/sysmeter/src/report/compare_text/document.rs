//! The JSON document of `sysmeter compare --format json` (docs/json-schema.md) and the
//! verdict counts the text summary shares with it.
//!
//! Pure: serialises the comparison.

use serde::{Deserialize, Serialize};

use super::{COMPARE_SCHEMA, Difference, ReportError};
use crate::stats::compare::{
    CompareOptions, MetricComparison, RunComparison, Sides, Unmatched, Verdict,
};

/// Verdict counts of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counts {
    /// Metrics slower in B.
    pub slower: usize,
    /// Metrics faster in B.
    pub faster: usize,
    /// Metrics compared without a significant change.
    pub no_change: usize,
    /// Neutral metrics (counts, sizes) higher in B.
    pub higher: usize,
    /// Neutral metrics lower in B.
    pub lower: usize,
    /// Metrics both runs have that could not be compared.
    pub not_compared: usize,
    /// Metrics that fail `--fail-above`.
    pub regressions: usize,
    /// Metrics slower only because the machine was: no change after normalising.
    pub machine_slower: usize,
    /// Metrics faster only because the machine was.
    pub machine_faster: usize,
    /// Metrics slower while B's core was shared more (throughput probe): not judged.
    #[serde(default)]
    pub machine_busier: usize,
    /// Metrics faster while A's core was shared more: not judged.
    #[serde(default)]
    pub machine_quieter: usize,
}

pub(super) fn counts(cmp: &RunComparison) -> Counts {
    let not_compared = cmp
        .metrics
        .iter()
        .filter(|m| m.comparison.is_none())
        .count();
    Counts {
        slower: cmp.count(Verdict::Slower),
        faster: cmp.count(Verdict::Faster),
        no_change: cmp.count(Verdict::NoChange) - not_compared,
        higher: cmp.count(Verdict::Higher),
        lower: cmp.count(Verdict::Lower),
        not_compared,
        regressions: cmp.regressions().count(),
        machine_slower: cmp.count(Verdict::MachineSlower),
        machine_faster: cmp.count(Verdict::MachineFaster),
        machine_busier: cmp.count(Verdict::MachineBusier),
        machine_quieter: cmp.count(Verdict::MachineQuieter),
    }
}

/// The JSON document of `compare --format json` (docs/json-schema.md): the comparison plus
/// the differences and counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareDocument {
    /// Version of this document ([`COMPARE_SCHEMA`]).
    pub schema: u32,
    /// The runs compared and their machines (the same fields as the comparison's).
    #[serde(flatten)]
    pub sides: Sides,
    /// Machine fields that differ.
    pub machine_differences: Vec<Difference>,
    /// Run settings that differ.
    pub run_differences: Vec<Difference>,
    /// Thresholds and bootstrap settings.
    pub options: CompareOptions,
    /// `--fail-above` as a fraction.
    pub fail_above: Option<f64>,
    /// Verdict counts.
    pub summary: Counts,
    /// Every metric both runs measured.
    pub metrics: Vec<MetricComparison>,
    /// What only A measured.
    pub only_in_a: Vec<Unmatched>,
    /// What only B measured.
    pub only_in_b: Vec<Unmatched>,
}

pub(super) fn json(
    cmp: &RunComparison,
    machine_differences: Vec<Difference>,
    run_differences: Vec<Difference>,
) -> Result<String, ReportError> {
    let doc = CompareDocument {
        schema: COMPARE_SCHEMA,
        sides: cmp.sides.clone(),
        machine_differences,
        run_differences,
        options: cmp.options,
        fail_above: cmp.fail_above,
        summary: counts(cmp),
        metrics: cmp.metrics.clone(),
        only_in_a: cmp.only_in_a.clone(),
        only_in_b: cmp.only_in_b.clone(),
    };
    let mut out = serde_json::to_string_pretty(&doc).map_err(|source| ReportError::Json {
        run: format!("{} vs {}", cmp.sides.a.id, cmp.sides.b.id),
        source,
    })?;
    out.push('\n');
    Ok(out)
}
