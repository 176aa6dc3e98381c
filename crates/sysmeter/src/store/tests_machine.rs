//! Store tests of what schema 3 added: a result's machine-state records and a metric's core
//! cycles and round statistics survive a round trip.

use super::tests::{assert_round_trip, fixture_run, store_run, summary};
use super::*;
use crate::model::{MachineState, RoundStats};

#[test]
fn round_trip_keeps_machine_state_core_cycles_and_rounds() {
    let mut run = fixture_run("20261123T101010Z-0001", 1_763_836_362_000_000_000);
    let state = MachineState {
        core_ghz_start: 3.69,
        core_ghz_end: 2.8,
        throughput_start: 14.2,
        throughput_end: 7.9,
        syscall_ns_start: 164.0,
        syscall_ns_end: 230.0,
        steal_ns: 10_000_000,
        involuntary_switches: 3,
        runqueue_wait_ns: 42_000,
        stable: false,
        reason: Some("machine speed changed 24% during this experiment".into()),
        between: None,
        cache: Some(crate::model::CacheShare {
            bytes: 4 << 20,
            count: 3,
            start_ns: 13.5,
            end_ns: 96.25,
            min_ns: 13.5,
            max_ns: 96.25,
            median_ns: 40.0,
        }),
    };
    run.results[0].machine = Some(state.clone());
    run.results[0].round_machines = vec![state.clone(), state];
    run.results[0].metrics[0].core_cycles = Some(summary(620.0, 5));
    run.results[0].metrics[0].rounds = Some(RoundStats {
        medians: vec![170.0, 168.5, 181.25],
        median: 170.0,
        cv: 0.04,
    });
    assert_round_trip(&run);
}

/// A round CV or a core-cycle statistic that is NaN (medians that average zero) is written to
/// the JSON column as null and must read back as NaN, not make the run unreadable.
#[test]
fn nan_round_and_core_cycle_statistics_read_back() {
    let mut store = Store::open_in_memory().expect("open");
    let mut run = fixture_run("20261123T111111Z-0002", 1_763_836_362_000_000_000);
    let mut core = summary(0.0, 3);
    core.cv = f64::NAN;
    run.results[0].metrics[0].core_cycles = Some(core);
    run.results[0].metrics[0].rounds = Some(RoundStats {
        medians: vec![0.0, f64::NAN, 0.0],
        median: 0.0,
        cv: f64::NAN,
    });
    store_run(&mut store, &run);
    let back = store
        .load_run("20261123T111111Z-0002")
        .expect("a NaN is not damage");
    let m = &back.results[0].metrics[0];
    assert!(m.core_cycles.expect("core cycles").cv.is_nan());
    let r = m.rounds.as_ref().expect("rounds");
    assert!(r.cv.is_nan() && r.medians[1].is_nan() && r.medians[0] == 0.0);
}

/// The harness's `degenerate` flag is kept in the metric's JSON column, alone or with the
/// other additions, so `show` says "not a result" for a stored run as `bench` did.
#[test]
fn round_trip_keeps_the_degenerate_flag() {
    let mut run = fixture_run("20261123T121212Z-0003", 1_763_836_362_000_000_000);
    run.results[0].metrics[0].degenerate = Some("7 of 10 samples are 0".into());
    assert_round_trip(&run);
}
