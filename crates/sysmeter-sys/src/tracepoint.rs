//! What the tracepoint backend of `sysmeter trace` needs beyond perf-event2: a child that
//! execs only when told ([`GatedChild`]), so perf events can be opened on its pid with
//! `enable_on_exec` before it runs anything, a non-blocking wait for it,
//! `PERF_EVENT_IOC_SET_FILTER` ([`set_filter`]) so the kernel drops the samples of calls a
//! `-e` set does not select instead of writing them to the ring buffer, and
//! `PERF_EVENT_IOC_SET_OUTPUT` ([`set_output`]) to share one ring per CPU (perf-event2
//! exposes neither ioctl).
//!
//! The child body makes only raw system calls on memory prepared before the fork.
//! Depends only on `libc`.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::RawFd;

// SAFETY: `environ` is the C runtime's environment array, valid for the process lifetime.
unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

/// `_IOW('$', 6, char *)`: PERF_EVENT_IOC_SET_FILTER.
const PERF_EVENT_IOC_SET_FILTER: libc::c_ulong = 0x4008_2406;
/// `_IO('$', 5)`: PERF_EVENT_IOC_SET_OUTPUT.
const PERF_EVENT_IOC_SET_OUTPUT: libc::c_ulong = 0x2405;

/// Makes perf event `fd` write its records into the ring buffer of event `target` (same
/// CPU, same clock), so one ring per CPU serves many events.
pub fn set_output(fd: RawFd, target: RawFd) -> io::Result<()> {
    // SAFETY: the ioctl takes an fd number as its argument and touches no user memory.
    let rc = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT as _, target) };
    if rc == -1 {
        Err(crate::last_error())
    } else {
        Ok(())
    }
}

/// Sets a tracepoint filter expression (e.g. `id == 0 || id == 1`) on a perf event fd.
pub fn set_filter(fd: RawFd, filter: &CStr) -> io::Result<()> {
    // SAFETY: the ioctl reads a NUL-terminated string that outlives the call; an fd that is
    // not a perf event makes it fail with ENOTTY, nothing worse.
    let rc = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_SET_FILTER as _, filter.as_ptr()) };
    if rc == -1 {
        Err(crate::last_error())
    } else {
        Ok(())
    }
}

/// A forked child that waits on a pipe, then (pinned to a CPU if asked) execs its command.
/// Killed and reaped on drop unless its exit was collected.
#[derive(Debug)]
pub struct GatedChild {
    pid: i32,
    go: crate::gate::Opener,
    exit: Option<i32>,
}

fn gated_body(go: RawFd, program: &CStr, argv: &[*const libc::c_char], cpu: Option<usize>) -> ! {
    if !crate::gate::wait_in_child(go) {
        // SAFETY: _exit never returns. The parent gave up: leave without running anything.
        unsafe { libc::_exit(125) };
    }
    if let Some(c) = cpu {
        let _ = crate::sched::pin_current_thread(c);
    }
    // SAFETY: argv is NULL-terminated with live strings; environ is the process environment.
    unsafe {
        libc::execve(program.as_ptr(), argv.as_ptr(), environ);
        libc::_exit(127)
    }
}

impl GatedChild {
    /// Forks the child; it runs nothing of the command until [`GatedChild::go`].
    pub fn spawn(program: &CStr, argv: &[CString], cpu: Option<usize>) -> io::Result<GatedChild> {
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let gate = crate::gate::Gate::new()?;
        // SAFETY: the child runs only `gated_body` (raw system calls on data prepared above).
        let pid = unsafe { libc::fork() };
        match pid {
            -1 => Err(crate::last_error()),
            0 => gated_body(gate.child_fd(), program, &ptrs, cpu),
            pid => Ok(GatedChild {
                pid,
                go: gate.into_opener(),
                exit: None,
            }),
        }
    }

    /// The child's pid.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Lets the child exec (once).
    pub fn go(&mut self) -> io::Result<()> {
        self.go.open()
    }

    /// The exit code (128 + signal when killed) if the child has ended; never blocks.
    pub fn try_wait(&mut self) -> io::Result<Option<i32>> {
        if self.exit.is_none() {
            self.exit = wait(self.pid, libc::WNOHANG)?;
        }
        Ok(self.exit)
    }

    /// Waits for the child to end and returns its exit code (128 + signal when killed).
    pub fn wait(&mut self) -> io::Result<i32> {
        loop {
            if let Some(code) = self.exit {
                return Ok(code);
            }
            self.exit = wait(self.pid, 0)?;
        }
    }
}

/// `waitpid(pid, flags)`: `Some(code)` once it ended, `None` if still running (WNOHANG).
fn wait(pid: i32, flags: libc::c_int) -> io::Result<Option<i32>> {
    let mut status = 0;
    // SAFETY: `status` is a valid, writable int.
    let rc = unsafe { libc::waitpid(pid, &mut status, flags) };
    if rc == -1 {
        let e = crate::last_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(None)
        } else {
            Err(e)
        };
    }
    if rc == 0 {
        return Ok(None);
    }
    if libc::WIFEXITED(status) {
        Ok(Some(libc::WEXITSTATUS(status)))
    } else if libc::WIFSIGNALED(status) {
        Ok(Some(128 + libc::WTERMSIG(status)))
    } else {
        Ok(None)
    }
}

impl Drop for GatedChild {
    fn drop(&mut self) {
        if self.exit.is_none() {
            // SAFETY: `pid` is our own child, not yet reaped.
            unsafe { libc::kill(self.pid, libc::SIGKILL) };
            let _ = wait(self.pid, 0);
        }
    }
}
