//! [`MachineState`]: what is stored per experiment as `ExperimentResult.machine` (an additive
//! JSON schema change; the bar scripts read exactly these field names).
//!
//! Pure data and its assembly from the parts a [`super::Watch`] collects.

use serde::{Deserialize, Serialize};

use super::counters::Beside;
use super::judge::Verdict;
use super::sample::ProbeSample;

/// The machine's state around one experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MachineState {
    /// Effective core clock at the start, GHz (dependent multiply chain).
    pub core_ghz_start: f64,
    /// Effective core clock at the end, GHz.
    pub core_ghz_end: f64,
    /// Independent adds per ns at the start.
    pub throughput_start: f64,
    /// Independent adds per ns at the end.
    pub throughput_end: f64,
    /// Null system call at the start, ns.
    pub syscall_ns_start: f64,
    /// Null system call at the end, ns.
    pub syscall_ns_end: f64,
    /// Steal time on the measuring CPU during the experiment, ns (10 ms resolution).
    pub steal_ns: u64,
    /// Involuntary context switches of the measuring thread during the experiment.
    pub involuntary_switches: u64,
    /// Time the measuring thread waited on a run queue during the experiment, ns.
    pub runqueue_wait_ns: u64,
    /// Whether the machine held still (see `harness::machine::judge`).
    pub stable: bool,
    /// Why not, on one line; present only when `stable` is false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl MachineState {
    /// Assemble the record from the two probes, the counters' differences and the verdict.
    pub fn new(
        start: &ProbeSample,
        end: &ProbeSample,
        beside: &Beside,
        verdict: Verdict,
    ) -> MachineState {
        MachineState {
            core_ghz_start: start.core_ghz,
            core_ghz_end: end.core_ghz,
            throughput_start: start.throughput,
            throughput_end: end.throughput,
            syscall_ns_start: start.syscall_ns,
            syscall_ns_end: end.syscall_ns,
            steal_ns: beside.steal_ns,
            involuntary_switches: beside.involuntary_switches,
            runqueue_wait_ns: beside.runqueue_wait_ns,
            stable: verdict.stable,
            reason: if verdict.stable { None } else { verdict.reason },
        }
    }

    /// The probe at the start.
    pub fn start(&self) -> ProbeSample {
        ProbeSample {
            core_ghz: self.core_ghz_start,
            throughput: self.throughput_start,
            syscall_ns: self.syscall_ns_start,
        }
    }

    /// The probe at the end.
    pub fn end(&self) -> ProbeSample {
        ProbeSample {
            core_ghz: self.core_ghz_end,
            throughput: self.throughput_end,
            syscall_ns: self.syscall_ns_end,
        }
    }

    /// The experiment's core clock: the mean of the start and end probes, GHz (what
    /// `core_cycles` and normalisation use for this experiment).
    pub fn core_ghz(&self) -> f64 {
        (self.core_ghz_start + self.core_ghz_end) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(stable: bool) -> MachineState {
        let start = ProbeSample {
            core_ghz: 4.0,
            throughput: 16.0,
            syscall_ns: 200.0,
        };
        let end = ProbeSample {
            core_ghz: 3.0,
            ..start
        };
        let beside = Beside {
            cpu: 1,
            interval_ns: 10,
            steal_ns: 1,
            other_ns: 2,
            involuntary_switches: 3,
            runqueue_wait_ns: 4,
        };
        let verdict = Verdict {
            stable,
            reason: Some("machine speed changed 25% during this experiment".into()),
        };
        MachineState::new(&start, &end, &beside, verdict)
    }

    #[test]
    fn json_has_exactly_the_schema_names() {
        let v = serde_json::to_value(state(false)).expect("serialises");
        let mut keys: Vec<&str> = v
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "core_ghz_end",
                "core_ghz_start",
                "involuntary_switches",
                "reason",
                "runqueue_wait_ns",
                "stable",
                "steal_ns",
                "syscall_ns_end",
                "syscall_ns_start",
                "throughput_end",
                "throughput_start",
            ]
        );
        assert_eq!(
            v["reason"],
            "machine speed changed 25% during this experiment"
        );
        assert_eq!(v["runqueue_wait_ns"], 4);
    }

    #[test]
    fn stable_states_carry_no_reason_and_round_trip() {
        let s = state(true);
        assert_eq!(s.reason, None);
        let text = serde_json::to_string(&s).expect("serialises");
        assert!(!text.contains("reason"), "{text}");
        let back: MachineState = serde_json::from_str(&text).expect("parses");
        assert_eq!(back, s);
        assert_eq!(back.start().core_ghz, 4.0);
        assert_eq!(back.end().core_ghz, 3.0);
        assert_eq!(back.core_ghz(), 3.5);
    }
}
