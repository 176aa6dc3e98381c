//! The one gated fork-exec child of sysmeter: [`Child`] forks a child that blocks on a pipe
//! before it calls `execve`, so the parent can attach to its pid first (`perf_event_open`
//! with `enable_on_exec`, which must exist before the exec: `profile` and the tracepoint
//! backend of `trace`) and then release it. `std::process::Command` cannot do this:
//! `spawn()` returns only after the exec.
//!
//! The child body is async-signal-safe: every C string, pointer array and the error pipe are
//! prepared before the fork, and the child only calls `close`, `read`, `sigaction`,
//! `sigprocmask`, `execve`, `write` and `_exit`. An exec failure travels back over a
//! close-on-exec pipe, so [`Child::release`] reports "no such file" as an error
//! instead of a silent exit code 127. The child is killed and reaped on drop unless it was
//! waited for. Depends only on `libc` and the sibling `gate`, `exit` and `wait` modules.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::exit::{ChildUsage, Exit};

// SAFETY: `environ` is the C runtime's environment array, valid for the process lifetime.
unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

/// A forked child blocked before `execve` until [`Child::release`].
#[derive(Debug)]
pub struct Child {
    pid: libc::pid_t,
    /// Write end of the go pipe; closing it without writing makes the child exit (127).
    go: Option<OwnedFd>,
    /// Read end of the exec-error pipe (close-on-exec in the child).
    err: Option<OwnedFd>,
    /// How it ended, once reaped.
    ended: Option<(Exit, ChildUsage)>,
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "an argument contains a NUL byte",
        )
    })
}

impl Child {
    /// Forks a child that will run `path` with `argv` (argv\[0\] included) and the current
    /// environment once released. The child stays in this process group, so the terminal's
    /// Ctrl-C reaches it as it would without sysmeter.
    pub fn spawn(path: &Path, argv: &[&OsStr]) -> io::Result<Child> {
        Child::spawn_env(path, argv, None)
    }

    /// As [`Child::spawn`], with `env` (each `NAME=value`) as the whole environment of the
    /// command instead of ours (`calls` adds its preload library this way).
    pub fn spawn_env(path: &Path, argv: &[&OsStr], env: Option<&[&OsStr]>) -> io::Result<Child> {
        let c_env = env
            .unwrap_or_default()
            .iter()
            .map(|a| cstring(a.as_bytes()))
            .collect::<io::Result<Vec<_>>>()?;
        let mut envp: Vec<*const libc::c_char> = c_env.iter().map(|a| a.as_ptr()).collect();
        envp.push(std::ptr::null());
        let envp_ptr = if env.is_some() {
            envp.as_ptr()
        } else {
            // SAFETY: reading the address of the C runtime's environment array.
            unsafe { environ }
        };
        let c_path = cstring(path.as_os_str().as_bytes())?;
        let c_args = argv
            .iter()
            .map(|a| cstring(a.as_bytes()))
            .collect::<io::Result<Vec<_>>>()?;
        let mut ptrs: Vec<*const libc::c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let (go_read, go_write) = super::gate::pipe_cloexec()?;
        let (err_read, err_write) = super::gate::pipe_cloexec()?;
        // SAFETY: the child runs only `child_body`, which makes async-signal-safe calls on
        // data prepared above (the C strings and `ptrs` outlive the fork in both processes).
        let pid = unsafe { libc::fork() };
        match pid {
            -1 => Err(crate::last_error()),
            0 => {
                let fds = ChildFds {
                    go_read: go_read.as_raw_fd(),
                    go_write: go_write.as_raw_fd(),
                    err_read: err_read.as_raw_fd(),
                    err_write: err_write.as_raw_fd(),
                };
                child_body(&c_path, &ptrs, envp_ptr, fds)
            }
            pid => Ok(Child {
                pid,
                go: Some(go_write),
                err: Some(err_read),
                ended: None,
            }),
        }
    }

    /// The child's pid (valid before and after the exec).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Sends signal `sig` to the child (not after it was reaped, when its pid may be reused).
    pub fn signal(&self, sig: i32) -> io::Result<()> {
        if self.ended.is_some() {
            return Err(io::Error::other("the child was already reaped"));
        }
        // SAFETY: `pid` is our own child and not yet reaped, so it cannot be a reused pid.
        if unsafe { libc::kill(self.pid, sig) } != 0 {
            return Err(crate::last_error());
        }
        Ok(())
    }

    /// Lets the child call `execve` and waits until it has: `Ok` once the new program runs,
    /// `Err` with the exec error (e.g. `ENOENT`, `EACCES`) if it could not start; the child
    /// has then exited with 127 and is reaped on drop.
    pub fn release(&mut self) -> io::Result<()> {
        let go = self
            .go
            .take()
            .ok_or_else(|| io::Error::other("the child was already released"))?;
        let n = crate::syscall::write(go.as_raw_fd(), &[1u8]);
        if n != 1 {
            return Err(syscall_error(n));
        }
        drop(go);
        let Some(err) = self.err.take() else {
            return Ok(());
        };
        let mut buf = [0u8; 4];
        loop {
            let n = crate::syscall::read(err.as_raw_fd(), &mut buf);
            // EOF: the close-on-exec write end closed, so execve succeeded.
            if n == 0 {
                return Ok(());
            }
            if n == 4 {
                return Err(io::Error::from_raw_os_error(i32::from_ne_bytes(buf)));
            }
            if n != -(libc::EINTR as isize) {
                return Err(syscall_error(n));
            }
        }
    }

    /// Waits for the child to end, without blocking when `block` is false (`Ok(None)`: still
    /// running), and reaps it, so a later drop does nothing. Once it ended, every later call
    /// returns the same answer.
    pub fn wait(&mut self, block: bool) -> io::Result<Option<(Exit, ChildUsage)>> {
        if self.ended.is_none() {
            self.ended = super::wait::reap(self.pid, block)?;
        }
        Ok(self.ended)
    }
}

/// The error of a [`crate::syscall`] call that returned `n` (-errno, or a short count).
fn syscall_error(n: isize) -> io::Error {
    if n < 0 {
        io::Error::from_raw_os_error((-n) as i32)
    } else {
        io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "short read or write on a pipe",
        )
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.ended.is_some() {
            return;
        }
        // A child that was never released exits by itself when the go pipe closes; one that
        // runs is killed. Either way it is reaped here so no zombie stays behind.
        self.go = None;
        // SAFETY: `pid` is our own child and not yet reaped, so it cannot be a reused pid.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        let _ = self.wait(true);
    }
}

/// The pipe ends as the child sees them.
struct ChildFds {
    go_read: i32,
    go_write: i32,
    err_read: i32,
    err_write: i32,
}

/// Runs in the forked child: wait for the go byte, restore the signal state a fresh process
/// expects, exec, and report an exec failure over the error pipe. Never returns.
fn child_body(
    path: &CString,
    argv: &[*const libc::c_char],
    envp: *const *const libc::c_char,
    fds: ChildFds,
) -> ! {
    // SAFETY: closing the parent's pipe ends in the child only.
    unsafe {
        libc::close(fds.go_write);
        libc::close(fds.err_read);
    }
    let mut byte = [0u8; 1];
    let got = loop {
        let n = crate::syscall::read(fds.go_read, &mut byte);
        if n != -(libc::EINTR as isize) {
            break n;
        }
    };
    if got != 1 {
        // The parent gave up (closed the pipe) before releasing us.
        // SAFETY: _exit never returns and runs no destructors or atexit handlers.
        unsafe { libc::_exit(127) }
    }
    reset_signals();
    // SAFETY: `path` and `argv` were built before the fork; `argv` is NULL-terminated and
    // its strings outlive this call; `envp` is `environ` or a NULL-terminated array built
    // before the fork.
    unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), envp) };
    // SAFETY: reading the calling thread's errno right after the failed execve.
    let errno = unsafe { *libc::__errno_location() };
    let _ = crate::syscall::write(fds.err_write, &errno.to_ne_bytes());
    // SAFETY: as above.
    unsafe { libc::_exit(127) }
}

/// Rust ignores SIGPIPE in its own process, and an ignored signal stays ignored across
/// exec: put it back to the default (as `std::process::Command` does), and unblock all
/// signals, so the command behaves as it would when started by a shell.
fn reset_signals() {
    // SAFETY: sigaction/sigprocmask on plain, fully initialised C structs.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGPIPE, &act, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn(args: &[&str]) -> io::Result<Child> {
        let argv: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        Child::spawn(Path::new("/bin/sh"), &argv)
    }

    #[test]
    fn released_child_runs_and_its_exit_code_comes_back() {
        let mut child = spawn(&["sh", "-c", "exit 7"]).expect("fork");
        child.release().expect("exec");
        let (exit, _) = child.wait(true).expect("wait").expect("exited");
        assert_eq!(exit, Exit::Exited(7));
        assert_eq!(exit.shell_code(), 7);
        // Asking again gives the same answer.
        assert_eq!(child.wait(false).expect("wait").map(|e| e.0), Some(exit));
    }

    #[test]
    fn exec_failure_is_reported_by_release() {
        let argv = [OsStr::new("/nonexistent/program")];
        let mut child = Child::spawn(Path::new("/nonexistent/program"), &argv).expect("fork");
        let err = child.release().expect_err("exec must fail");
        assert_eq!(err.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn child_does_not_run_before_release_and_is_reaped_on_drop() {
        let dir = std::env::temp_dir().join(format!("sysmeter-launch-{}", std::process::id()));
        let marker = dir.to_string_lossy().to_string();
        let child = spawn(&["sh", "-c", &format!("touch {marker}")]).expect("fork");
        let pid = child.pid();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!dir.exists(), "the child ran before release");
        drop(child);
        // Reaped: the pid no longer names a child of ours.
        // SAFETY: waitpid on a pid that is no longer our child only returns ECHILD.
        let rc = unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
        assert_eq!(rc, -1);
        assert!(!dir.exists());
    }

    #[test]
    fn killed_child_reports_its_signal() {
        let mut child = spawn(&["sh", "-c", "kill -TERM $$"]).expect("fork");
        child.release().expect("exec");
        let (exit, _) = child.wait(true).expect("wait").expect("exited");
        assert_eq!(exit.signal(), Some(libc::SIGTERM));
        assert_eq!(exit.shell_code(), 128 + libc::SIGTERM);
    }

    #[test]
    fn a_running_child_is_not_waited_for_without_blocking() {
        let mut child = spawn(&["sh", "-c", "sleep 30"]).expect("fork");
        child.release().expect("exec");
        assert_eq!(child.wait(false).expect("wait"), None);
        child.signal(libc::SIGKILL).expect("kill");
        let (exit, _) = child.wait(true).expect("wait").expect("exited");
        assert_eq!(exit.signal(), Some(libc::SIGKILL));
    }
}
