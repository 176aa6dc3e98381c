//! Which BPF programs sit on a tracepoint, asked of the kernel through the `bpf(2)` system
//! call without loading anything: the links of the machine ([`next_link_id`],
//! [`link_tracepoint`]: a `BPF_LINK_TYPE_PERF_EVENT` link's tracepoint name, kernel 6.6 and
//! later; how aya and libbpf attach today), and a process's perf event descriptors with a
//! program attached by the older `PERF_EVENT_IOC_SET_BPF` ([`task_fd_tracepoint`], through
//! `BPF_TASK_FD_QUERY`; how bpftrace and bcc attach). Used to say *what* hides a tracepoint
//! from perf when a session was blinded (a program that returns 0 makes the kernel drop that
//! tracepoint's perf samples for everyone).
//!
//! Depends only on `libc`.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
const BPF_TASK_FD_QUERY: libc::c_long = 20;
const BPF_LINK_GET_FD_BY_ID: libc::c_long = 30;
const BPF_LINK_GET_NEXT_ID: libc::c_long = 31;
/// `enum bpf_link_type`: a program attached to a perf event.
const BPF_LINK_TYPE_PERF_EVENT: u32 = 7;
/// `enum bpf_perf_event_type`: that perf event is a tracepoint.
const BPF_PERF_EVENT_TRACEPOINT: u32 = 5;
/// `enum bpf_task_fd_type`: the descriptor is a tracepoint's perf event.
const BPF_FD_TYPE_TRACEPOINT: u32 = 1;
/// The longest tracepoint name asked for (the kernel truncates to the buffer).
const NAME_LEN: usize = 128;

/// The `bpf(2)` system call on an attribute of `size` bytes at `attr`.
///
/// # Safety
/// `attr` must point to `size` writable bytes laid out as the kernel's `union bpf_attr`
/// member for `cmd`, and every pointer inside it must be valid for what it says.
unsafe fn bpf(cmd: libc::c_long, attr: *mut u8, size: usize) -> io::Result<libc::c_long> {
    // SAFETY: the caller guarantees `attr`'s layout and size for `cmd`.
    let rc = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr, size as libc::c_uint) };
    if rc < 0 {
        Err(crate::last_error())
    } else {
        Ok(rc)
    }
}

/// The id of the next BPF link after `after` (0: the first), `None` past the last.
pub fn next_link_id(after: u32) -> io::Result<Option<u32>> {
    // `{ start_id: u32, next_id: u32, open_flags: u32 }`
    let mut attr = [0u32; 3];
    attr[0] = after;
    // SAFETY: the attribute is the 12-byte id-iteration struct, owned here for the call.
    match unsafe { bpf(BPF_LINK_GET_NEXT_ID, attr.as_mut_ptr().cast(), 12) } {
        Ok(_) => Ok(Some(attr[1])),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(None),
        Err(e) => Err(e),
    }
}

/// `(program id, tracepoint name)` of link `id` when it attaches a program to a
/// tracepoint through perf; `None` for any other link or one that is gone.
pub fn link_tracepoint(id: u32) -> io::Result<Option<(u32, String)>> {
    // `{ link_id: u32, next_id: u32, open_flags: u32 }`
    let mut by_id = [id, 0, 0];
    // SAFETY: the attribute is the 12-byte id struct; the result is a new descriptor.
    let fd = match unsafe { bpf(BPF_LINK_GET_FD_BY_ID, by_id.as_mut_ptr().cast(), 12) } {
        Ok(fd) => fd as RawFd,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
        Err(e) => return Err(e),
    };
    // SAFETY: the kernel just returned this descriptor to us and nobody else owns it.
    let link = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut name = [0u8; NAME_LEN];
    // `struct bpf_link_info` (64 bytes are enough): type u32 @0, id u32 @4, prog_id u32 @8,
    // perf_event.type u32 @16, perf_event.tracepoint.tp_name u64 @24, .name_len u32 @32.
    let mut info = [0u64; 8];
    info[3] = name.as_mut_ptr() as u64;
    info[4] = NAME_LEN as u64;
    // `{ bpf_fd: u32, info_len: u32, info: u64 }`
    let mut attr = [0u64; 2];
    attr[0] = u64::from(std::os::fd::AsRawFd::as_raw_fd(&link) as u32) | (64u64 << 32);
    attr[1] = info.as_mut_ptr() as u64;
    // SAFETY: `info` (64 bytes) and `name` (NAME_LEN bytes, as name_len says) outlive the
    // call; the kernel writes at most those lengths.
    unsafe { bpf(BPF_OBJ_GET_INFO_BY_FD, attr.as_mut_ptr().cast(), 16) }?;
    let word = |i: usize, high: bool| (info[i] >> if high { 32 } else { 0 }) as u32;
    if word(0, false) != BPF_LINK_TYPE_PERF_EVENT || word(2, false) != BPF_PERF_EVENT_TRACEPOINT {
        return Ok(None);
    }
    Ok(Some((word(1, false), c_string(&name))))
}

/// `(program id, tracepoint name)` of descriptor `fd` of process `pid` when it is a
/// tracepoint's perf event with a BPF program attached; `None` for anything else.
pub fn task_fd_tracepoint(pid: i32, fd: i32) -> io::Result<Option<(u32, String)>> {
    let mut name = [0u8; NAME_LEN];
    // `{ pid u32 @0, fd u32 @4, flags u32 @8, buf_len u32 @12, buf u64 @16, prog_id u32 @24,
    //    fd_type u32 @28, probe_offset u64 @32, probe_addr u64 @40 }`
    let mut attr = [0u64; 6];
    attr[0] = u64::from(pid as u32) | (u64::from(fd as u32) << 32);
    attr[1] = (NAME_LEN as u64) << 32;
    attr[2] = name.as_mut_ptr() as u64;
    // SAFETY: `name` (NAME_LEN bytes, as buf_len says) outlives the call.
    match unsafe { bpf(BPF_TASK_FD_QUERY, attr.as_mut_ptr().cast(), 48) } {
        Ok(_) => {}
        // Not a perf event (EBADF, EINVAL), no program on it (ENOENT), a link or kprobe
        // the query does not describe (ENOTSUPP, 524, and EOPNOTSUPP), or gone (ESRCH).
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(
                    libc::ENOENT
                        | libc::EBADF
                        | libc::ESRCH
                        | libc::EINVAL
                        | libc::EOPNOTSUPP
                        | 524
                )
            ) =>
        {
            return Ok(None);
        }
        Err(e) => return Err(e),
    }
    let (prog_id, fd_type) = (attr[3] as u32, (attr[3] >> 32) as u32);
    Ok((fd_type == BPF_FD_TYPE_TRACEPOINT).then(|| (prog_id, c_string(&name))))
}

/// The text before the first NUL.
fn c_string(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}
