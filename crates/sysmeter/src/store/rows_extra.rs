//! The two JSON columns added by schema 3, as plain values: a result's machine-state records
//! and, since issue 41, a diagnosis's session end (`results.machine_json`) and what a metric gained after schema 2 (`metrics.extra_json`).
//! Used by the row conversions of `rows.rs` only.

use serde::{Deserialize, Serialize};

use crate::model::{ExperimentResult, MachineState, Metric, RoundStats, SessionEnd, Summary};

/// The `results.machine_json` column (schema 3): a result's machine-state records.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct MachineColumn {
    #[serde(default)]
    pub machine: Option<MachineState>,
    #[serde(default)]
    pub round_machines: Vec<MachineState>,
    /// How a diagnosis session ended (added after schema 3 without a bump: absent before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<SessionEnd>,
}

impl MachineColumn {
    pub(super) fn of(r: &ExperimentResult) -> MachineColumn {
        MachineColumn {
            machine: r.machine.clone(),
            round_machines: r.round_machines.clone(),
            session: r.session.clone(),
        }
    }
}

/// The `metrics.extra_json` column (schema 3): what a metric gained after schema 2.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct MetricExtra {
    #[serde(default)]
    pub core_cycles: Option<Summary>,
    #[serde(default)]
    pub rounds: Option<RoundStats>,
    /// Why the samples are not a result (schema 3 column, added with the degenerate check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub degenerate: Option<String>,
    /// The value is a lower bound (`Metric::at_least`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub at_least: bool,
}

impl MetricExtra {
    pub(super) fn of(m: &Metric) -> MetricExtra {
        MetricExtra {
            core_cycles: m.core_cycles,
            rounds: m.rounds.clone(),
            degenerate: m.degenerate.clone(),
            at_least: m.at_least,
        }
    }
}
