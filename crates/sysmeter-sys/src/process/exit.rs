//! How a child ended ([`Exit`], decoded from a wait status) and what it cost
//! ([`ChildUsage`], from the `rusage` that `wait4` fills in). The one vocabulary every
//! launcher of sysmeter uses; plain data, depends only on `libc`.

/// How a child ended, from its wait status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
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

impl Exit {
    /// Decodes a wait status word; `None` for a stop or continue report (the child still
    /// lives).
    pub fn from_status(status: i32) -> Option<Exit> {
        if libc::WIFSIGNALED(status) {
            Some(Exit::Signaled {
                signal: libc::WTERMSIG(status),
                core: libc::WCOREDUMP(status),
            })
        } else if libc::WIFEXITED(status) {
            Some(Exit::Exited(libc::WEXITSTATUS(status)))
        } else {
            None
        }
    }

    /// The shell's convention: the exit code, or 128 + the signal number.
    pub fn shell_code(self) -> i32 {
        match self {
            Exit::Exited(code) => code,
            Exit::Signaled { signal, .. } => 128 + signal,
        }
    }

    /// The exit code when it exited normally.
    pub fn code(self) -> Option<i32> {
        match self {
            Exit::Exited(code) => Some(code),
            Exit::Signaled { .. } => None,
        }
    }

    /// The signal that killed it, if one did.
    pub fn signal(self) -> Option<i32> {
        match self {
            Exit::Exited(_) => None,
            Exit::Signaled { signal, .. } => Some(signal),
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
    s.saturating_mul(1_000_000_000)
        .saturating_add(us.saturating_mul(1_000))
}

fn nonneg(v: libc::c_long) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

impl ChildUsage {
    /// The fields of a `rusage` that `wait4` filled in.
    pub(crate) fn from_rusage(ru: &libc::rusage) -> ChildUsage {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_codes_follow_the_convention() {
        assert_eq!(Exit::Exited(7).shell_code(), 7);
        let killed = Exit::Signaled {
            signal: libc::SIGINT,
            core: false,
        };
        assert_eq!(killed.shell_code(), 130);
        assert_eq!(killed.signal(), Some(libc::SIGINT));
        assert_eq!(killed.code(), None);
        assert_eq!(Exit::Exited(3).code(), Some(3));
    }

    #[test]
    fn statuses_decode() {
        // exit(5): status 5 << 8; SIGKILL: status 9; a stop (0x7f low byte) is no exit.
        assert_eq!(Exit::from_status(5 << 8), Some(Exit::Exited(5)));
        assert_eq!(
            Exit::from_status(libc::SIGKILL),
            Some(Exit::Signaled {
                signal: libc::SIGKILL,
                core: false
            })
        );
        assert_eq!(Exit::from_status((libc::SIGSTOP << 8) | 0x7f), None);
    }
}
