//! Waiting for a child, as one pair: [`wait_exited`] notices the exit *without* reaping
//! (`waitid(WEXITED|WNOWAIT)`), so the pid stays reserved — another thread may still signal
//! it without hitting a recycled pid, and its `/proc/PID/io` and schedstats stay readable —
//! and [`reap`] collects it with `wait4`, whose rusage covers the child and every descendant
//! it waited for. Plus a pidfd ([`PidFd`]) to sleep until any process exits or a timeout
//! passes, and [`send_signal`].
//!
//! Every wait retries when a signal interrupts it. Depends only on `libc` and
//! [`super::exit`].

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

use super::exit::{ChildUsage, Exit};

/// Whether child `pid` has exited, **without reaping it**: afterwards its `/proc/PID`
/// entries stay readable and its pid reserved until [`reap`]. With `block` it waits for the
/// exit (always `Ok(true)`); without, `Ok(false)` while it runs.
pub fn wait_exited(pid: i32, block: bool) -> io::Result<bool> {
    let Ok(id) = libc::id_t::try_from(pid) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    let mut flags = libc::WEXITED | libc::WNOWAIT;
    if !block {
        flags |= libc::WNOHANG;
    }
    loop {
        // SAFETY: siginfo_t is plain data; zeroed means "no child reported" (si_pid 0).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is valid and writable; P_PID with our child's id; WNOWAIT leaves
        // the child waitable, so no state is lost.
        let rc = unsafe { libc::waitid(libc::P_PID, id, &mut info, flags) };
        if rc == 0 {
            // SAFETY: waitid filled `info` (or left it zeroed under WNOHANG); si_pid is
            // valid for the SIGCHLD-style info waitid returns.
            return Ok(block || unsafe { info.si_pid() } != 0);
        }
        let err = crate::last_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Reaps child `pid` and returns how it ended and its resource usage, descendants included.
/// With `block` it waits for the exit; without, `Ok(None)` while it runs. Stop reports (of
/// a child that is or was traced) are skipped.
pub fn reap(pid: i32, block: bool) -> io::Result<Option<(Exit, ChildUsage)>> {
    let flags = libc::__WALL | if block { 0 } else { libc::WNOHANG };
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value for wait4 to fill in.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `status` and `ru` are valid and writable; `pid` is our child.
        let rc = unsafe { libc::wait4(pid, &mut status, flags, &mut ru) };
        if rc == 0 {
            return Ok(None);
        }
        if rc == pid {
            match Exit::from_status(status) {
                Some(exit) => return Ok(Some((exit, ChildUsage::from_rusage(&ru)))),
                None => continue,
            }
        }
        let err = crate::last_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Reaps child `pid` (blocking) and returns the raw wait status, without asking for its
/// resource usage: the wait of the timed process primitives (`os.task`), which must stay the
/// plain `waitpid` they measure.
pub(crate) fn reap_status(pid: i32) -> io::Result<i32> {
    let mut status = 0;
    loop {
        // SAFETY: `status` is a valid, writable int; a null rusage is allowed; `pid` is our
        // child.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, std::ptr::null_mut()) };
        if rc == pid {
            return Ok(status);
        }
        let err = crate::last_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Sends `signal` to process `pid`. For a child, only before it was reaped.
pub fn send_signal(pid: i32, signal: i32) -> io::Result<()> {
    if pid <= 0 {
        // kill(0 or negative) would signal process groups; never what a caller means here.
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: kill has no memory effects; pid > 0 names exactly one process.
    let rc = unsafe { libc::kill(pid, signal) };
    if rc == 0 {
        Ok(())
    } else {
        Err(crate::last_error())
    }
}

/// Sends `signal` to every process of process group `pgid` (`kill(-pgid, signal)`): a child
/// started as the leader of its own group (`CommandExt::process_group(0)`) and everything it
/// started. Call it while the leader is not yet reaped (a zombie leader keeps the group id
/// from being reused).
pub fn signal_group(pgid: i32, signal: i32) -> io::Result<()> {
    if pgid <= 1 {
        // 0 is our own group, 1 (init's group) never one of our children's; negative
        // values would turn into a pid.
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: kill has no memory effects; -pgid (pgid > 1) names exactly that group.
    let rc = unsafe { libc::kill(-pgid, signal) };
    if rc == 0 {
        Ok(())
    } else {
        Err(crate::last_error())
    }
}

/// What [`PidFd::wait`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidWait {
    /// The process has exited (for a child: it is a zombie, not yet reaped).
    Exited,
    /// The timeout passed.
    Timeout,
    /// A signal arrived (check [`super::forward::take_pending`]).
    Interrupted,
}

/// A pidfd (`pidfd_open`, Linux 5.3+): becomes readable when the process exits, so one
/// `poll` both sleeps until the next timeline sample and notices the exit at once. Closed on
/// drop.
#[derive(Debug)]
pub struct PidFd {
    fd: OwnedFd,
}

impl PidFd {
    /// Opens a pidfd for `pid` (any process we can see, not only children). Fails with
    /// ESRCH when it does not exist and ENOSYS on kernels before 5.3.
    pub fn open(pid: i32) -> io::Result<PidFd> {
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let rc = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if rc < 0 {
            return Err(crate::last_error());
        }
        let raw = i32::try_from(rc).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))?;
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        Ok(PidFd { fd })
    }

    /// Sleeps until the process exits, `timeout` passes or a signal arrives.
    pub fn wait(&self, timeout: Duration) -> io::Result<PidWait> {
        let mut pfd = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // Round up so a sub-millisecond remainder does not become a busy loop of 0 ms polls.
        let ms = timeout.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd, count 1.
        let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
        match rc {
            0 => Ok(PidWait::Timeout),
            n if n > 0 => Ok(PidWait::Exited),
            _ => {
                let err = crate::last_error();
                if err.kind() == io::ErrorKind::Interrupted {
                    Ok(PidWait::Interrupted)
                } else {
                    Err(err)
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spawn(args: &[&str]) -> i32 {
        let child = std::process::Command::new(args[0])
            .args(&args[1..])
            .spawn()
            .expect("spawn");
        let pid = child.id() as i32;
        // Reaped below by `reap` (wait4), not by std.
        std::mem::forget(child);
        pid
    }

    #[test]
    fn a_child_is_seen_exited_before_it_is_reaped_then_reaped_with_usage() {
        let pid = spawn(&["sh", "-c", "exit 3"]);
        let fd = PidFd::open(pid).expect("pidfd");
        let mut seen = false;
        for _ in 0..500 {
            if fd.wait(Duration::from_millis(10)).expect("poll") == PidWait::Exited {
                seen = true;
                break;
            }
        }
        assert!(seen, "child never exited");
        assert!(wait_exited(pid, false).expect("waitid"));
        assert!(wait_exited(pid, true).expect("waitid"));
        // Still a zombie: /proc/PID exists until we reap it.
        assert!(std::path::Path::new(&format!("/proc/{pid}/stat")).exists());
        let (exit, usage) = reap(pid, true).expect("wait4").expect("exited");
        assert_eq!(exit, Exit::Exited(3));
        assert!(usage.max_rss_kib > 0);
        assert!(!std::path::Path::new(&format!("/proc/{pid}/stat")).exists());
        // Reaped: a second reap fails (no such child).
        assert!(reap(pid, true).is_err());
    }

    #[test]
    fn a_running_child_is_not_reaped_without_blocking_and_a_killed_one_reports_the_signal() {
        let pid = spawn(&["sleep", "30"]);
        assert!(!wait_exited(pid, false).expect("waitid"));
        assert_eq!(reap(pid, false).expect("wait4"), None);
        send_signal(pid, libc::SIGKILL).expect("kill");
        assert!(wait_exited(pid, true).expect("waitid"));
        let (exit, _) = reap(pid, true).expect("wait4").expect("exited");
        assert_eq!(exit.signal(), Some(libc::SIGKILL));
    }

    #[test]
    fn signals_to_process_groups_are_refused() {
        assert!(send_signal(0, libc::SIGTERM).is_err());
        assert!(send_signal(-1, libc::SIGTERM).is_err());
    }
}
