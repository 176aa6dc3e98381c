//! Starting a command that waits for the go-ahead: [`PendingChild`] forks a child that
//! blocks on a pipe before it calls `execve`, so the parent can attach to its pid first
//! (`perf_event_open` with `enable_on_exec`, which must exist before the exec) and then
//! release it. `std::process::Command` cannot do this: `spawn()` returns only after the exec.
//!
//! The child body is async-signal-safe: every C string, pointer array and the error pipe are
//! prepared before the fork, and the child only calls `close`, `read`, `sigaction`,
//! `sigprocmask`, `execve`, `write` and `_exit`. An exec failure travels back over a
//! close-on-exec pipe, so [`PendingChild::release`] reports "no such file" as an error
//! instead of a silent exit code 127. The child is killed and reaped on drop unless it was
//! waited for. Depends only on `libc`.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

// SAFETY: `environ` is the C runtime's environment array, valid for the process lifetime.
unsafe extern "C" {
    static environ: *const *const libc::c_char;
}

/// How a waited-for child ended, and what it cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code when it exited normally.
    pub code: Option<i32>,
    /// Signal number when a signal killed it.
    pub signal: Option<i32>,
    /// User CPU time of the child and its waited-for descendants, ns.
    pub user_ns: u64,
    /// System CPU time of the child and its waited-for descendants, ns.
    pub system_ns: u64,
    /// Largest resident set size of the child or a waited-for descendant, bytes.
    pub max_rss_bytes: u64,
}

impl ExitInfo {
    /// The shell's view of the status: the exit code, or 128 + the signal number.
    pub fn shell_code(&self) -> i32 {
        match (self.code, self.signal) {
            (Some(c), _) => c,
            (None, Some(s)) => 128 + s,
            (None, None) => 1,
        }
    }
}

/// A forked child blocked before `execve` until [`PendingChild::release`].
#[derive(Debug)]
pub struct PendingChild {
    pid: libc::pid_t,
    /// Write end of the go pipe; closing it without writing makes the child exit (127).
    go: Option<OwnedFd>,
    /// Read end of the exec-error pipe (close-on-exec in the child).
    err: Option<OwnedFd>,
    reaped: bool,
}

/// Finds `program` the way `execvp` does: a name with a `/` is used as it is, anything else
/// is looked up in `$PATH` (default `/usr/local/bin:/usr/bin:/bin`). Returns the first
/// existing regular file that is executable by someone, else `None`.
pub fn resolve_program(program: &OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    if program.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(program));
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn cstring(bytes: &[u8]) -> io::Result<CString> {
    CString::new(bytes).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "an argument contains a NUL byte",
        )
    })
}

impl PendingChild {
    /// Forks a child that will run `path` with `argv` (argv[0] included) and the current
    /// environment once released. The child stays in this process group, so the terminal's
    /// Ctrl-C reaches it as it would without sysmeter.
    pub fn spawn(path: &Path, argv: &[&OsStr]) -> io::Result<PendingChild> {
        let c_path = cstring(path.as_os_str().as_bytes())?;
        let c_args = argv
            .iter()
            .map(|a| cstring(a.as_bytes()))
            .collect::<io::Result<Vec<_>>>()?;
        let mut ptrs: Vec<*const libc::c_char> = c_args.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let (go_read, go_write) = crate::gate::pipe_cloexec()?;
        let (err_read, err_write) = crate::gate::pipe_cloexec()?;
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
                child_body(&c_path, &ptrs, fds)
            }
            pid => Ok(PendingChild {
                pid,
                go: Some(go_write),
                err: Some(err_read),
                reaped: false,
            }),
        }
    }

    /// The child's pid (valid before and after the exec).
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// Sends signal `sig` to the child (not after it was reaped, when its pid may be reused).
    pub fn signal(&self, sig: i32) -> io::Result<()> {
        if self.reaped {
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
    /// running). Reaps it, so a later drop does nothing.
    pub fn wait(&mut self, block: bool) -> io::Result<Option<ExitInfo>> {
        if self.reaped {
            return Err(io::Error::other("the child was already reaped"));
        }
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value of this plain C struct.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let flags = if block { 0 } else { libc::WNOHANG };
        loop {
            // SAFETY: `status` and `usage` are valid and writable; `pid` is our child.
            let rc = unsafe { libc::wait4(self.pid, &mut status, flags, &mut usage) };
            if rc == 0 {
                return Ok(None);
            }
            if rc == self.pid {
                self.reaped = true;
                return Ok(Some(exit_info(status, &usage)));
            }
            let e = crate::last_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
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

fn timeval_ns(tv: &libc::timeval) -> u64 {
    (tv.tv_sec.max(0) as u64) * 1_000_000_000 + (tv.tv_usec.max(0) as u64) * 1000
}

fn exit_info(status: i32, usage: &libc::rusage) -> ExitInfo {
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    let signal = libc::WIFSIGNALED(status).then(|| libc::WTERMSIG(status));
    ExitInfo {
        code,
        signal,
        user_ns: timeval_ns(&usage.ru_utime),
        system_ns: timeval_ns(&usage.ru_stime),
        // Linux reports ru_maxrss in KiB.
        max_rss_bytes: (usage.ru_maxrss.max(0) as u64) * 1024,
    }
}

impl Drop for PendingChild {
    fn drop(&mut self) {
        if self.reaped {
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
fn child_body(path: &CString, argv: &[*const libc::c_char], fds: ChildFds) -> ! {
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
    // its strings outlive this call; `environ` is the process environment.
    unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), environ) };
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

    fn spawn(args: &[&str]) -> io::Result<PendingChild> {
        let path = resolve_program(OsStr::new(args[0])).expect("program on PATH");
        let argv: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        PendingChild::spawn(&path, &argv)
    }

    #[test]
    fn released_child_runs_and_its_exit_code_comes_back() {
        let mut child = spawn(&["sh", "-c", "exit 7"]).expect("fork");
        child.release().expect("exec");
        let info = child.wait(true).expect("wait").expect("exited");
        assert_eq!(info.code, Some(7));
        assert_eq!(info.shell_code(), 7);
    }

    #[test]
    fn exec_failure_is_reported_by_release() {
        let argv = [OsStr::new("/nonexistent/program")];
        let mut child =
            PendingChild::spawn(Path::new("/nonexistent/program"), &argv).expect("fork");
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
        let info = child.wait(true).expect("wait").expect("exited");
        assert_eq!(info.signal, Some(libc::SIGTERM));
        assert_eq!(info.shell_code(), 128 + libc::SIGTERM);
    }

    #[test]
    fn resolve_finds_programs_on_path_and_keeps_paths() {
        assert!(resolve_program(OsStr::new("sh")).is_some());
        assert_eq!(
            resolve_program(OsStr::new("./x")),
            Some(PathBuf::from("./x"))
        );
        assert!(resolve_program(OsStr::new("no-such-program-sysmeter")).is_none());
    }
}
