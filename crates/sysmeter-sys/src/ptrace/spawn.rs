//! Starting tracees: [`spawn_traced`] forks the command to trace (the child asks to be
//! traced, stops itself, installs the optional seccomp filter and execs), and
//! [`spawn_calibration`] forks a copy of this process that times a loop of `getppid` calls,
//! traced or not, so the tracer can measure what tracing adds per call.
//!
//! `std::process::Command` cannot be used: its `spawn` waits for the exec, but a child that
//! stops for its tracer never gets there. Every child body makes only raw system calls on
//! memory prepared before the fork (the parent may have other threads).

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

use super::{Options, wait::wait_for};
use crate::seccomp::SeccompFilter;

// SAFETY: `environ` is the C runtime's environment array, valid for the process lifetime.
unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

/// What to start under ptrace.
pub struct SpawnSpec<'a> {
    /// Path of the program to execute (already resolved through PATH).
    pub program: &'a CStr,
    /// argv, argv\[0\] included.
    pub argv: &'a [CString],
    /// Pin the child to this CPU before exec (and so every task it creates).
    pub cpu: Option<usize>,
    /// Seccomp filter installed after the initial stop, right before exec.
    pub seccomp: Option<&'a SeccompFilter>,
    /// ptrace options set at the initial stop.
    pub options: Options,
}

/// Child side of the traced fork: only async-signal-safe raw calls.
fn traced_child(argv_ptrs: &[*const libc::c_char], spec: &SpawnSpec<'_>) -> ! {
    if let Some(cpu) = spec.cpu {
        let _ = crate::sched::pin_current_thread(cpu);
    }
    // SAFETY: plain integer ptrace/kill/getpid calls in the child.
    unsafe {
        if libc::ptrace(libc::PTRACE_TRACEME, 0, 0usize, 0usize) == -1 {
            libc::_exit(126);
        }
        // Stop so the parent can set the options before anything of interest happens.
        libc::kill(libc::getpid(), libc::SIGSTOP);
    }
    if let Some(filter) = spec.seccomp
        && filter.install().is_err()
    {
        // SAFETY: _exit never returns and runs no destructors.
        unsafe { libc::_exit(126) };
    }
    // SAFETY: argv_ptrs is NULL-terminated and its strings outlive the call; environ is the
    // process environment. _exit if exec fails.
    unsafe {
        libc::execve(spec.program.as_ptr(), argv_ptrs.as_ptr(), environ);
        libc::_exit(127)
    }
}

/// The traced command started by [`spawn_traced`]: killed (SIGKILL) and reaped on drop
/// unless the tracer saw it end ([`TracedChild::reaped`]) or let it go
/// ([`TracedChild::release`]).
#[derive(Debug)]
pub struct TracedChild {
    pid: i32,
    armed: bool,
}

impl TracedChild {
    /// The child's pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The tracer collected the child's exit: nothing left to clean up.
    pub fn reaped(&mut self) {
        self.armed = false;
    }

    /// The child was detached and must keep running; the caller waits for it.
    pub fn release(&mut self) {
        self.armed = false;
    }
}

impl Drop for TracedChild {
    fn drop(&mut self) {
        if self.armed {
            // SAFETY: `pid` is our own child, not yet reaped.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
            let _ = crate::process::wait::reap(self.pid, true);
        }
    }
}

/// Forks `spec`'s command under ptrace (`PTRACE_TRACEME` + `SIGSTOP`), waits for the
/// initial stop and sets the options. The child is still stopped: resume it with
/// [`super::resume`]; its first system calls are the rest of the stop (rt_sigprocmask at
/// most), the seccomp setup if any, then `execve`.
pub fn spawn_traced(spec: &SpawnSpec<'_>) -> io::Result<TracedChild> {
    let mut argv_ptrs: Vec<*const libc::c_char> = spec.argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    // SAFETY: the child runs only `traced_child` (raw system calls on data prepared above).
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(crate::last_error()),
        0 => traced_child(&argv_ptrs, spec),
        pid => {
            let status = wait_for(pid)?;
            if !libc::WIFSTOPPED(status) || libc::WSTOPSIG(status) != libc::SIGSTOP {
                // It died before stopping (PTRACE_TRACEME refused, e.g. by a security
                // module): reap whatever is left and say so.
                // SAFETY: `pid` is our child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let _ = wait_for(pid);
                return Err(io::Error::new(
                    io::ErrorKind::PermissionDenied,
                    "the child could not be traced (PTRACE_TRACEME failed)",
                ));
            }
            if let Err(e) = super::set_options(pid, spec.options) {
                // SAFETY: `pid` is our child.
                unsafe { libc::kill(pid, libc::SIGKILL) };
                let _ = wait_for(pid);
                return Err(e);
            }
            Ok(TracedChild { pid, armed: true })
        }
    }
}

/// How the calibration child runs its loop.
#[derive(Debug, Clone, Copy)]
pub enum CalibrationMode<'a> {
    /// Not traced (the baseline).
    Untraced,
    /// Traced by ptrace like [`spawn_traced`]: stopped at spawn with `options` set, with the
    /// seccomp filter installed after the stop if given.
    Ptrace {
        /// Options set at the initial stop.
        options: Options,
        /// Optional filter.
        seccomp: Option<&'a SeccompFilter>,
    },
}

/// A forked copy of this process that, once told to go, makes chunks of `getppid` system
/// calls, timing each chunk with CLOCK_MONOTONIC, writes the times into a pipe and exits.
/// Killed and reaped on drop unless [`CalibrationChild::reaped`] was called.
#[derive(Debug)]
pub struct CalibrationChild {
    pid: i32,
    chunks: usize,
    go: crate::process::gate::Opener,
    result: OwnedFd,
    reaped: bool,
}

/// Most chunks a calibration child may time (their times must fit the pipe at once).
pub const MAX_CHUNKS: usize = 1024;

fn calibration_child(plan: (usize, u64), go: i32, result: i32, mode: CalibrationMode<'_>) -> ! {
    if let CalibrationMode::Ptrace { seccomp, .. } = mode {
        // SAFETY: plain integer calls in the child.
        unsafe {
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0usize, 0usize) == -1 {
                libc::_exit(126);
            }
            libc::kill(libc::getpid(), libc::SIGSTOP);
        }
        if let Some(f) = seccomp
            && f.install().is_err()
        {
            // SAFETY: _exit never returns.
            unsafe { libc::_exit(126) };
        }
    }
    if !crate::process::gate::wait_in_child(go) {
        // SAFETY: _exit never returns.
        unsafe { libc::_exit(125) };
    }
    // Times are kept on the stack (no allocation after fork) and written in one go.
    let (chunks, calls) = plan;
    let mut times = [0u64; MAX_CHUNKS];
    for slot in times.iter_mut().take(chunks) {
        let start = crate::clock::clock_gettime_ns(crate::clock::ClockId::Monotonic);
        for _ in 0..calls {
            crate::syscall::null_syscall();
        }
        let end = crate::clock::clock_gettime_ns(crate::clock::ClockId::Monotonic);
        *slot = (end - start).max(0) as u64;
    }
    // SAFETY: reinterpreting initialised u64s as bytes; the length stays in bounds.
    let bytes = unsafe { std::slice::from_raw_parts(times.as_ptr() as *const u8, chunks * 8) };
    crate::syscall::write(result, bytes);
    // SAFETY: _exit never returns and runs no destructors.
    unsafe { libc::_exit(0) }
}

/// Forks the calibration child, which will time `chunks` (at most [`MAX_CHUNKS`]) loops of
/// `calls` getppid calls each, pinned to `cpu` when given. For [`CalibrationMode::Ptrace`]
/// the child is stopped with its options set when this returns; resume it, then call
/// [`CalibrationChild::go`].
pub fn spawn_calibration(
    chunks: usize,
    calls: u64,
    mode: CalibrationMode<'_>,
    cpu: Option<usize>,
) -> io::Result<CalibrationChild> {
    let chunks = chunks.clamp(1, MAX_CHUNKS);
    let gate = crate::process::gate::Gate::new()?;
    let (res_r, res_w) = crate::process::gate::pipe_cloexec()?;
    // SAFETY: the child runs only `calibration_child` (raw system calls).
    let pid = unsafe { libc::fork() };
    if pid == -1 {
        return Err(crate::last_error());
    }
    if pid == 0 {
        if let Some(c) = cpu {
            let _ = crate::sched::pin_current_thread(c);
        }
        calibration_child((chunks, calls), gate.child_fd(), res_w.as_raw_fd(), mode);
    }
    drop(res_w);
    let mut child = CalibrationChild {
        pid,
        chunks,
        go: gate.into_opener(),
        result: res_r,
        reaped: false,
    };
    if let CalibrationMode::Ptrace { options, .. } = mode {
        let status = wait_for(pid)?;
        if !libc::WIFSTOPPED(status) {
            child.reaped = true;
            return Err(io::Error::other(
                "the calibration child could not be traced (PTRACE_TRACEME failed)",
            ));
        }
        super::set_options(pid, options)?;
    }
    Ok(child)
}

impl CalibrationChild {
    /// The child's pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Tells the child to start its loop (once).
    pub fn go(&mut self) -> io::Result<()> {
        self.go.open()
    }

    /// Each chunk's elapsed ns, read from the pipe (blocks until the child wrote them; `Err`
    /// if the child died first).
    pub fn chunk_times_ns(&self) -> io::Result<Vec<u64>> {
        let mut buf = vec![0u8; self.chunks * 8];
        let mut got = 0;
        while got < buf.len() {
            let n = crate::syscall::read(self.result.as_raw_fd(), &mut buf[got..]);
            if n <= 0 {
                return Err(io::Error::other(
                    "the calibration child ended without reporting its timing",
                ));
            }
            got += n as usize;
        }
        Ok(buf
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or([0; 8])))
            .collect())
    }

    /// Marks the child as reaped by the caller (its exit was collected by a wait).
    pub fn reaped(&mut self) {
        self.reaped = true;
    }

    /// Waits for the (untraced) child to exit and marks it reaped.
    pub fn wait(&mut self) -> io::Result<()> {
        if !self.reaped {
            wait_for(self.pid)?;
            self.reaped = true;
        }
        Ok(())
    }
}

impl Drop for CalibrationChild {
    fn drop(&mut self) {
        if !self.reaped {
            // SAFETY: `pid` is our own child, not yet reaped.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
            let _ = wait_for(self.pid);
        }
    }
}
