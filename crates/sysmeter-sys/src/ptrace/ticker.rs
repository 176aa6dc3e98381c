//! [`WaitTicker`]: makes a blocking `waitpid` return regularly (EINTR), so a tracer whose
//! tracees are idle still notices Ctrl-C or the end of `--duration` within one period.
//!
//! It installs a do-nothing SIGALRM handler without `SA_RESTART`, arms a periodic
//! `ITIMER_REAL`, and clears `SA_RESTART` from the current SIGINT and SIGTERM actions (the
//! handler itself, e.g. [`crate::signal`]'s flag, is kept). Everything is put back on drop.
//! The process should have a single thread while it is alive: SIGALRM goes to any thread.

use std::io;
use std::time::Duration;

extern "C" fn on_alarm(_sig: libc::c_int) {
    // Nothing: the point is the EINTR it causes.
}

fn get_action(sig: libc::c_int) -> io::Result<libc::sigaction> {
    // SAFETY: sigaction is plain data; zeroed is valid.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only reads the current one into `old`.
    if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0 {
        return Err(crate::last_error());
    }
    Ok(old)
}

fn set_action(sig: libc::c_int, act: &libc::sigaction) -> io::Result<()> {
    // SAFETY: `act` is a fully initialised action (read back from the kernel or built here).
    if unsafe { libc::sigaction(sig, act, std::ptr::null_mut()) } != 0 {
        return Err(crate::last_error());
    }
    Ok(())
}

fn set_timer(period: Duration) -> io::Result<()> {
    let tv = libc::timeval {
        tv_sec: period.as_secs() as libc::time_t,
        tv_usec: period.subsec_micros() as libc::suseconds_t,
    };
    let timer = libc::itimerval {
        it_interval: tv,
        it_value: tv,
    };
    // SAFETY: `timer` is valid; the old value is not wanted.
    if unsafe { libc::setitimer(libc::ITIMER_REAL, &timer, std::ptr::null_mut()) } != 0 {
        return Err(crate::last_error());
    }
    Ok(())
}

/// While alive, blocking system calls of this process return EINTR at least every period
/// and on SIGINT/SIGTERM.
pub struct WaitTicker {
    saved: Vec<(libc::c_int, libc::sigaction)>,
}

impl WaitTicker {
    /// Installs the handler and starts the timer.
    pub fn start(period: Duration) -> io::Result<WaitTicker> {
        let mut ticker = WaitTicker { saved: Vec::new() };
        for sig in [libc::SIGINT, libc::SIGTERM] {
            let old = get_action(sig)?;
            ticker.saved.push((sig, old));
            let mut new = old;
            new.sa_flags &= !libc::SA_RESTART;
            set_action(sig, &new)?;
        }
        let old = get_action(libc::SIGALRM)?;
        ticker.saved.push((libc::SIGALRM, old));
        // SAFETY: sigaction is plain data; zeroed means an empty mask and no flags.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_alarm as extern "C" fn(libc::c_int) as libc::sighandler_t;
        set_action(libc::SIGALRM, &act)?;
        set_timer(period.max(Duration::from_millis(1)))?;
        Ok(ticker)
    }
}

impl Drop for WaitTicker {
    fn drop(&mut self) {
        // All-zero values disarm the timer.
        let _ = set_timer(Duration::ZERO);
        for (sig, act) in self.saved.drain(..).rev() {
            let _ = set_action(sig, &act);
        }
    }
}
