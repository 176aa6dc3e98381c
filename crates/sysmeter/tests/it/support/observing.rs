//! One lock per kernel event that tests attach BPF programs or perf events to, so that two
//! such tests never run at once: a BPF program on a tracepoint that returns 0 (the blinder
//! of `blind.rs`, an older sysmeter, a bcc tool) keeps the kernel from writing that
//! tracepoint's perf samples for everyone, and a perf test beside it would count nothing
//! (issue 41: `locks::…::perf` failed beside a BPF locks test). Every test that runs
//! `locks`, `profile --off-cpu`, `trace` with tracepoints, bpftrace or a blinder takes the
//! lock of each event it touches with [`observing`], which takes them in one order (the
//! order of [`Event`]) so that two tests never wait for each other; a test that also
//! wants the CPUs to itself takes both with [`observing_alone`] (`support::exclusive()`
//! after the events, in that one order).

use std::sync::{Mutex, MutexGuard};

/// A kernel event (a group of tracepoints) that tests observe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// `syscalls:sys_enter_futex` and `sys_exit_futex` (`locks`).
    Futex,
    /// `sched:sched_switch` and `sched_waking` (`profile --off-cpu`).
    Sched,
    /// `raw_syscalls:sys_enter` and `sys_exit` (`trace` with tracepoints).
    RawSyscalls,
}

/// The locks held for a test, released when it ends.
pub struct Observing(#[allow(dead_code)] Vec<MutexGuard<'static, ()>>);

/// Takes the lock of every event of `events`, in the order of [`Event`].
pub fn observing(events: &[Event]) -> Observing {
    static LOCKS: [Mutex<()>; 3] = [Mutex::new(()), Mutex::new(()), Mutex::new(())];
    let mut sorted = events.to_vec();
    sorted.sort();
    sorted.dedup();
    Observing(
        sorted
            .into_iter()
            .map(|e| {
                LOCKS[e as usize]
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
            })
            .collect(),
    )
}

/// The locks of a test's events and then the CPUs to itself, released when it ends.
pub struct Alone {
    _cpus: MutexGuard<'static, ()>,
    _on: Observing,
}

/// Takes the lock of every event of `events` ([`observing`]), then `support::exclusive()`.
pub fn observing_alone(events: &[Event]) -> Alone {
    let on = observing(events);
    Alone {
        _cpus: super::exclusive(),
        _on: on,
    }
}
