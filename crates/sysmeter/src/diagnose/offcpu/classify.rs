//! Why a thread was off the CPU, from the kernel part of its stack at the switch (and its
//! state: a thread switched out while runnable was preempted, not blocked). Pure.

use serde::{Deserialize, Serialize};

/// The reason class of a blocked stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Waiting for a block device (`io_schedule`, direct I/O, page cache reads).
    Disk,
    /// Sockets and polling (`sock_*`, `tcp_*`, `unix_*`, `ep_poll`, `poll`, `select`).
    Network,
    /// A futex: mutexes, condition variables, joins.
    Lock,
    /// `nanosleep`, `clock_nanosleep`, timers.
    Sleep,
    /// Reading from or writing to a pipe.
    Pipe,
    /// A page fault that had to wait (swap-in, file-backed page).
    PageFault,
    /// Runnable but preempted: waiting for a CPU.
    Preempted,
    /// Anything else (`wait4`, terminals, signals).
    Other,
}

impl Reason {
    /// Every class, in report order.
    pub const ALL: [Reason; 8] = [
        Reason::Disk,
        Reason::Network,
        Reason::Lock,
        Reason::Sleep,
        Reason::Pipe,
        Reason::PageFault,
        Reason::Preempted,
        Reason::Other,
    ];

    /// The class for people.
    pub fn label(self) -> &'static str {
        match self {
            Reason::Disk => "disk I/O",
            Reason::Network => "network",
            Reason::Lock => "futex/lock",
            Reason::Sleep => "sleep/timer",
            Reason::Pipe => "pipe",
            Reason::PageFault => "page fault",
            Reason::Preempted => "preempted (runnable)",
            Reason::Other => "other",
        }
    }
}

/// Kernel function names (or prefixes, with a trailing `*`) per class, checked in this
/// order: a page fault that reads a file is a page fault, a futex wait with a timeout is a
/// lock.
const RULES: [(Reason, &[&str]); 6] = [
    (
        Reason::PageFault,
        &["exc_page_fault", "do_user_addr_fault", "handle_mm_fault"],
    ),
    (Reason::Lock, &["futex_*", "__x64_sys_futex", "do_futex"]),
    (
        Reason::Pipe,
        &[
            "pipe_read",
            "pipe_write",
            "pipe_wait*",
            "anon_pipe_read",
            "anon_pipe_write",
        ],
    ),
    (
        Reason::Network,
        &[
            "sock_*",
            "tcp_*",
            "udp_*",
            "unix_*",
            "inet_*",
            "sk_wait*",
            "ep_poll",
            "do_sys_poll",
            "do_select",
            "core_sys_select",
            "__skb_*",
        ],
    ),
    (
        Reason::Disk,
        &[
            "io_schedule*",
            "blk_*",
            "bit_wait_io",
            "folio_wait_bit*",
            "iomap_dio*",
            "__iomap_dio*",
            "submit_bio*",
            "jbd2_*",
            "__blkdev_direct_IO*",
            "wait_on_page_bit*",
            "filemap_read",
            "ext4_file_read_iter",
        ],
    ),
    (
        Reason::Sleep,
        &[
            "do_nanosleep",
            "hrtimer_nanosleep",
            "common_nsleep",
            "__x64_sys_clock_nanosleep",
            "__x64_sys_nanosleep",
            "schedule_hrtimeout*",
            "msleep*",
            "schedule_timeout",
        ],
    ),
];

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == pattern,
    }
}

/// A `prev_state` without any sleeping-state bit is `TASK_RUNNING`: preempted. Kernels
/// that mark preemption with the `TASK_REPORT_MAX` bit (0x100, printed `R+`) set no
/// state bit either.
pub fn is_preempted(prev_state: i64) -> bool {
    prev_state & 0xff == 0
}

/// The class of a blocked stack from its kernel frame names (any order) and its state.
pub fn classify<'a>(
    kernel_frames: impl IntoIterator<Item = &'a str> + Clone,
    prev_state: i64,
) -> Reason {
    if is_preempted(prev_state) {
        return Reason::Preempted;
    }
    RULES
        .iter()
        .find(|(_, patterns)| {
            kernel_frames
                .clone()
                .into_iter()
                .any(|f| patterns.iter().any(|p| matches(p, f)))
        })
        .map_or(Reason::Other, |(r, _)| *r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fixture::assert_cases;

    fn class(frames: &[&str]) -> Reason {
        classify(frames.iter().copied(), 1)
    }

    #[test]
    fn classes_from_kernel_frames() {
        let sleep = [
            "schedule",
            "do_nanosleep",
            "hrtimer_nanosleep",
            "do_syscall_64",
        ];
        let cases: &[(&[&str], Reason)] = &[
            (&sleep, Reason::Sleep),
            (&["schedule", "io_schedule", "__iomap_dio_rw"], Reason::Disk),
            (
                &["schedule", "futex_wait_queue", "futex_wait"],
                Reason::Lock,
            ),
            (&["schedule", "pipe_read", "vfs_read"], Reason::Pipe),
            (&["schedule", "anon_pipe_read", "vfs_read"], Reason::Pipe),
            (
                &["schedule", "sk_wait_data", "tcp_recvmsg"],
                Reason::Network,
            ),
            (
                &[
                    "io_schedule",
                    "filemap_fault",
                    "handle_mm_fault",
                    "exc_page_fault",
                ],
                Reason::PageFault,
            ),
            (&["schedule", "do_wait", "kernel_wait4"], Reason::Other),
        ];
        assert_cases(class, cases);
        assert_eq!(classify(sleep.iter().copied(), 0), Reason::Preempted);
        assert_eq!(
            classify(sleep.iter().copied(), 0x100),
            Reason::Preempted,
            "R+"
        );
    }

    #[test]
    fn labels_are_distinct() {
        let labels: std::collections::HashSet<_> = Reason::ALL.iter().map(|r| r.label()).collect();
        assert_eq!(labels.len(), Reason::ALL.len());
    }
}
