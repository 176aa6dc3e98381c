//! Assembling a [`MachineState`] (the model type stored per experiment as
//! `ExperimentResult.machine`) from the parts a [`super::Watch`] collects, and reading its
//! probes back.
//!
//! Pure.

use super::counters::Beside;
use super::judge::Verdict;
use super::sample::ProbeSample;
use crate::model::MachineState;

/// Assemble the record from the two probes, the counters' differences and the verdict.
pub fn assemble(
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

/// The probe at the start of `m`.
pub fn start_of(m: &MachineState) -> ProbeSample {
    ProbeSample {
        core_ghz: m.core_ghz_start,
        throughput: m.throughput_start,
        syscall_ns: m.syscall_ns_start,
    }
}

/// The probe at the end of `m`.
pub fn end_of(m: &MachineState) -> ProbeSample {
    ProbeSample {
        core_ghz: m.core_ghz_end,
        throughput: m.throughput_end,
        syscall_ns: m.syscall_ns_end,
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
        assemble(&start, &end, &beside, verdict)
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
        assert_eq!(start_of(&back).core_ghz, 4.0);
        assert_eq!(end_of(&back).core_ghz, 3.0);
        assert_eq!(back.core_ghz(), 3.5);
    }
}
