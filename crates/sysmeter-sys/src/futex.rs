//! Futex wait and wake on an `AtomicU32`, for the thread hand-off in `os.ctxsw`
//! (the primitive under every Linux mutex and condition variable).

use std::sync::atomic::AtomicU32;

/// Sleep while `*word == expected` (returns at once if it differs, or on a spurious wake).
#[inline]
pub fn wait(word: &AtomicU32, expected: u32) {
    futex(word, libc::FUTEX_WAIT, expected);
}

/// Wake up to `n` threads sleeping on `word`.
#[inline]
pub fn wake(word: &AtomicU32, n: u32) {
    futex(word, libc::FUTEX_WAKE, n);
}

/// The process-private futex operation `op` on `word` with value `val` and no timeout.
#[inline]
fn futex(word: &AtomicU32, op: libc::c_int, val: u32) {
    // SAFETY: `word` is a live, aligned u32 for the duration of the call; the timeout pointer
    // is null (FUTEX_WAIT then sleeps without one; FUTEX_WAKE does not read it).
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op | libc::FUTEX_PRIVATE_FLAG,
            val,
            std::ptr::null::<libc::timespec>(),
        )
    };
}
