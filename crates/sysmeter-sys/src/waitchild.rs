//! Waiting for a child precisely, for `sysmeter scale`: block until the child exits *without*
//! reaping it (`waitid` with `WNOWAIT`), so its pid stays reserved and another thread may
//! still signal it without hitting a recycled pid; then reap it with `wait4`, which also
//! returns the child's own CPU time and peak RSS.

use std::io;

/// What `wait4` reported about a reaped child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reaped {
    /// Raw wait status (decode with `std::os::unix::process::ExitStatusExt::from_raw`).
    pub status: i32,
    /// User CPU time of the child (and its waited-for descendants), ns.
    pub user_ns: u64,
    /// System CPU time, ns.
    pub system_ns: u64,
    /// Peak resident set size, KiB.
    pub max_rss_kib: u64,
}

/// Blocks until child `pid` has exited (or was killed) but leaves it a zombie: the pid cannot
/// be reused until [`reap`] is called. Retries when a signal interrupts the wait.
pub fn wait_exit_keep(pid: u32) -> io::Result<()> {
    let id = libc::id_t::from(pid);
    loop {
        // SAFETY: siginfo_t is plain data; zeroed is a valid value for waitid to fill in.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is valid and writable; P_PID with our child's pid; WNOWAIT leaves
        // the child waitable, so no state is lost.
        let rc = unsafe { libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if rc == 0 {
            return Ok(());
        }
        let err = crate::last_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Reaps child `pid` (blocking until it exits) and returns its status and resource usage.
pub fn reap(pid: u32) -> io::Result<Reaped> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    loop {
        let mut status = 0;
        // SAFETY: rusage is plain data; zeroed is a valid value for wait4 to fill in.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `status` and `ru` are valid and writable; `pid` is our child.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if rc == pid {
            return Ok(Reaped {
                status,
                user_ns: timeval_ns(ru.ru_utime),
                system_ns: timeval_ns(ru.ru_stime),
                max_rss_kib: u64::try_from(ru.ru_maxrss).unwrap_or(0),
            });
        }
        let err = crate::last_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// Sends SIGKILL to child `pid`. Only call it on a child that has not been reaped yet.
pub fn kill(pid: u32) -> io::Result<()> {
    let pid = libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ESRCH))?;
    // SAFETY: plain system call; the caller guarantees `pid` is an unreaped child of ours,
    // so it names that process and no other.
    if unsafe { libc::kill(pid, libc::SIGKILL) } != 0 {
        return Err(crate::last_error());
    }
    Ok(())
}

fn timeval_ns(tv: libc::timeval) -> u64 {
    let secs = u64::try_from(tv.tv_sec).unwrap_or(0);
    let micros = u64::try_from(tv.tv_usec).unwrap_or(0);
    secs.saturating_mul(1_000_000_000)
        .saturating_add(micros.saturating_mul(1000))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, ExitStatus};

    #[test]
    #[allow(clippy::zombie_processes)] // reaped by pid with wait4, which is the point
    fn a_child_is_waited_for_then_reaped_with_its_status() {
        let child = Command::new("sh")
            .args(["-c", "exit 3"])
            .spawn()
            .expect("sh runs");
        wait_exit_keep(child.id()).expect("waitid");
        // Still a zombie: reaping now returns its status.
        let r = reap(child.id()).expect("wait4");
        assert_eq!(ExitStatus::from_raw(r.status).code(), Some(3));
        assert!(r.max_rss_kib > 0);
        // Reaped: a second reap fails (no such child).
        assert!(reap(child.id()).is_err());
    }

    #[test]
    #[allow(clippy::zombie_processes)] // reaped by pid with wait4, which is the point
    fn a_killed_child_reports_the_signal() {
        let child = Command::new("sleep").arg("30").spawn().expect("sleep runs");
        kill(child.id()).expect("kill");
        wait_exit_keep(child.id()).expect("waitid");
        let r = reap(child.id()).expect("wait4");
        assert_eq!(ExitStatus::from_raw(r.status).signal(), Some(libc::SIGKILL));
    }
}
