//! A `locks` run of the perf backend made to lose records says so right under its title,
//! with the share lost: a two-thread semaphore ping-pong (fixture `locks_sempingpong`) on
//! CPU 0 with sysmeter at the lowest priority and the fixture at the highest, so the reader
//! cannot drain the rings in time (`support::starved`).
//!
//! Needs root (capability `tracepoints`), `cc`, taskset(1) and nice(1) (capability `script`).

use crate::support::need;
use crate::support::needs::tracepoints;
use crate::support::starved::{Starved, says_lost_under_title};

#[test]
fn a_perf_locks_run_that_lost_records_says_so_under_its_title() {
    let _alone = crate::support::observing_alone(&[crate::support::Event::Futex]);
    need!(tracepoints());
    need!(says_lost_under_title(Starved {
        fixture: "locks_sempingpong",
        rounds: "200000",
        diagnosis: &["locks", "--backend", "perf"],
        title: "sysmeter locks run",
        lost: "futex records lost (",
    }));
}
