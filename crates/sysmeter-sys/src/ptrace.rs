//! ptrace mechanism for `sysmeter trace`: start a traced child ([`spawn_traced`]), seize
//! a running thread ([`seize`]), wait for the next stop of any tracee and say what kind of
//! stop it is ([`wait_any`]), read the system call at a stop (`PTRACE_GET_SYSCALL_INFO`,
//! arch-independent), resume, interrupt and detach.
//!
//! Only the mechanism lives here; the policy (which stops to count, how to pair entries and
//! exits, when to detach) is the caller's. Raw `libc::ptrace`/`waitpid` are used instead of
//! nix's wrappers because those cannot represent real-time signals: a tracee stopped by
//! SIGRTMIN (glibc uses it for thread cancellation and set*id) would otherwise be lost and
//! stay stopped forever. Signals are plain `i32` numbers throughout.
//! Depends only on `libc`.

mod exec_stop;
mod memory;
mod spawn;
mod ticker;
mod wait;

pub use exec_stop::{ExecHold, hold_at_exec};
pub use memory::read_c_string;
pub use spawn::{
    CalibrationChild, CalibrationMode, MAX_CHUNKS, SpawnSpec, TracedChild, spawn_calibration,
    spawn_traced,
};
pub use ticker::WaitTicker;
pub use wait::wait_any;

use std::io;

/// `PTRACE_EVENT_STOP` (group-stop or `PTRACE_INTERRUPT` stop of a seized task).
pub(crate) const PTRACE_EVENT_STOP: i32 = 128;

/// Which ptrace options to set on a tracee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Options {
    /// Follow `fork`/`vfork` children (threads are always followed).
    pub follow_forks: bool,
    /// Report `SECCOMP_RET_TRACE` stops (`PTRACE_O_TRACESECCOMP`).
    pub seccomp: bool,
    /// Kill the tracees if the tracer exits (`PTRACE_O_EXITKILL`); for launched commands.
    pub exit_kill: bool,
}

impl Options {
    fn bits(self) -> libc::c_int {
        let mut bits =
            libc::PTRACE_O_TRACESYSGOOD | libc::PTRACE_O_TRACECLONE | libc::PTRACE_O_TRACEEXEC;
        if self.follow_forks {
            bits |= libc::PTRACE_O_TRACEFORK | libc::PTRACE_O_TRACEVFORK;
        }
        if self.seccomp {
            bits |= libc::PTRACE_O_TRACESECCOMP;
        }
        if self.exit_kill {
            bits |= libc::PTRACE_O_EXITKILL;
        }
        bits
    }
}

/// How a new task was created (`PTRACE_EVENT_FORK`/`VFORK`/`CLONE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewTaskKind {
    /// fork(2) or clone with SIGCHLD: a new process.
    Fork,
    /// vfork(2).
    Vfork,
    /// Any other clone: usually a thread.
    Clone,
}

/// What `PTRACE_GET_SYSCALL_INFO` says at a system-call stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyscallStop {
    /// Entry: the architecture (`AUDIT_ARCH_*`), the system call number and its arguments.
    Entry {
        /// `AUDIT_ARCH_*` of the calling task.
        arch: u32,
        /// System call number in that architecture's table.
        nr: u64,
        /// The six argument registers (pointers are addresses in the tracee).
        args: [u64; 6],
    },
    /// Exit: the return value, and whether it is an error (`-errno`).
    Exit {
        /// Return value (`-errno` on error).
        rval: i64,
        /// Whether `rval` is an error.
        is_error: bool,
    },
    /// Not a system-call stop after all, or the task vanished before it could be read.
    Unknown,
}

/// One stop (or end) of a tracee, as reported by [`wait_any`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The task exited with `code`.
    Exited {
        /// Thread id.
        tid: i32,
        /// Exit code.
        code: i32,
    },
    /// The task was killed by `signal`.
    Killed {
        /// Thread id.
        tid: i32,
        /// Signal number.
        signal: i32,
    },
    /// A system-call entry or exit stop (`PTRACE_O_TRACESYSGOOD`).
    Syscall {
        /// Thread id.
        tid: i32,
        /// The call.
        info: SyscallStop,
    },
    /// A `SECCOMP_RET_TRACE` stop: entry of a selected call.
    Seccomp {
        /// Thread id.
        tid: i32,
        /// `AUDIT_ARCH_*`.
        arch: u32,
        /// System call number.
        nr: u64,
        /// The six argument registers (pointers are addresses in the tracee).
        args: [u64; 6],
    },
    /// The task created `child`, which is traced from now on.
    NewTask {
        /// Thread id of the creator.
        tid: i32,
        /// The new task's id.
        child: i32,
        /// fork, vfork or clone.
        kind: NewTaskKind,
    },
    /// The task completed an execve; `former_tid` is the id it had before (differs when a
    /// non-leader thread exec'd and took over the leader's id).
    Exec {
        /// Thread id now.
        tid: i32,
        /// Thread id before the exec.
        former_tid: i32,
    },
    /// `PTRACE_EVENT_STOP`: an interrupt, a seized task's first stop, or a group-stop by
    /// `signal` (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) of a seized task.
    EventStop {
        /// Thread id.
        tid: i32,
        /// Stop signal.
        signal: i32,
    },
    /// A signal is about to be delivered (or, for non-seized tasks, a group-stop: check
    /// [`is_group_stop`]).
    Signal {
        /// Thread id.
        tid: i32,
        /// Signal number.
        signal: i32,
    },
    /// Another ptrace event (`PTRACE_EVENT_EXIT`, `VFORK_DONE`): resume and move on.
    OtherEvent {
        /// Thread id.
        tid: i32,
    },
    /// `waitpid` was interrupted by a signal (Ctrl-C, the [`WaitTicker`]).
    Interrupted,
    /// No tracee and no child left.
    NoTasks,
}

impl Stop {
    /// The thread the stop belongs to, if any.
    pub fn tid(&self) -> Option<i32> {
        match *self {
            Stop::Exited { tid, .. }
            | Stop::Killed { tid, .. }
            | Stop::Syscall { tid, .. }
            | Stop::Seccomp { tid, .. }
            | Stop::NewTask { tid, .. }
            | Stop::Exec { tid, .. }
            | Stop::EventStop { tid, .. }
            | Stop::Signal { tid, .. }
            | Stop::OtherEvent { tid } => Some(tid),
            Stop::Interrupted | Stop::NoTasks => None,
        }
    }
}

/// How to let a stopped tracee go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// `PTRACE_SYSCALL`: stop at the next system-call entry or exit.
    Syscall,
    /// `PTRACE_CONT`: run until the next event, signal or seccomp stop.
    Continue,
}

/// `ptrace(request, tid, addr, data)` with integer arguments; `Err` with errno on -1.
fn request(req: libc::c_uint, tid: i32, addr: usize, data: usize) -> io::Result<libc::c_long> {
    // SAFETY: the requests passed here (SETOPTIONS, SYSCALL, CONT, SEIZE, INTERRUPT, DETACH,
    // TRACEME) take integers in addr/data and never dereference them; the kernel checks the
    // tid and returns ESRCH for tasks that are not our stopped tracees.
    let rc = unsafe {
        libc::ptrace(
            req,
            tid,
            addr as *mut libc::c_void,
            data as *mut libc::c_void,
        )
    };
    if rc == -1 {
        Err(crate::last_error())
    } else {
        Ok(rc)
    }
}

/// Sets `opts` on a stopped tracee.
pub fn set_options(tid: i32, opts: Options) -> io::Result<()> {
    request(libc::PTRACE_SETOPTIONS, tid, 0, opts.bits() as usize).map(drop)
}

/// Resumes a stopped tracee, delivering `signal` (0 = none).
pub fn resume(tid: i32, how: Resume, signal: i32) -> io::Result<()> {
    let req = match how {
        Resume::Syscall => libc::PTRACE_SYSCALL,
        Resume::Continue => libc::PTRACE_CONT,
    };
    request(req, tid, 0, signal.max(0) as usize).map(drop)
}

/// `PTRACE_SEIZE` one thread with `opts` (it keeps running; see [`interrupt`]).
pub fn seize(tid: i32, opts: Options) -> io::Result<()> {
    request(libc::PTRACE_SEIZE, tid, 0, opts.bits() as usize).map(drop)
}

/// `PTRACE_INTERRUPT`: make a seized thread stop soon with a [`Stop::EventStop`].
pub fn interrupt(tid: i32) -> io::Result<()> {
    request(libc::PTRACE_INTERRUPT, tid, 0, 0).map(drop)
}

/// `PTRACE_LISTEN`: leave a seized thread in its group-stop (it stays stopped, as without
/// a tracer, until SIGCONT) while the tracer keeps waiting for its next event.
pub fn listen(tid: i32) -> io::Result<()> {
    request(libc::PTRACE_LISTEN, tid, 0, 0).map(drop)
}

/// `PTRACE_DETACH` a thread that is in a ptrace-stop, delivering `signal` (0 = none).
pub fn detach(tid: i32, signal: i32) -> io::Result<()> {
    request(libc::PTRACE_DETACH, tid, 0, signal.max(0) as usize).map(drop)
}

/// Whether a [`Stop::Signal`] of a non-seized tracee is really a group-stop
/// (`PTRACE_GETSIGINFO` fails with EINVAL there).
pub fn is_group_stop(tid: i32) -> bool {
    // SAFETY: siginfo_t is plain data; zeroed is a valid value.
    let mut si: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `si` is a valid, writable siginfo_t the kernel fills in.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_GETSIGINFO,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut si as *mut libc::siginfo_t as *mut libc::c_void,
        )
    };
    rc == -1 && crate::last_error().raw_os_error() == Some(libc::EINVAL)
}

pub(crate) fn event_msg(tid: i32) -> io::Result<u64> {
    // unsigned long is 64 bits on the 64-bit targets sysmeter supports.
    let mut msg: u64 = 0;
    // SAFETY: `msg` is a valid, writable unsigned long the kernel fills in.
    let rc = unsafe {
        libc::ptrace(
            libc::PTRACE_GETEVENTMSG,
            tid,
            std::ptr::null_mut::<libc::c_void>(),
            &mut msg as *mut u64 as *mut libc::c_void,
        )
    };
    if rc == -1 {
        Err(crate::last_error())
    } else {
        Ok(msg)
    }
}

/// Sends `signal` to one thread of process `tgid` (`tgkill`).
pub fn tgkill(tgid: i32, tid: i32, signal: i32) -> io::Result<()> {
    // SAFETY: tgkill takes integers only.
    let rc = unsafe { libc::syscall(libc::SYS_tgkill, tgid, tid, signal) };
    if rc == -1 {
        Err(crate::last_error())
    } else {
        Ok(())
    }
}
