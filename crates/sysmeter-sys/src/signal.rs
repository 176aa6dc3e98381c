//! The Ctrl-C flag: SIGINT and SIGTERM set an atomic flag instead of killing the process, so
//! a long run can stop between samples, keep what it measured, clean up, and exit 130.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_sig: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Install the handler for SIGINT and SIGTERM. SA_RESTART keeps blocking calls of the
/// current sample going; the harness checks [`interrupted`] between samples.
pub fn install_interrupt_flag() -> std::io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction is plain data; zeroed means no flags and an empty mask.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        act.sa_flags = libc::SA_RESTART;
        // SAFETY: `act` is fully initialised and the handler only touches an atomic.
        let rc = unsafe { libc::sigaction(sig, &act, std::ptr::null_mut()) };
        if rc != 0 {
            return Err(crate::last_error());
        }
    }
    Ok(())
}

/// Whether SIGINT/SIGTERM arrived since the handler was installed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}
