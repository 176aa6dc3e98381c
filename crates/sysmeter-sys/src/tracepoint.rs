//! What the tracepoint backend of `sysmeter trace` needs beyond perf-event2 (its command is
//! a [`crate::process::child::Child`], released once the events are open):
//! `PERF_EVENT_IOC_SET_FILTER` ([`set_filter`]) so the kernel drops the samples of calls a
//! `-e` set does not select instead of writing them to the ring buffer, and
//! `PERF_EVENT_IOC_SET_OUTPUT` ([`set_output`]) to share one ring per CPU (perf-event2
//! exposes neither ioctl).
//!
//! Depends only on `libc`.

use std::ffi::CStr;
use std::io;
use std::os::fd::RawFd;

/// `_IOW('$', 6, char *)`: PERF_EVENT_IOC_SET_FILTER.
const PERF_EVENT_IOC_SET_FILTER: libc::c_ulong = 0x4008_2406;
/// `_IO('$', 5)`: PERF_EVENT_IOC_SET_OUTPUT.
const PERF_EVENT_IOC_SET_OUTPUT: libc::c_ulong = 0x2405;

/// Makes perf event `fd` write its records into the ring buffer of event `target` (same
/// CPU, same clock), so one ring per CPU serves many events.
pub fn set_output(fd: RawFd, target: RawFd) -> io::Result<()> {
    // SAFETY: the ioctl takes an fd number as its argument and touches no user memory.
    let rc = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT as _, target) };
    if rc == -1 {
        Err(crate::last_error())
    } else {
        Ok(())
    }
}

/// Sets a tracepoint filter expression (e.g. `id == 0 || id == 1`) on a perf event fd.
pub fn set_filter(fd: RawFd, filter: &CStr) -> io::Result<()> {
    // SAFETY: the ioctl reads a NUL-terminated string that outlives the call; an fd that is
    // not a perf event makes it fail with ENOTTY, nothing worse.
    let rc = unsafe { libc::ioctl(fd, PERF_EVENT_IOC_SET_FILTER as _, filter.as_ptr()) };
    if rc == -1 {
        Err(crate::last_error())
    } else {
        Ok(())
    }
}
