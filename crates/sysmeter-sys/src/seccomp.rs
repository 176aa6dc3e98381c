//! A seccomp filter that makes only selected system calls stop a ptrace tracee: classic BPF
//! returning `SECCOMP_RET_TRACE` for the chosen numbers of one architecture and
//! `SECCOMP_RET_ALLOW` for everything else (other numbers, other architectures such as i386
//! compat calls, x32 calls).
//!
//! Building the program is plain data and may happen anywhere; [`SeccompFilter::install`]
//! makes only two raw system calls (`prctl(PR_SET_NO_NEW_PRIVS)` and `seccomp`) so that it
//! can run in a forked child before `execve`. A traced task whose filter answers TRACE while
//! no tracer with `PTRACE_O_TRACESECCOMP` is attached gets `ENOSYS` from that call, so a
//! tracer using this filter must stay attached (and follow forks) for the tracee's lifetime.
//! Depends only on `libc`.

use std::io;

/// `AUDIT_ARCH_X86_64`: the `arch` field of `seccomp_data` and `ptrace_syscall_info`.
pub const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
/// `AUDIT_ARCH_AARCH64`.
pub const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;
/// `AUDIT_ARCH_I386` (32-bit compat tasks on x86_64).
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;

/// The audit architecture of native tasks of this build.
pub const fn native_audit_arch() -> u32 {
    if cfg!(target_arch = "aarch64") {
        AUDIT_ARCH_AARCH64
    } else {
        AUDIT_ARCH_X86_64
    }
}

/// Offsets into `struct seccomp_data { int nr; __u32 arch; __u64 ip; __u64 args[6]; }`.
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
/// Most instructions a classic BPF program may have (`BPF_MAXINSNS`).
const MAX_INSNS: usize = 4096;

/// A classic BPF seccomp program, ready to install.
#[derive(Debug, Clone)]
pub struct SeccompFilter {
    insns: Vec<libc::sock_filter>,
}

fn stmt(code: u32, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u32, k: u32, jt: u8, jf: u8) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
}

impl SeccompFilter {
    /// A filter answering `SECCOMP_RET_TRACE` for the system calls `numbers` of architecture
    /// `arch` (an `AUDIT_ARCH_*` value) and `SECCOMP_RET_ALLOW` otherwise. `None` when the
    /// list is too long for one BPF program (more than 2045 numbers).
    ///
    /// Each number is tested by `jeq nr, 0, 1; ret TRACE`, so no jump is ever longer than
    /// one instruction (BPF jump offsets are 8 bits) up to the 4096-instruction limit.
    pub fn trace_only(arch: u32, numbers: &[u32]) -> Option<SeccompFilter> {
        let ld_w_abs = libc::BPF_LD | libc::BPF_W | libc::BPF_ABS;
        let jeq_k = libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K;
        let ret_k = libc::BPF_RET | libc::BPF_K;
        let mut insns = vec![
            stmt(ld_w_abs, OFFSET_ARCH),
            // Native architecture: skip the ALLOW below; anything else is allowed untraced.
            jump(jeq_k, arch, 1, 0),
            stmt(ret_k, libc::SECCOMP_RET_ALLOW),
            stmt(ld_w_abs, OFFSET_NR),
        ];
        for &nr in numbers {
            insns.push(jump(jeq_k, nr, 0, 1));
            insns.push(stmt(ret_k, libc::SECCOMP_RET_TRACE));
        }
        insns.push(stmt(ret_k, libc::SECCOMP_RET_ALLOW));
        if insns.len() > MAX_INSNS {
            return None;
        }
        Some(SeccompFilter { insns })
    }

    /// Number of BPF instructions (for tests and diagnostics).
    pub fn len(&self) -> usize {
        self.insns.len()
    }

    /// Whether the program is empty (never: it always ends with ALLOW).
    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    /// Installs the filter on the calling thread (and every task it creates afterwards):
    /// `prctl(PR_SET_NO_NEW_PRIVS, 1)` then `seccomp(SECCOMP_SET_MODE_FILTER)`. Only raw
    /// system calls on memory prepared earlier: safe to call in a forked child.
    pub fn install(&self) -> io::Result<()> {
        // SAFETY: prctl with integer arguments only.
        let rc = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
        if rc != 0 {
            return Err(crate::last_error());
        }
        let prog = libc::sock_fprog {
            len: self.insns.len() as u16,
            filter: self.insns.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: `prog` points at `self.insns`, which outlives the call; the kernel copies
        // the program and never writes through the pointer.
        let rc = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0,
                &prog as *const libc::sock_fprog,
            )
        };
        if rc != 0 {
            return Err(crate::last_error());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_tests_each_number_then_allows() {
        let f = SeccompFilter::trace_only(AUDIT_ARCH_X86_64, &[0, 1, 39]).unwrap();
        // ld arch, jeq arch, ret allow, ld nr, 3 × (jeq, ret), ret allow
        assert_eq!(f.len(), 4 + 6 + 1);
        assert_eq!(f.insns[1].k, AUDIT_ARCH_X86_64);
        assert_eq!((f.insns[1].jt, f.insns[1].jf), (1, 0));
        assert_eq!(f.insns[2].k, libc::SECCOMP_RET_ALLOW);
        assert_eq!(f.insns[4].k, 0);
        assert_eq!(f.insns[5].k, libc::SECCOMP_RET_TRACE);
        assert_eq!(f.insns[10].k, libc::SECCOMP_RET_ALLOW);
    }

    #[test]
    fn oversized_programs_are_refused() {
        let many: Vec<u32> = (0..2100).collect();
        assert!(SeccompFilter::trace_only(AUDIT_ARCH_X86_64, &many).is_none());
        let some: Vec<u32> = (0..500).collect();
        assert!(SeccompFilter::trace_only(AUDIT_ARCH_X86_64, &some).is_some());
    }
}
