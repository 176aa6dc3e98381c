//! System calls used as measurement subjects by `os.syscall`, each issued directly so that
//! no library cache can answer it (getppid through `syscall(2)`, not glibc's wrapper).
//!
//! All return the raw result; the error paths return the errno they produced.

use std::ffi::CStr;
use std::os::fd::RawFd;

/// `getppid` through the raw system call: the cheapest call that must enter the kernel.
#[inline]
pub fn null_syscall() -> i64 {
    // SAFETY: getppid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_getppid) }
}

fn errno_of(rc: i64) -> i32 {
    if rc < 0 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    } else {
        0
    }
}

/// `read(fd, buf)`; returns bytes read or -errno.
#[inline]
pub fn read(fd: RawFd, buf: &mut [u8]) -> isize {
    // SAFETY: `buf` is valid and writable for `buf.len()` bytes.
    let rc = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if rc < 0 { -(errno_of(-1) as isize) } else { rc }
}

/// `write(fd, buf)`; returns bytes written or -errno.
#[inline]
pub fn write(fd: RawFd, buf: &[u8]) -> isize {
    // SAFETY: `buf` is valid and readable for `buf.len()` bytes.
    let rc = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if rc < 0 { -(errno_of(-1) as isize) } else { rc }
}

/// `stat(path)`; returns 0 or errno.
#[inline]
pub fn stat(path: &CStr) -> i32 {
    // SAFETY: stat is plain data; `path` is NUL-terminated; `st` is valid and writable.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::stat(path.as_ptr(), &mut st) };
    errno_of(rc as i64)
}

/// `fstat(fd)`; returns 0 or errno.
#[inline]
pub fn fstat(fd: RawFd) -> i32 {
    // SAFETY: stat is plain data.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is valid and writable.
    let rc = unsafe { libc::fstat(fd, &mut st) };
    errno_of(rc as i64)
}

/// `open(path, O_RDONLY)` then `close`; returns 0 or the errno of open.
#[inline]
pub fn open_close(path: &CStr) -> i32 {
    // SAFETY: `path` is NUL-terminated.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return errno_of(-1);
    }
    // SAFETY: `fd` was just opened by us and is closed exactly once.
    unsafe { libc::close(fd) };
    0
}

/// The directory fd that makes the `*_at` calls resolve a path from the working directory
/// (or ignore it for an absolute path): `AT_FDCWD`.
pub const AT_FDCWD: RawFd = libc::AT_FDCWD;

/// `fstatat(dirfd, path, st, 0)` (`newfstatat`; follows symbolic links); returns 0 or errno.
#[inline]
pub fn stat_at(dirfd: RawFd, path: &CStr) -> i32 {
    // SAFETY: stat is plain data; `path` is NUL-terminated; `st` is valid and writable.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the kernel checks `dirfd`.
    let rc = unsafe { libc::fstatat(dirfd, path.as_ptr(), &mut st, 0) };
    errno_of(rc as i64)
}

/// `openat(dirfd, path, O_RDONLY)` then `close`; returns 0 or the errno of openat.
#[inline]
pub fn openat_close(dirfd: RawFd, path: &CStr) -> i32 {
    // SAFETY: `path` is NUL-terminated; the kernel checks `dirfd`.
    let fd = unsafe { libc::openat(dirfd, path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return errno_of(-1);
    }
    // SAFETY: `fd` was just opened by us and is closed exactly once.
    unsafe { libc::close(fd) };
    0
}

/// A system call given a pointer to unmapped memory: `clock_gettime(CLOCK_MONOTONIC, 0x8)`
/// through the raw syscall, which the kernel rejects with EFAULT after faulting on the copy.
#[inline]
pub fn efault_call() -> i32 {
    // Address 8 is in the never-mapped first page, so the kernel's copy_to_user faults and
    // returns EFAULT; the vDSO is bypassed, it would crash on it.
    #[allow(clippy::manual_dangling_ptr)] // an address in the unmapped page is the point
    let bad = 8usize as *mut libc::timespec;
    // SAFETY: the kernel validates the user pointer; an invalid one yields EFAULT, never UB
    // in this process, because user memory is not touched by us.
    let rc = unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, bad) };
    errno_of(rc)
}

/// `strlen` of the C library on `s`.
#[inline]
pub fn strlen(s: &CStr) -> usize {
    // The C library's strlen on purpose: that is the function programs call.
    #[allow(clippy::strlen_on_c_strings)]
    // SAFETY: `s` is NUL-terminated.
    unsafe {
        libc::strlen(s.as_ptr())
    }
}

/// The C library's `memcpy` of `src` into `dst` (lengths must match).
#[inline]
pub fn memcpy(dst: &mut [u8], src: &[u8]) {
    let n = dst.len().min(src.len());
    // SAFETY: both slices are valid for `n` bytes and cannot overlap (& vs &mut).
    unsafe { libc::memcpy(dst.as_mut_ptr().cast(), src.as_ptr().cast(), n) };
}

/// `malloc(n)` immediately followed by `free`, through the C library allocator.
#[inline]
pub fn malloc_free(n: usize) {
    // SAFETY: malloc/free pair on the same pointer; free(NULL) is allowed.
    unsafe {
        let p = libc::malloc(n);
        // The volatile store keeps the compiler from eliding the malloc/free pair.
        if !p.is_null() {
            core::ptr::write_volatile(p.cast::<u8>(), 0);
        }
        libc::free(p)
    };
}
