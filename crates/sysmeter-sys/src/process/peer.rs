//! Process primitives that experiments time or use as peers: fork+exit+wait, fork+exec+wait
//! and posix_spawn+wait for `os.task` (each returns the raw wait status), [`EchoChild`], a
//! forked process that echoes bytes over pipes (`os.ctxsw`, `ipc.*`), and [`SinkChild`],
//! the reader of the streaming experiments. Depends only on `libc` and [`super::wait`].
//!
//! A forked child of a possibly multi-threaded parent may only make async-signal-safe calls,
//! so every child body here is plain system calls and `_exit`, with buffers and C strings
//! prepared before the fork. [`EchoChild`] is killed and reaped on drop, so an interrupted
//! experiment never leaves a process behind.

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;

/// `fork()`; the child `_exit(0)`s at once; the parent waits for it. Returns the wait status.
pub fn fork_exit_wait() -> io::Result<i32> {
    // SAFETY: the child calls only _exit, which is async-signal-safe.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(crate::last_error()),
        // SAFETY: _exit never returns and runs no destructors or atexit handlers.
        0 => unsafe { libc::_exit(0) },
        pid => super::wait::reap_status(pid),
    }
}

/// A program and its arguments as C strings, prepared before forking.
pub struct ExecTarget {
    argv_ptrs: Vec<*const libc::c_char>,
    _argv: Vec<std::ffi::CString>,
}

impl ExecTarget {
    /// Prepare `argv` (argv\[0\] is the program path).
    pub fn new(argv: &[&CStr]) -> ExecTarget {
        let owned: Vec<std::ffi::CString> = argv.iter().map(|a| (*a).to_owned()).collect();
        let mut ptrs: Vec<*const libc::c_char> = owned.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        ExecTarget {
            argv_ptrs: ptrs,
            _argv: owned,
        }
    }
}

// SAFETY: `environ` is the C runtime's environment array, valid for the process lifetime.
unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

/// `fork()` then `execve(target)` in the child; the parent waits. Returns the wait status
/// (exit code 127 if exec failed).
pub fn fork_exec_wait(target: &ExecTarget) -> io::Result<i32> {
    // SAFETY: the child calls only execve and _exit (async-signal-safe) on data prepared
    // before the fork; `argv_ptrs` is NULL-terminated and its strings outlive the call.
    let pid = unsafe { libc::fork() };
    match pid {
        -1 => Err(crate::last_error()),
        0 => {
            // SAFETY: see above; environ is the process environment.
            unsafe {
                libc::execve(target.argv_ptrs[0], target.argv_ptrs.as_ptr(), environ);
                libc::_exit(127)
            }
        }
        pid => super::wait::reap_status(pid),
    }
}

/// `posix_spawn(target)` (glibc implements it with CLONE_VFORK) and wait. Returns the status.
pub fn spawn_wait(target: &ExecTarget) -> io::Result<i32> {
    let mut pid: libc::pid_t = 0;
    // SAFETY: argv is NULL-terminated with live strings; null file actions and attributes
    // are allowed; `pid` is valid and writable.
    let rc = unsafe {
        libc::posix_spawn(
            &mut pid,
            target.argv_ptrs[0],
            std::ptr::null(),
            std::ptr::null(),
            target.argv_ptrs.as_ptr() as *const *mut libc::c_char,
            environ as *const *mut libc::c_char,
        )
    };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    super::wait::reap_status(pid)
}

/// A forked child that reads `msg_len` bytes from `read_fd` and writes them back to
/// `write_fd`, forever, until its input closes. Killed (SIGKILL) and reaped on drop.
pub struct EchoChild {
    child: ForkedChild,
}

impl EchoChild {
    /// Fork the echo child, pinned to `cpu` when given. `close_in_child` are the parent's
    /// pipe ends the child must close so that EOF propagates.
    pub fn spawn(
        read_fd: RawFd,
        write_fd: RawFd,
        msg_len: usize,
        cpu: Option<usize>,
        close_in_child: &[RawFd],
    ) -> io::Result<EchoChild> {
        let mut buf = vec![0u8; msg_len.max(1)];
        let child = ForkedChild::spawn(cpu, close_in_child, || {
            echo_loop(read_fd, write_fd, &mut buf)
        })?;
        Ok(EchoChild { child })
    }

    /// The child's pid.
    pub fn pid(&self) -> i32 {
        self.child.pid
    }
}

fn echo_loop(read_fd: RawFd, write_fd: RawFd, buf: &mut [u8]) {
    loop {
        let mut got = 0;
        while got < buf.len() {
            let n = crate::syscall::read(read_fd, &mut buf[got..]);
            if n <= 0 {
                return;
            }
            got += n as usize;
        }
        let mut sent = 0;
        while sent < buf.len() {
            let n = crate::syscall::write(write_fd, &buf[sent..]);
            if n <= 0 {
                return;
            }
            sent += n as usize;
        }
    }
}

/// A forked child that reads from `fd` and discards the data until EOF: the reader of the
/// streaming-bandwidth experiments. With `ack_bytes > 0` it writes one byte back on `fd`
/// each time another `ack_bytes` bytes have arrived (flow control for datagram sockets,
/// which have none of their own). Killed (SIGKILL) and reaped on drop.
pub struct SinkChild {
    // Held for its Drop, which kills and reaps the sink.
    _child: ForkedChild,
}

impl SinkChild {
    /// Fork the sink, pinned to `cpu` when given, reading with a buffer of `buf_len` bytes
    /// (at least one datagram). `close_in_child` are the parent's descriptors the child must
    /// close so that EOF propagates.
    pub fn spawn(
        fd: RawFd,
        buf_len: usize,
        ack_bytes: usize,
        cpu: Option<usize>,
        close_in_child: &[RawFd],
    ) -> io::Result<SinkChild> {
        let mut buf = vec![0u8; buf_len.max(1)];
        let child = ForkedChild::spawn(cpu, close_in_child, || sink_loop(fd, &mut buf, ack_bytes))?;
        Ok(SinkChild { _child: child })
    }
}

fn sink_loop(fd: RawFd, buf: &mut [u8], ack_bytes: usize) {
    let mut since_ack = 0usize;
    loop {
        let n = crate::syscall::read(fd, buf);
        if n <= 0 {
            return;
        }
        since_ack += n as usize;
        while ack_bytes > 0 && since_ack >= ack_bytes {
            since_ack -= ack_bytes;
            if crate::syscall::write(fd, b"a") != 1 {
                return;
            }
        }
    }
}

/// A forked peer process of the ping-pong and streaming experiments: it pins itself, closes
/// the parent's descriptors it must not hold, runs its loop and exits. Killed (SIGKILL) and
/// reaped on drop, so an interrupted experiment leaves no process behind.
struct ForkedChild {
    pid: libc::pid_t,
}

impl ForkedChild {
    /// `body` must make only raw system calls on memory allocated before the fork (the
    /// child of a multi-threaded process may not allocate or take locks).
    fn spawn(
        cpu: Option<usize>,
        close_in_child: &[RawFd],
        body: impl FnOnce(),
    ) -> io::Result<Self> {
        // SAFETY: the child runs only `body` (raw system calls on memory allocated before the
        // fork, per this function's contract), sched_setaffinity and close, then _exit.
        let pid = unsafe { libc::fork() };
        match pid {
            -1 => Err(crate::last_error()),
            0 => {
                if let Some(c) = cpu {
                    let _ = crate::sched::pin_current_thread(c);
                }
                for &fd in close_in_child {
                    // SAFETY: closing an inherited descriptor in the child only.
                    unsafe { libc::close(fd) };
                }
                body();
                // SAFETY: _exit never returns and runs no destructors.
                unsafe { libc::_exit(0) }
            }
            pid => Ok(ForkedChild { pid }),
        }
    }
}

impl Drop for ForkedChild {
    fn drop(&mut self) {
        // SAFETY: `pid` is our own child, not yet reaped (only drop reaps it).
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        let _ = super::wait::reap_status(self.pid);
    }
}
