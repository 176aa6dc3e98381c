//! The two JSON columns added by schema 3, as plain values: a result's machine-state records
//! (`results.machine_json`) and what a metric gained after schema 2 (`metrics.extra_json`).
//! Used by the row conversions of `rows.rs` only.

use serde::{Deserialize, Serialize};

use crate::model::{ExperimentResult, MachineState, Metric, RoundStats, Summary};

/// The `results.machine_json` column (schema 3): a result's machine-state records.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(super) struct MachineColumn {
    #[serde(default)]
    pub machine: Option<MachineState>,
    #[serde(default)]
    pub round_machines: Vec<MachineState>,
}

impl MachineColumn {
    pub(super) fn of(r: &ExperimentResult) -> MachineColumn {
        MachineColumn {
            machine: r.machine.clone(),
            round_machines: r.round_machines.clone(),
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
}

impl MetricExtra {
    pub(super) fn of(m: &Metric) -> MetricExtra {
        MetricExtra {
            core_cycles: m.core_cycles,
            rounds: m.rounds.clone(),
            degenerate: m.degenerate.clone(),
        }
    }
}
