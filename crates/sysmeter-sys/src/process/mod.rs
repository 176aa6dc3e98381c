//! Processes sysmeter starts and watches, in one place: the gated fork-exec [`child::Child`]
//! every diagnosis launches its command with, the one way to say how a child ended
//! ([`exit::Exit`], with its [`exit::ChildUsage`]), the one wait pair ([`wait::wait_exited`]
//! without reaping, [`wait::reap`] with `wait4`), signal forwarding while a command runs
//! ([`forward`]), the start gate of children that run sysmeter's own code (`gate`), and the
//! process primitives that experiments time or use as peers (fork/exec/spawn + wait,
//! [`EchoChild`], [`SinkChild`]).
//!
//! Depends only on `libc` and `crate::{sched, syscall}`.

pub mod child;
pub mod exit;
pub mod forward;
pub(crate) mod gate;
mod peer;
pub mod wait;

pub use peer::{EchoChild, ExecTarget, SinkChild, fork_exec_wait, fork_exit_wait, spawn_wait};

/// Clock ticks per second of the times in `/proc/PID/stat` (`sysconf(_SC_CLK_TCK)`, 100 on
/// every Linux architecture sysmeter supports).
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(v).ok().filter(|&t| t > 0).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    #[test]
    fn clock_ticks_are_positive() {
        assert!(super::clock_ticks_per_sec() > 0);
    }
}
