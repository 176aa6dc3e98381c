//! The ptrace backend's event loop: follows every stop of every traced task, pairs
//! system-call entries (syscall-entry or seccomp stops) with exits into the [`Collector`],
//! follows new threads (and with `-f` new processes), swallows the initial stop of new
//! tasks, forwards real signals, and detaches cleanly on request.
//!
//! Two modes: without a filter every call stops the tracee twice (`PTRACE_SYSCALL`); with a
//! seccomp filter only selected calls stop it (`SECCOMP_RET_TRACE`, then `PTRACE_SYSCALL` to
//! catch that call's exit, then `PTRACE_CONT`). A call's time is the tracer's
//! CLOCK_MONOTONIC between the two stops, so it contains one ptrace round trip, which the
//! collector subtracts (calibrated). The path argument of path-taking calls is read at the
//! entry stop ([`paths`]). Uses only sysmeter-sys's ptrace mechanism.

mod attach;
mod paths;

pub(super) use attach::AttachError;

use std::collections::HashMap;
use std::io;

use sysmeter_sys::ptrace::{self as pt, NewTaskKind, Resume, Stop, SyscallStop};

use super::names;
use super::summary::Collector;

/// One traced task.
#[derive(Debug, Clone, Copy)]
struct Task {
    /// Its process (thread group) id.
    tgid: i32,
    /// Whether its calls are counted (threads of the target; other processes with -f).
    record: bool,
    /// Between a seccomp stop and that call's exit stop.
    want_exit: bool,
    /// Its first stop (the SIGSTOP or PTRACE_EVENT_STOP every new tracee starts with) is
    /// still to come and must be swallowed.
    fresh: bool,
}

/// Why the loop returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum End {
    /// Every traced task is gone.
    AllGone,
    /// The caller asked to stop (Ctrl-C, `--duration`).
    Requested,
}

/// Counters about the session, for findings.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SessionStats {
    /// Stops handled.
    pub stops: u64,
    /// Tasks that joined (threads and processes).
    pub new_tasks: u64,
    /// Signals passed on to tracees.
    pub signals: u64,
}

/// A running ptrace session over one target process (and what it creates).
#[derive(Debug)]
pub(super) struct Session {
    seccomp: bool,
    follow_forks: bool,
    main_tgid: i32,
    /// Launched commands: count nothing before the target's own execve (the fork's
    /// leftovers of the stop and the seccomp setup are sysmeter's, not the command's).
    started: bool,
    /// While false, the collector is not fed (after the report, when tracing must go on
    /// because of the seccomp filter).
    recording: bool,
    /// Attached with PTRACE_SEIZE (so PTRACE_INTERRUPT works), not PTRACE_TRACEME.
    seized: bool,
    tasks: HashMap<i32, Task>,
    /// Reads the path arguments of path-taking calls.
    paths: paths::PathReader,
    /// Exit code of the main process's leader (128 + signal when killed).
    pub exit_code: Option<i32>,
    /// Counters.
    pub stats: SessionStats,
}

impl Session {
    /// A session over a child started (and stopped) by `spawn_traced` or the calibration.
    /// `count_from_exec`: ignore calls until the child's execve.
    pub fn launched(pid: i32, seccomp: bool, follow_forks: bool, count_from_exec: bool) -> Self {
        let mut s = Session::empty(pid, seccomp, follow_forks);
        s.started = !count_from_exec || seccomp;
        s.tasks.insert(
            pid,
            Task {
                tgid: pid,
                record: true,
                want_exit: false,
                fresh: false,
            },
        );
        s
    }

    fn empty(main_tgid: i32, seccomp: bool, follow_forks: bool) -> Self {
        Session {
            seccomp,
            follow_forks,
            main_tgid,
            started: true,
            recording: true,
            seized: false,
            tasks: HashMap::new(),
            paths: paths::PathReader::default(),
            exit_code: None,
            stats: SessionStats::default(),
        }
    }

    /// Resumes the stopped, just-launched child.
    pub fn start(&self) -> io::Result<()> {
        let how = if self.seccomp {
            Resume::Continue
        } else {
            Resume::Syscall
        };
        pt::resume(self.main_tgid, how, 0)
    }

    /// Number of traced tasks.
    pub fn task_count(&self) -> usize {
        self.tasks.len()
    }

    /// Stops feeding the collector (the tracer stays attached).
    pub fn stop_recording(&mut self) {
        self.recording = false;
    }

    fn how(&self, t: &Task) -> Resume {
        if !self.seccomp || t.want_exit {
            Resume::Syscall
        } else {
            Resume::Continue
        }
    }

    /// Resumes `tid`; a task that vanished meanwhile (ESRCH) is forgotten.
    fn resume(&mut self, tid: i32, signal: i32, c: &mut Collector) {
        let how = self
            .tasks
            .get(&tid)
            .map_or(Resume::Syscall, |t| self.how(t));
        if pt::resume(tid, how, signal).is_err() {
            self.gone(tid, c);
        }
    }

    fn gone(&mut self, tid: i32, c: &mut Collector) {
        self.tasks.remove(&tid);
        c.forget(tid);
    }

    /// Follows stops until every task is gone or `stop_requested()` says to stop (checked
    /// after every stop and every EINTR, so run it with a [`pt::WaitTicker`]).
    pub fn run(
        &mut self,
        c: &mut Collector,
        stop_requested: &mut dyn FnMut(&Collector) -> bool,
    ) -> io::Result<End> {
        loop {
            if self.tasks.is_empty() {
                return Ok(End::AllGone);
            }
            if stop_requested(c) {
                return Ok(End::Requested);
            }
            let (stop, at) = pt::wait_any()?;
            match stop {
                Stop::Interrupted => continue,
                Stop::NoTasks => {
                    self.tasks.clear();
                    return Ok(End::AllGone);
                }
                stop => self.handle(stop, at, c),
            }
        }
    }

    /// A task we did not know stopped: a new task whose creator's event is still to come.
    fn adopt(&mut self, tid: i32) -> Task {
        let tgid = tgid_of(tid).unwrap_or(tid);
        let t = Task {
            tgid,
            record: self.follow_forks || tgid == self.main_tgid,
            want_exit: false,
            fresh: true,
        };
        self.tasks.insert(tid, t);
        self.stats.new_tasks += 1;
        t
    }

    fn counting(&self, t: &Task) -> bool {
        self.recording && self.started && t.record
    }

    fn handle(&mut self, stop: Stop, at: i64, c: &mut Collector) {
        self.stats.stops += 1;
        let Some(tid) = stop.tid() else {
            return;
        };
        let mut task = match self.tasks.get(&tid) {
            Some(t) => *t,
            None if matches!(stop, Stop::Exited { .. } | Stop::Killed { .. }) => {
                return self.ended(stop, c);
            }
            None => self.adopt(tid),
        };
        if task.fresh {
            task.fresh = false;
            self.tasks.insert(tid, task);
            let initial = matches!(stop, Stop::EventStop { .. })
                || matches!(stop, Stop::Signal { signal, .. } if signal == libc::SIGSTOP);
            if initial {
                return self.resume(tid, 0, c);
            }
        }
        match stop {
            Stop::Exited { .. } | Stop::Killed { .. } => self.ended(stop, c),
            Stop::Syscall { info, .. } => self.syscall_stop(tid, task, info, at, c),
            Stop::Seccomp { arch, nr, args, .. } => {
                if self.counting(&task) {
                    self.paths.enter(c, tid, (arch, nr), &args, at);
                }
                self.set_want_exit(tid, true);
                self.resume(tid, 0, c);
            }
            Stop::NewTask { child, kind, .. } => {
                self.new_task(&task, child, kind);
                self.resume(tid, 0, c);
            }
            Stop::Exec { former_tid, .. } => {
                if former_tid != tid {
                    c.rename(former_tid, tid);
                    self.tasks.remove(&former_tid);
                }
                self.resume(tid, 0, c);
            }
            Stop::Signal { signal, .. } => {
                // A group-stop of a TRACEME tracee is resumed, not re-injected.
                let signal = if pt::is_group_stop(tid) { 0 } else { signal };
                self.stats.signals += u64::from(signal != 0);
                self.resume(tid, signal, c);
            }
            Stop::EventStop { signal, .. } if self.seized && is_stop_signal(signal) => {
                // A group-stop (SIGSTOP, Ctrl-Z…) of an attached process: let it stay
                // stopped, as it would without us, until SIGCONT.
                if pt::listen(tid).is_err() {
                    self.gone(tid, c);
                }
            }
            Stop::EventStop { .. } | Stop::OtherEvent { .. } => self.resume(tid, 0, c),
            Stop::Interrupted | Stop::NoTasks => {}
        }
    }

    fn set_want_exit(&mut self, tid: i32, v: bool) {
        if let Some(t) = self.tasks.get_mut(&tid) {
            t.want_exit = v;
        }
    }

    fn syscall_stop(
        &mut self,
        tid: i32,
        task: Task,
        info: SyscallStop,
        at: i64,
        c: &mut Collector,
    ) {
        match info {
            SyscallStop::Entry { arch, nr, args } => {
                if !self.started && tid == self.main_tgid && is_exec(arch, nr) {
                    self.started = true;
                }
                if self.counting(&task) {
                    self.paths.enter(c, tid, (arch, nr), &args, at);
                }
            }
            SyscallStop::Exit { rval, is_error } => {
                if self.counting(&task) {
                    c.exit(tid, None, rval, is_error, at);
                }
                self.set_want_exit(tid, false);
            }
            SyscallStop::Unknown => {}
        }
        self.resume(tid, 0, c);
    }

    fn new_task(&mut self, parent: &Task, child: i32, kind: NewTaskKind) {
        let tgid = match kind {
            NewTaskKind::Fork | NewTaskKind::Vfork => child,
            NewTaskKind::Clone => tgid_of(child).unwrap_or(parent.tgid),
        };
        if self.tasks.contains_key(&child) {
            // Its first stop came first and adopted it; only fix the process id.
            if let Some(t) = self.tasks.get_mut(&child) {
                t.tgid = tgid;
            }
            return;
        }
        self.stats.new_tasks += 1;
        let record = self.follow_forks || tgid == self.main_tgid;
        let t = Task {
            tgid,
            record,
            want_exit: false,
            fresh: true,
        };
        self.tasks.insert(child, t);
    }

    fn ended(&mut self, stop: Stop, c: &mut Collector) {
        let (tid, code) = match stop {
            Stop::Exited { tid, code } => (tid, code),
            Stop::Killed { tid, signal } => (tid, 128 + signal),
            _ => return,
        };
        if tid == self.main_tgid {
            self.exit_code = Some(code);
        }
        self.gone(tid, c);
    }
}

/// Whether `signal` stops a process (the signal a group-stop reports).
fn is_stop_signal(signal: i32) -> bool {
    matches!(
        signal,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// Whether call `nr` of `arch` is execve or execveat.
fn is_exec(arch: u32, nr: u64) -> bool {
    matches!(names::name(arch, nr).as_ref(), "execve" | "execveat")
}

/// The process id of thread `tid`, from `/proc/TID/status`.
fn tgid_of(tid: i32) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    text.lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}
