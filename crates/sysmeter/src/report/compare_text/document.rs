//! The JSON document of `sysmeter compare --format json` (docs/json-schema.md) and the
//! verdict counts the text summary shares with it.
//!
//! Pure: serialises the comparison.

use serde::{Deserialize, Serialize};

use super::{COMPARE_SCHEMA, Difference, ReportError};
use crate::stats::compare::{
    CompareOptions, MachineComparison, MetricComparison, RunComparison, RunSide, Unmatched, Verdict,
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
    /// The baseline run.
    pub a: RunSide,
    /// The candidate run.
    pub b: RunSide,
    /// Every run of side A when it is a set (absent for one run).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub a_set: Vec<RunSide>,
    /// Every run of side B when it is a set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub b_set: Vec<RunSide>,
    /// Speed B/A of the machine from the machine-state probes; null without probes.
    pub machine_ratio: Option<f64>,
    /// The probes of both sides; null when neither run has any.
    pub machine: Option<MachineComparison>,
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
        a: cmp.a.clone(),
        b: cmp.b.clone(),
        a_set: cmp.a_set.clone(),
        b_set: cmp.b_set.clone(),
        machine_ratio: cmp.machine_ratio,
        machine: cmp.machine.clone(),
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
        run: format!("{} vs {}", cmp.a.id, cmp.b.id),
        source,
    })?;
    out.push('\n');
    Ok(out)
}
