//! `-e SET`: which system calls to count. A set is a comma-separated list of call names
//! (`read,openat`) and classes (`file`, `network`, `process`, `memory`, `signal`, `ipc`,
//! `desc`, also written `%file` as in strace), optionally after `trace=`.
//!
//! Class membership is defined here by call name, after strace's classes:
//! - `file`: calls that take a file name (open, stat, unlink, execve, the `*xattr` by path…);
//! - `network`: socket calls (socket, connect, accept, send*/recv*, *sockopt…);
//! - `process`: process life cycle (fork/clone, execve, exit, wait, kill-family);
//! - `memory`: address-space calls (brk, mmap, munmap, mprotect, madvise, mlock…, shmat);
//! - `signal`: signal handling and sending (rt_sig*, sigaltstack, kill-family, signalfd);
//! - `ipc`: System V IPC (msg*, sem*, shm*), as strace's `%ipc`;
//! - `desc`: calls that take or return a file descriptor (read/write family, close, dup,
//!   fcntl, ioctl, poll/select/epoll, pipes, the `*at` calls, eventfd/timerfd/…, sockets).
//!
//! Names that the running architecture does not have (e.g. `open` on aarch64) are simply
//! absent from that architecture's numbers. Pure.

use std::collections::BTreeSet;

use super::names::{self, Arch};

/// The classes `-e` accepts.
pub const CLASSES: [&str; 7] = [
    "file", "network", "process", "memory", "signal", "ipc", "desc",
];

const FILE: &str = "\
    open openat openat2 creat access faccessat faccessat2 stat lstat newfstatat statx statfs \
    truncate chdir chroot rename renameat renameat2 mkdir mkdirat rmdir link linkat unlink \
    unlinkat symlink symlinkat readlink readlinkat chmod fchmodat fchmodat2 chown lchown \
    fchownat utime utimes utimensat futimesat mknod mknodat execve execveat setxattr \
    lsetxattr getxattr lgetxattr listxattr llistxattr removexattr lremovexattr setxattrat \
    getxattrat listxattrat removexattrat swapon swapoff mount umount2 pivot_root acct uselib \
    quotactl inotify_add_watch fanotify_mark name_to_handle_at open_tree open_tree_attr \
    move_mount mount_setattr fspick file_getattr file_setattr";

const NETWORK: &str = "\
    socket socketpair bind listen accept accept4 connect getsockname getpeername sendto \
    recvfrom sendmsg recvmsg sendmmsg recvmmsg shutdown setsockopt getsockopt";

const PROCESS: &str = "\
    fork vfork clone clone3 execve execveat exit exit_group wait4 waitid kill tkill tgkill \
    rt_sigqueueinfo rt_tgsigqueueinfo pidfd_send_signal pidfd_open unshare setns";

const MEMORY: &str = "\
    brk mmap munmap mremap mprotect pkey_mprotect madvise process_madvise mlock mlock2 \
    munlock mlockall munlockall mincore msync remap_file_pages mbind set_mempolicy \
    get_mempolicy set_mempolicy_home_node migrate_pages move_pages shmat shmdt memfd_secret \
    map_shadow_stack mseal";

const SIGNAL: &str = "\
    rt_sigaction rt_sigprocmask rt_sigreturn rt_sigsuspend rt_sigpending rt_sigtimedwait \
    rt_sigqueueinfo rt_tgsigqueueinfo sigaltstack kill tkill tgkill pause signalfd signalfd4 \
    pidfd_send_signal";

const IPC: &str = "\
    msgget msgsnd msgrcv msgctl semget semop semtimedop semctl shmget shmat shmctl shmdt";

const DESC: &str = "\
    read write readv writev pread64 pwrite64 preadv pwritev preadv2 pwritev2 close \
    close_range dup dup2 dup3 fcntl ioctl fstat fstatfs lseek fsync fdatasync \
    sync_file_range syncfs ftruncate fchdir fchmod fchown fgetxattr fsetxattr flistxattr \
    fremovexattr flock fadvise64 fallocate readahead getdents getdents64 poll ppoll select \
    pselect6 epoll_create epoll_create1 epoll_ctl epoll_wait epoll_pwait epoll_pwait2 \
    eventfd eventfd2 timerfd_create timerfd_settime timerfd_gettime signalfd signalfd4 \
    inotify_init inotify_init1 inotify_add_watch inotify_rm_watch fanotify_init \
    fanotify_mark pipe pipe2 sendfile splice tee vmsplice copy_file_range mmap memfd_create \
    userfaultfd pidfd_open pidfd_getfd io_uring_setup io_uring_enter io_uring_register \
    perf_event_open open openat openat2 creat newfstatat statx faccessat faccessat2 fchmodat \
    fchmodat2 fchownat futimesat utimensat mkdirat mknodat unlinkat renameat renameat2 \
    linkat symlinkat readlinkat execveat name_to_handle_at open_by_handle_at mq_open \
    mq_timedsend mq_timedreceive mq_notify mq_getsetattr fsopen fsconfig fsmount fspick \
    open_tree open_tree_attr move_mount quotactl_fd landlock_create_ruleset \
    landlock_add_rule landlock_restrict_self socket socketpair bind listen accept accept4 \
    connect getsockname getpeername sendto recvfrom sendmsg recvmsg sendmmsg recvmmsg \
    shutdown setsockopt getsockopt file_getattr file_setattr";

/// The member names of class `class` (without a leading `%`).
pub fn members(class: &str) -> Option<Vec<&'static str>> {
    let list = match class {
        "file" => FILE,
        "network" | "net" => NETWORK,
        "process" => PROCESS,
        "memory" => MEMORY,
        "signal" => SIGNAL,
        "ipc" => IPC,
        "desc" => DESC,
        _ => return None,
    };
    Some(list.split_whitespace().collect())
}

/// A parsed `-e` set: the call names to count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    names: BTreeSet<String>,
}

impl Selection {
    /// Parses `-e` values (each may hold a comma-separated list). Errors name the unknown
    /// word and list the classes.
    pub fn parse(specs: &[String]) -> Result<Selection, String> {
        let mut names = BTreeSet::new();
        for spec in specs {
            let spec = spec.strip_prefix("trace=").unwrap_or(spec);
            for word in spec.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                let bare = word.strip_prefix('%').unwrap_or(word);
                if let Some(list) = members(bare) {
                    names.extend(list.iter().map(|n| n.to_string()));
                } else if names::is_known(word) {
                    names.insert(word.to_string());
                } else {
                    return Err(format!(
                        "-e: '{word}' is neither a system call of x86_64/aarch64 nor a class; \
                         give call names (e.g. read,openat) or one of the classes {}",
                        CLASSES.join(", ")
                    ));
                }
            }
        }
        if names.is_empty() {
            return Err("-e: the set is empty; give call names or classes, e.g. -e file".into());
        }
        Ok(Selection { names })
    }

    /// Whether call `name` is selected.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains(name)
    }

    /// The selected names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }

    /// The selected calls' numbers in `arch`'s table (names it lacks are left out).
    pub fn numbers(&self, arch: Arch) -> Vec<u32> {
        self.names
            .iter()
            .filter_map(|n| names::number(arch, n))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_member_is_a_real_call_somewhere() {
        for class in CLASSES {
            for name in members(class).unwrap() {
                assert!(names::is_known(name), "{class}: {name} is unknown");
            }
        }
    }

    #[test]
    fn names_and_classes_combine() {
        let s = Selection::parse(&["read,%network".into(), "trace=ipc".into()]).unwrap();
        assert!(s.contains("read") && s.contains("connect") && s.contains("semop"));
        assert!(!s.contains("write"));
        let nrs = s.numbers(Arch::X86_64);
        assert!(
            nrs.contains(&0) && nrs.contains(&42),
            "read=0, connect=42: {nrs:?}"
        );
    }

    #[test]
    fn unknown_words_are_refused_with_the_class_list() {
        let err = Selection::parse(&["read,frob".into()]).unwrap_err();
        assert!(err.contains("'frob'") && err.contains("network"), "{err}");
        assert!(Selection::parse(&[",".into()]).is_err());
    }

    #[test]
    fn names_missing_on_an_arch_are_left_out_of_its_numbers() {
        let s = Selection::parse(&["open,openat".into()]).unwrap();
        assert_eq!(s.numbers(Arch::Aarch64), vec![56]);
        assert_eq!(s.numbers(Arch::X86_64).len(), 2);
    }
}
