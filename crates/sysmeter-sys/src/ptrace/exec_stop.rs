//! Holding a gated child at its `execve`: [`hold_at_exec`] seizes a [`crate::process::child::Child`]
//! that has not exec'd yet, [`ExecHold::wait_exec`] waits until the new program is loaded
//! (`PTRACE_EVENT_EXEC`, before its first instruction, the dynamic linker's included) and
//! [`ExecHold::let_go`] detaches it. Between the two the caller opens what must be opened
//! after the exec: the kernel drops every perf event of a process when it execs a setuid or
//! setgid program of another user (it is no longer dumpable), so `calls` opens its uprobe
//! events there. A tracer with CAP_SYS_PTRACE keeps the program's setuid bit (without it
//! the exec would run with the caller's ids). Depends only on `libc` and the siblings.

use std::io;

use super::{Options, Resume, detach, resume, seize, wait::wait_for};

/// A seized child that has not been let go yet.
#[derive(Debug)]
pub struct ExecHold {
    pid: i32,
}

/// Seizes child `pid` (still gated before its `execve`), so its exec stops it.
pub fn hold_at_exec(pid: i32) -> io::Result<ExecHold> {
    let opts = Options {
        follow_forks: false,
        seccomp: false,
        exit_kill: true,
    };
    seize(pid, opts)?;
    Ok(ExecHold { pid })
}

impl ExecHold {
    /// Waits until the child stopped right after its `execve`, passing on every signal that
    /// arrives first; `Err` if it ended before (it is then reaped).
    pub fn wait_exec(&mut self) -> io::Result<()> {
        loop {
            let status = wait_for(self.pid)?;
            if !libc::WIFSTOPPED(status) {
                return Err(io::Error::other("the command ended before its exec"));
            }
            if status >> 16 == libc::PTRACE_EVENT_EXEC {
                return Ok(());
            }
            // A signal-delivery stop delivers its signal; event stops deliver nothing.
            let signal = match status >> 16 {
                0 => libc::WSTOPSIG(status),
                _ => 0,
            };
            resume(self.pid, Resume::Continue, signal)?;
        }
    }

    /// Detaches the child stopped at its exec: it runs on, no longer traced.
    pub fn let_go(self) -> io::Result<()> {
        detach(self.pid, 0)
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;
    use std::path::Path;

    use super::hold_at_exec;
    use crate::process::child::Child;

    /// The state letter of process `pid` (`t`: stopped by a tracer).
    fn state(pid: i32) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("stat");
        let after = stat.rsplit_once(") ").expect("comm").1;
        after.chars().next().expect("state")
    }

    #[test]
    fn a_held_child_stops_after_its_exec_and_runs_on_when_let_go() {
        let sh = Path::new("/bin/sh");
        let argv = [OsStr::new("sh"), OsStr::new("-c"), OsStr::new("exit 7")];
        let mut child = Child::spawn(sh, &argv).expect("fork");
        let Ok(mut hold) = hold_at_exec(child.pid()) else {
            crate::skip::skip("ptrace", "ptrace is refused here (Yama ptrace_scope 3?)");
            return;
        };
        child.release().expect("exec");
        hold.wait_exec().expect("the exec stop");
        let exe = std::fs::read_link(format!("/proc/{}/exe", child.pid())).expect("exe");
        let shell = std::fs::canonicalize(sh).expect("sh");
        assert_eq!((exe, state(child.pid())), (shell, 't'));
        hold.let_go().expect("detach");
        let (exit, _) = child.wait(true).expect("wait").expect("ended");
        assert_eq!(exit.code(), Some(7));
    }
}
