//! Assembling a [`MachineState`] (the model type stored per experiment as
//! `ExperimentResult.machine`) from the parts a [`super::Watch`] collects, and reading its
//! probes back.
//!
//! Pure.

use super::counters::Beside;
use super::judge::Verdict;
use super::sample::ProbeSample;
use crate::model::{BetweenProbes, MachineState};

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
        between: None,
        cache: None,
    }
}

/// The range of the probes taken between the points of a series; `None` without any
/// readable one.
pub fn between_range(between: &[ProbeSample]) -> Option<BetweenProbes> {
    let ok: Vec<&ProbeSample> = between
        .iter()
        .filter(|p| p.core_ghz > 0.0 && p.throughput > 0.0)
        .collect();
    let range = |value: fn(&ProbeSample) -> f64| {
        let lo = ok.iter().map(|p| value(p)).fold(f64::INFINITY, f64::min);
        let hi = ok.iter().map(|p| value(p)).fold(0.0, f64::max);
        (lo, hi)
    };
    let (core_ghz_min, core_ghz_max) = range(|p| p.core_ghz);
    let (throughput_min, throughput_max) = range(|p| p.throughput);
    (!ok.is_empty()).then(|| BetweenProbes {
        count: u32::try_from(ok.len()).unwrap_or(u32::MAX),
        core_ghz_min,
        core_ghz_max,
        throughput_min,
        throughput_max,
    })
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
            ..Beside::default()
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

    #[test]
    fn between_probes_are_kept_as_their_range() {
        let p = |core_ghz, throughput| ProbeSample {
            core_ghz,
            throughput,
            syscall_ns: 200.0,
        };
        assert_eq!(between_range(&[]), None);
        assert_eq!(
            between_range(&[p(0.0, 0.0)]),
            None,
            "unreadable probes are dropped"
        );
        let r = between_range(&[p(3.6, 14.0), p(0.0, 0.0), p(3.1, 15.0), p(3.7, 7.5)])
            .expect("three readable probes");
        assert_eq!(r.count, 3);
        assert_eq!((r.core_ghz_min, r.core_ghz_max), (3.1, 3.7));
        assert_eq!((r.throughput_min, r.throughput_max), (7.5, 15.0));
        let mut s = state(true);
        s.between = Some(r);
        let text = serde_json::to_string(&s).expect("serialises");
        let back: MachineState = serde_json::from_str(&text).expect("parses");
        assert_eq!(back.between, Some(r));
    }
}
