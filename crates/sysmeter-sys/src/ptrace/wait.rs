//! Waiting for tracees: [`wait_any`] (`waitpid(-1, __WALL)`) classifies each stop into a
//! [`Stop`] and reads the system call at syscall and seccomp stops with
//! `PTRACE_GET_SYSCALL_INFO` (arch-independent: no `orig_rax` vs `regs[8]`); plus the wait
//! for one tracee's stop right after spawning (a child's exit is reaped with
//! [`crate::process::wait::reap`]).

use std::io;

use super::{NewTaskKind, PTRACE_EVENT_STOP, Stop, SyscallStop, event_msg};

/// `struct ptrace_syscall_info` as the kernel lays it out; the union is read as words so no
/// union access (and no dependency on glibc's definition) is needed.
#[repr(C)]
#[derive(Default)]
struct RawSyscallInfo {
    op: u8,
    reserved: u8,
    flags: u16,
    arch: u32,
    instruction_pointer: u64,
    stack_pointer: u64,
    /// entry: nr, `args[6]`; exit: rval, is_error (low byte); seccomp: nr, `args[6]`, ret_data.
    data: [u64; 8],
}

const OP_ENTRY: u8 = 1;
const OP_EXIT: u8 = 2;
const OP_SECCOMP: u8 = 3;
const PTRACE_GET_SYSCALL_INFO: libc::c_uint = 0x420e;

fn syscall_info(tid: i32) -> io::Result<RawSyscallInfo> {
    let mut info = RawSyscallInfo::default();
    // SAFETY: the kernel writes at most `size` bytes into `info`, which is that large and
    // writable.
    let rc = unsafe {
        libc::ptrace(
            PTRACE_GET_SYSCALL_INFO,
            tid,
            std::mem::size_of::<RawSyscallInfo>() as *mut libc::c_void,
            &mut info as *mut RawSyscallInfo as *mut libc::c_void,
        )
    };
    if rc == -1 {
        Err(crate::last_error())
    } else {
        Ok(info)
    }
}

/// The six arguments of an entry or seccomp record (after the call number).
fn args(i: &RawSyscallInfo) -> [u64; 6] {
    let mut a = [0u64; 6];
    a.copy_from_slice(&i.data[1..7]);
    a
}

fn syscall_stop(tid: i32) -> SyscallStop {
    match syscall_info(tid) {
        Ok(i) if i.op == OP_ENTRY => SyscallStop::Entry {
            arch: i.arch,
            nr: i.data[0],
            args: args(&i),
        },
        Ok(i) if i.op == OP_EXIT => SyscallStop::Exit {
            rval: i.data[0] as i64,
            is_error: i.data[1].to_ne_bytes()[if cfg!(target_endian = "little") { 0 } else { 7 }]
                != 0,
        },
        _ => SyscallStop::Unknown,
    }
}

/// Waits for the next stop or exit of any tracee (`waitpid(-1, __WALL)`), and returns it
/// with the CLOCK_MONOTONIC time (ns) read right after `waitpid` returned, before any
/// further ptrace request, so entry and exit stops are stamped the same way.
pub fn wait_any() -> io::Result<(Stop, i64)> {
    let mut status = 0;
    // SAFETY: `status` is a valid, writable int.
    let tid = unsafe { libc::waitpid(-1, &mut status, libc::__WALL) };
    let at = crate::clock::clock_gettime_ns(crate::clock::ClockId::Monotonic);
    if tid == -1 {
        let err = crate::last_error();
        return match err.raw_os_error() {
            Some(libc::EINTR) => Ok((Stop::Interrupted, at)),
            Some(libc::ECHILD) => Ok((Stop::NoTasks, at)),
            _ => Err(err),
        };
    }
    Ok((classify(tid, status), at))
}

/// Waits for one specific task (used right after spawning, before the trace loop).
pub(super) fn wait_for(tid: i32) -> io::Result<libc::c_int> {
    loop {
        let mut status = 0;
        // SAFETY: `status` is a valid, writable int.
        let rc = unsafe { libc::waitpid(tid, &mut status, libc::__WALL) };
        if rc == tid {
            return Ok(status);
        }
        let err = crate::last_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

fn classify(tid: i32, status: libc::c_int) -> Stop {
    if libc::WIFEXITED(status) {
        return Stop::Exited {
            tid,
            code: libc::WEXITSTATUS(status),
        };
    }
    if libc::WIFSIGNALED(status) {
        return Stop::Killed {
            tid,
            signal: libc::WTERMSIG(status),
        };
    }
    if !libc::WIFSTOPPED(status) {
        return Stop::OtherEvent { tid };
    }
    let signal = libc::WSTOPSIG(status);
    if signal == libc::SIGTRAP | 0x80 {
        return Stop::Syscall {
            tid,
            info: syscall_stop(tid),
        };
    }
    match status >> 16 {
        0 => Stop::Signal { tid, signal },
        libc::PTRACE_EVENT_FORK => new_task(tid, NewTaskKind::Fork),
        libc::PTRACE_EVENT_VFORK => new_task(tid, NewTaskKind::Vfork),
        libc::PTRACE_EVENT_CLONE => new_task(tid, NewTaskKind::Clone),
        libc::PTRACE_EVENT_EXEC => Stop::Exec {
            tid,
            former_tid: event_msg(tid).map_or(tid, |m| m as i32),
        },
        libc::PTRACE_EVENT_SECCOMP => match syscall_info(tid) {
            Ok(i) if i.op == OP_SECCOMP => Stop::Seccomp {
                tid,
                arch: i.arch,
                nr: i.data[0],
                args: args(&i),
            },
            _ => Stop::OtherEvent { tid },
        },
        PTRACE_EVENT_STOP => Stop::EventStop { tid, signal },
        _ => Stop::OtherEvent { tid },
    }
}

fn new_task(tid: i32, kind: NewTaskKind) -> Stop {
    match event_msg(tid) {
        Ok(child) => Stop::NewTask {
            tid,
            child: child as i32,
            kind,
        },
        Err(_) => Stop::OtherEvent { tid },
    }
}
