//! Whether a process id names something a diagnosis can observe, checked once before any
//! event is opened or the store touched: it exists, it is not sysmeter itself (a tracer
//! watching its own reader loops on its own events), it has not already exited (a zombie
//! has no threads, memory or stacks left), it is not a kernel thread (no user space to
//! sample or probe), and, unless we are privileged, it belongs to our user (the kernel
//! refuses the rest, later and with a vaguer error). Every diagnosis command asks this
//! through `commands::diagnosis::target`; the ptrace tracers add their "already traced"
//! check ([`super::error::check_target`]).
//!
//! Depends on `host::procfs` (the identity parser) and [`super::error`].

use super::error::ObserveError;
use crate::host::procfs::{cap, parse_status};

/// `PF_KTHREAD` in the flags field of `/proc/PID/stat` (include/linux/sched.h).
const PF_KTHREAD: u64 = 0x0020_0000;

/// What `/proc/PID/stat` says of a process: its state letter, parent and flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stat {
    state: char,
    parent: i32,
    flags: u64,
}

/// Parses `/proc/PID/stat`; the command name in parentheses may hold spaces and `)`, so the
/// fields are counted from the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let (_, rest) = text.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    Some(Stat {
        state: fields.first()?.chars().next()?,
        parent: fields.get(1)?.parse().ok()?,
        flags: fields.get(6)?.parse().ok()?,
    })
}

/// Checks that `pid` can be observed (see the module documentation).
pub fn check_observable(pid: i32) -> Result<(), ObserveError> {
    if pid <= 0 {
        return Err(ObserveError::NoProcess(pid));
    }
    if pid == std::process::id() as i32 {
        return Err(ObserveError::SelfTrace(pid));
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| parse_stat(&t))
        .ok_or(ObserveError::NoProcess(pid))?;
    if matches!(stat.state, 'Z' | 'X' | 'x') {
        return Err(ObserveError::Exited {
            pid,
            parent: stat.parent,
        });
    }
    if stat.flags & PF_KTHREAD != 0 {
        return Err(ObserveError::KernelThread(pid));
    }
    check_owner(pid)
}

/// Unprivileged, only our own user's processes can be observed.
fn check_owner(pid: i32) -> Result<(), ObserveError> {
    let read = |path: &str| std::fs::read_to_string(path).ok().map(|t| parse_status(&t));
    let (Some(me), Some(them)) = (
        read("/proc/self/status"),
        read(&format!("/proc/{pid}/status")),
    ) else {
        return Ok(()); // cannot tell: let the kernel decide
    };
    let privileged = me.is_root() || me.has_cap(cap::SYS_PTRACE);
    match (me.euid, them.euid) {
        (Some(mine), Some(owner)) if !privileged && mine != owner => {
            Err(ObserveError::NotYours { pid, owner, mine })
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        let text = "42 (a) b (c)) S 7 42 42 0 -1 4194560 100 0 0 0";
        let stat = parse_stat(text).expect("parses");
        assert_eq!(stat.state, 'S');
        assert_eq!(stat.parent, 7);
        assert_eq!(stat.flags, 4_194_560);
        assert!(parse_stat("42 (truncated").is_none());
        assert!(parse_stat("42 (x) S").is_none());
    }

    #[test]
    fn our_own_pid_and_impossible_pids_are_refused() {
        let me = std::process::id() as i32;
        assert!(matches!(check_observable(me), Err(ObserveError::SelfTrace(p)) if p == me));
        assert!(matches!(
            check_observable(0),
            Err(ObserveError::NoProcess(0))
        ));
        assert!(matches!(
            check_observable(-5),
            Err(ObserveError::NoProcess(-5))
        ));
    }

    #[test]
    fn a_kernel_thread_is_named_as_one() {
        // kthreadd is PID 2 in the initial PID namespace; elsewhere there is no PID 2 of
        // the kernel's, and the check must then not call it a kernel thread.
        let kthreadd = std::fs::read_to_string("/proc/2/stat")
            .ok()
            .and_then(|t| parse_stat(&t))
            .is_some_and(|s| s.flags & PF_KTHREAD != 0);
        if !kthreadd {
            println!("skipped: PID 2 is not kthreadd in this PID namespace");
            return;
        }
        assert!(matches!(
            check_observable(2),
            Err(ObserveError::KernelThread(2))
        ));
    }
}
