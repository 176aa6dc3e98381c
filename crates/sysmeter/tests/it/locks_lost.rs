//! A `locks` run of the perf backend made to lose records says so right under its title,
//! with the share lost: a two-thread semaphore ping-pong (fixture `locks_sempingpong`) on
//! CPU 0 with sysmeter at the lowest priority and the fixture at the highest, so the reader
//! cannot drain the rings in time (`support::starved`).
//!
//! Needs root (capability `tracepoints`), `cc`, taskset(1) and nice(1) (capability `script`).

use crate::support::needs::tracepoints;
use crate::support::starved::{assert_lost_under_title, starved_run, taskset_and_nice};
use crate::support::{compile_fixture, exclusive, need};

#[test]
fn a_perf_locks_run_that_lost_records_says_so_under_its_title() {
    let _alone = exclusive();
    need!(tracepoints());
    need!(taskset_and_nice());
    let dir = tempfile::tempdir().expect("tempdir");
    let prog = need!(compile_fixture(
        "locks_sempingpong",
        dir.path(),
        &["-pthread"]
    ));
    let args = ["locks", "--backend", "perf"];
    let stderr = starved_run(dir.path(), &args, &prog, "200000");
    assert_lost_under_title(&stderr, "sysmeter locks run", "futex records lost (");
}
