//! What `sysmeter run` needs from the kernel about a child or a watched process: waiting for
//! a child's exit *without* reaping it (`waitid(WEXITED|WNOWAIT)`, so its `/proc/PID/io` can
//! still be read), reaping it with its resource usage (`wait4`, whose rusage covers the child
//! and every descendant it waited for), a pidfd to sleep until a process exits or a timeout
//! passes, sending a signal, and the clock-tick rate of `/proc/PID/stat` times.
//!
//! Signal forwarding (SIGINT/SIGTERM sent to sysmeter alone, not to its process group) lives
//! in [`forward`]. Depends only on `libc`.

pub mod forward;

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// How a child ended, from its wait status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// It called `exit(code)`.
    Exited(i32),
    /// A signal killed it.
    Signaled {
        /// Signal number.
        signal: i32,
        /// Whether it dumped core.
        core: bool,
    },
}

impl ExitKind {
    /// Decodes a `wait4` status word.
    pub fn from_status(status: i32) -> ExitKind {
        if libc::WIFSIGNALED(status) {
            ExitKind::Signaled {
                signal: libc::WTERMSIG(status),
                core: libc::WCOREDUMP(status),
            }
        } else {
            ExitKind::Exited(libc::WEXITSTATUS(status))
        }
    }

    /// The shell's convention: the exit code, or 128 + the signal number.
    pub fn shell_code(self) -> i32 {
        match self {
            ExitKind::Exited(code) => code,
            ExitKind::Signaled { signal, .. } => 128 + signal,
        }
    }
}

/// A reaped child's resource usage as `wait4` reports it: the child plus all descendants it
/// waited for. Times in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChildUsage {
    /// User CPU time, ns.
    pub user_ns: u64,
    /// System CPU time, ns.
    pub system_ns: u64,
    /// Largest resident set of the child or any waited-for descendant, KiB.
    pub max_rss_kib: u64,
    /// Minor (no I/O) page faults.
    pub minor_faults: u64,
    /// Major (I/O) page faults.
    pub major_faults: u64,
    /// Voluntary context switches (blocked and gave up the CPU).
    pub voluntary_switches: u64,
    /// Involuntary context switches (preempted).
    pub involuntary_switches: u64,
    /// Block input operations (512-byte units read from storage).
    pub in_blocks: u64,
    /// Block output operations (512-byte units written to storage).
    pub out_blocks: u64,
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    let s = u64::try_from(tv.tv_sec).unwrap_or(0);
    let us = u64::try_from(tv.tv_usec).unwrap_or(0);
    s * 1_000_000_000 + us * 1_000
}

fn nonneg(v: libc::c_long) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl ChildUsage {
    fn from_rusage(ru: &libc::rusage) -> ChildUsage {
        ChildUsage {
            user_ns: timeval_ns(ru.ru_utime),
            system_ns: timeval_ns(ru.ru_stime),
            max_rss_kib: nonneg(ru.ru_maxrss),
            minor_faults: nonneg(ru.ru_minflt),
            major_faults: nonneg(ru.ru_majflt),
            voluntary_switches: nonneg(ru.ru_nvcsw),
            involuntary_switches: nonneg(ru.ru_nivcsw),
            in_blocks: nonneg(ru.ru_inblock),
            out_blocks: nonneg(ru.ru_oublock),
        }
    }
}

/// Whether child `pid` has exited, **without reaping it** (`waitid(P_PID, pid,
/// WEXITED|WNOWAIT|WNOHANG)`): afterwards its `/proc/PID` entries (io, stat) stay readable
/// until [`reap`]. `Ok(false)` while it runs.
pub fn has_exited(pid: i32) -> io::Result<bool> {
    let Ok(id) = libc::id_t::try_from(pid) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    loop {
        // SAFETY: siginfo_t is plain data; zeroed means "no child reported" (si_pid 0).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let flags = libc::WEXITED | libc::WNOWAIT | libc::WNOHANG;
        // SAFETY: `info` is valid and writable; P_PID with our child's id.
        let rc = unsafe { libc::waitid(libc::P_PID, id, &mut info, flags) };
        if rc == 0 {
            // SAFETY: waitid filled `info` (or left it zeroed under WNOHANG); si_pid is
            // valid for the SIGCHLD-style info waitid returns.
            return Ok(unsafe { info.si_pid() } != 0);
        }
        let err = crate::last_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Reaps child `pid` (blocking until it has exited) and returns how it ended and its
/// resource usage, descendants included.
pub fn reap(pid: i32) -> io::Result<(ExitKind, ChildUsage)> {
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `status` and `ru` are valid and writable; `pid` is our child.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if rc == pid {
            return Ok((ExitKind::from_status(status), ChildUsage::from_rusage(&ru)));
        }
        let err = crate::last_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// What [`PidFd::wait`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PidWait {
    /// The process has exited (for a child: it is a zombie, not yet reaped).
    Exited,
    /// The timeout passed.
    Timeout,
    /// A signal arrived (check [`forward::take_pending`]).
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

/// Sends `signal` to process `pid`.
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

/// Clock ticks per second of the times in `/proc/PID/stat` (`sysconf(_SC_CLK_TCK)`, 100 on
/// every Linux architecture sysmeter supports).
pub fn clock_ticks_per_sec() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let v = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    u64::try_from(v).ok().filter(|&t| t > 0).unwrap_or(100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_codes_follow_the_convention() {
        assert_eq!(ExitKind::Exited(7).shell_code(), 7);
        let killed = ExitKind::Signaled {
            signal: libc::SIGINT,
            core: false,
        };
        assert_eq!(killed.shell_code(), 130);
    }

    #[test]
    #[allow(
        clippy::zombie_processes,
        reason = "reaped by `reap` (wait4), not by std"
    )]
    fn a_child_is_seen_exited_before_it_is_reaped_then_reaped_with_usage() {
        let child = std::process::Command::new("sh")
            .args(["-c", "exit 3"])
            .spawn()
            .expect("spawn sh");
        let pid = child.id() as i32;
        let fd = PidFd::open(pid).expect("pidfd");
        let mut seen = false;
        for _ in 0..500 {
            if fd.wait(Duration::from_millis(10)).expect("poll") == PidWait::Exited {
                seen = true;
                break;
            }
        }
        assert!(seen, "child never exited");
        assert!(has_exited(pid).expect("waitid"));
        // Still a zombie: /proc/PID exists until we reap it.
        assert!(std::path::Path::new(&format!("/proc/{pid}/stat")).exists());
        let (kind, usage) = reap(pid).expect("wait4");
        assert_eq!(kind, ExitKind::Exited(3));
        assert!(usage.max_rss_kib > 0);
        assert!(!std::path::Path::new(&format!("/proc/{pid}/stat")).exists());
    }

    #[test]
    fn clock_ticks_are_positive() {
        assert!(clock_ticks_per_sec() > 0);
    }
}
