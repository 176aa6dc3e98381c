//! Futex wait and wake on an `AtomicU32`, for the thread hand-off in `os.ctxsw`
//! (the primitive under every Linux mutex and condition variable).

use std::sync::atomic::AtomicU32;

/// Sleep while `*word == expected` (returns at once if it differs, or on a spurious wake).
#[inline]
pub fn wait(word: &AtomicU32, expected: u32) {
    // SAFETY: `word` is a live, aligned u32 for the duration of the call; no timeout pointer.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        )
    };
}

/// Wake up to `n` threads sleeping on `word`.
#[inline]
pub fn wake(word: &AtomicU32, n: u32) {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE only reads its address.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        )
    };
}
