//! Attaching to a running process (`trace -p`) and detaching from everything traced.
//!
//! Attach: `PTRACE_SEIZE` + `PTRACE_INTERRUPT` every thread in `/proc/PID/task`, rescanning
//! until a pass finds no new thread (threads created meanwhile are caught either by the
//! rescan or, once their creator is seized, by `PTRACE_O_TRACECLONE`).
//!
//! Detach happens only from a ptrace-stop. Seized tasks are interrupted and detached at
//! their next stop, with a pending signal passed on. Tasks of a launched command
//! (`PTRACE_TRACEME`, where `PTRACE_INTERRUPT` does not work) are sent SIGSTOP and resumed
//! with `PTRACE_CONT` until that SIGSTOP shows up, which is then suppressed by detaching
//! with no signal, so the command never sees it.

use std::io;
use std::time::{Duration, Instant};

use sysmeter_sys::ptrace::{self as pt, Options, Resume, Stop};

use super::{Session, Task};
use crate::diagnose::trace::summary::Collector;

/// Why attaching failed.
#[derive(Debug)]
pub(in crate::diagnose::trace) enum AttachError {
    /// No such process.
    NoProcess,
    /// The kernel refused (`EPERM`): another tracer, or no permission.
    Refused(io::Error),
    /// Anything else.
    Other(io::Error),
}

/// How long detaching may take before giving up on tasks that never stop.
const DETACH_TIMEOUT: Duration = Duration::from_secs(5);

/// The thread ids of process `pid`.
fn threads(pid: i32) -> io::Result<Vec<i32>> {
    let mut tids: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

impl Session {
    /// Seizes every thread of `pid`; with `follow_forks` also its future child processes.
    pub fn attach(pid: i32, follow_forks: bool) -> Result<Session, AttachError> {
        let options = Options {
            follow_forks,
            seccomp: false,
            exit_kill: false,
        };
        let mut s = Session::empty(pid, false, follow_forks);
        s.seized = true;
        loop {
            let tids = threads(pid).map_err(|e| match e.kind() {
                io::ErrorKind::NotFound if s.tasks.is_empty() => AttachError::NoProcess,
                _ => AttachError::Other(e),
            })?;
            let mut added = false;
            let fresh: Vec<i32> = tids
                .into_iter()
                .filter(|t| !s.tasks.contains_key(t))
                .collect();
            for tid in fresh {
                match pt::seize(tid, options).and_then(|()| pt::interrupt(tid)) {
                    Ok(()) => {}
                    // The thread exited between the listing and the seize.
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) && tid != pid => continue,
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => {
                        return Err(AttachError::NoProcess);
                    }
                    Err(e) if s.tasks.is_empty() => return Err(AttachError::Refused(e)),
                    Err(e) => return Err(AttachError::Other(e)),
                }
                let task = Task {
                    tgid: pid,
                    record: true,
                    want_exit: false,
                    fresh: true,
                };
                s.tasks.insert(tid, task);
                added = true;
            }
            if !added {
                return Ok(s);
            }
        }
    }

    /// Detaches from every traced task, leaving them running. Returns how many tasks were
    /// still traced when the timeout passed (0 when all went well).
    pub fn detach_all(&mut self, c: &mut Collector) -> io::Result<usize> {
        c.drop_open();
        self.recording = false;
        let tids: Vec<(i32, i32)> = self.tasks.iter().map(|(&t, k)| (t, k.tgid)).collect();
        for (tid, tgid) in tids {
            let sent = if self.seized {
                pt::interrupt(tid)
            } else {
                pt::tgkill(tgid, tid, libc::SIGSTOP)
            };
            if sent.is_err() {
                self.tasks.remove(&tid);
            }
        }
        let deadline = Instant::now() + DETACH_TIMEOUT;
        while !self.tasks.is_empty() && Instant::now() < deadline {
            let (stop, _) = pt::wait_any()?;
            match stop {
                Stop::Interrupted => {}
                Stop::NoTasks => self.tasks.clear(),
                stop => self.detach_at(stop),
            }
        }
        Ok(self.tasks.len())
    }

    /// One stop while detaching: let the task go if this stop allows it, else resume it
    /// (without syscall stops) until it does.
    fn detach_at(&mut self, stop: Stop) {
        let Some(tid) = stop.tid() else {
            return;
        };
        if let Stop::Exited { code, .. } = stop {
            self.note_exit(tid, code);
            return;
        }
        if let Stop::Killed { signal, .. } = stop {
            self.note_exit(tid, 128 + signal);
            return;
        }
        if let Stop::NewTask { child, .. } = stop {
            // The new task is traced too and will stop; detach it at that stop.
            let tgid = super::tgid_of(child).unwrap_or(child);
            let t = Task {
                tgid,
                record: false,
                want_exit: false,
                fresh: true,
            };
            self.tasks.entry(child).or_insert(t);
        }
        let known = self.tasks.contains_key(&tid);
        let (release, signal) = match stop {
            Stop::Signal { signal, .. } if self.seized => (true, signal),
            Stop::Signal { signal, .. } if signal == libc::SIGSTOP => (true, 0),
            Stop::Signal { .. } if pt::is_group_stop(tid) => (false, 0),
            Stop::Signal { signal, .. } => (false, signal),
            _ if self.seized || !known => (true, 0),
            _ => (false, 0),
        };
        if release {
            let _ = pt::detach(tid, signal);
            self.tasks.remove(&tid);
        } else if pt::resume(tid, Resume::Continue, signal).is_err() {
            self.tasks.remove(&tid);
        }
    }

    fn note_exit(&mut self, tid: i32, code: i32) {
        if tid == self.main_tgid {
            self.exit_code = Some(code);
        }
        self.tasks.remove(&tid);
    }
}
