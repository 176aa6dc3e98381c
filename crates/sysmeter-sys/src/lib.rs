//! sysmeter-sys: the only crate of sysmeter allowed to use `unsafe`.
//!
//! Thin, documented wrappers around what safe Rust cannot reach: the time-stamp counter,
//! clocks read through the vDSO and through the real system call, raw system calls used as
//! measurement subjects, processes (the gated fork-exec child, waiting, fork, posix_spawn,
//! echo children), futexes, the BPF queries of what sits on a tracepoint, CPU affinity, the SIGINT flag, random bytes from the kernel,
//! and hot kernels written in inline assembly so that they compile to exactly the
//! instructions an experiment claims to time. Every `unsafe` block
//! carries a `// SAFETY:` comment. Depends only on `libc`; knows nothing of sysmeter's model.

pub mod bpf_query;
pub mod chase;
pub mod clock;
pub mod files;
pub mod futex;
pub mod kernels;
pub mod membw;
pub mod memory;
pub mod net;
pub mod preload;
pub mod probe;
pub mod process;
pub mod ptrace;
pub mod random;
pub mod sched;
pub mod seccomp;
pub mod signal;
pub mod stdio;
pub mod syscall;
pub mod tracepoint;

/// The calling thread's `errno` after a failed libc call, as an `io::Error`.
pub(crate) fn last_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

#[cfg(test)]
mod skip;
#[cfg(test)]
mod tests;
