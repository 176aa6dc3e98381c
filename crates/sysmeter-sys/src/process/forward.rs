//! SIGINT/SIGTERM while `sysmeter run` waits for its command: remember the signal so the
//! waiting loop can pass it on to the child, and stop a blocking `poll` (no SA_RESTART).
//!
//! A Ctrl-C typed at the terminal is sent by the kernel to the whole foreground process
//! group (`si_code == SI_KERNEL`), so the child, which shares our group, already has it:
//! forwarding it again would deliver it twice (and a program that treats a second Ctrl-C as
//! "abort now" would misbehave). Only a signal sent to sysmeter alone by another process
//! (`kill PID`: SI_USER, SI_QUEUE, SI_TKILL, all ≤ 0) is marked for forwarding. Either way
//! [`received`] reports that one arrived.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static PENDING: AtomicI32 = AtomicI32::new(0);
static RECEIVED: AtomicI32 = AtomicI32::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // Only atomic stores and a read of the kernel-provided siginfo: async-signal-safe.
    RECEIVED.store(sig, Ordering::SeqCst);
    let from_process = if info.is_null() {
        true
    } else {
        // SAFETY: with SA_SIGINFO the kernel passes a valid siginfo_t for this delivery.
        unsafe { (*info).si_code <= 0 }
    };
    if from_process {
        PENDING.store(sig, Ordering::SeqCst);
    }
}

/// Installs the handler for SIGINT and SIGTERM (idempotent). Without SA_RESTART, so a
/// blocking `poll`/`waitid` returns EINTR and the caller can act at once.
pub fn install() -> std::io::Result<()> {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return Ok(());
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is plain data; zeroed means no flags and an empty mask.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_signal
            as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
            as libc::sighandler_t;
        act.sa_flags = libc::SA_SIGINFO;
        // SAFETY: `act` is fully initialised; the handler only touches atomics.
        let rc = unsafe { libc::sigaction(sig, &act, std::ptr::null_mut()) };
        if rc != 0 {
            INSTALLED.store(false, Ordering::SeqCst);
            return Err(crate::last_error());
        }
    }
    Ok(())
}

/// The signal sent to sysmeter alone since the last call, to be forwarded (0 = none).
pub fn take_pending() -> i32 {
    PENDING.swap(0, Ordering::SeqCst)
}

/// The last SIGINT/SIGTERM received from any source since [`install`] (0 = none).
pub fn received() -> i32 {
    RECEIVED.load(Ordering::SeqCst)
}
