//! The standard streams as sysmeter uses them: a best-effort stderr writer that never
//! panics (`eprintln!` panics once stderr's reader is gone, which let one finished client
//! crash `serve`), and whether stdout was really closed when the process started.
//!
//! The Rust runtime reopens a closed standard descriptor on /dev/null (read-write) before
//! `main`, so by then a closed stdout looks exactly like the read-write /dev/null that
//! orchestration tools pass (Python's `subprocess.DEVNULL`). A constructor in `.init_array`
//! runs before the runtime does and records whether descriptor 1 was open.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set before `main` when descriptor 1 was not open.
static STDOUT_CLOSED_AT_START: AtomicBool = AtomicBool::new(false);

extern "C" fn record_stdout_state() {
    // SAFETY: F_GETFD on a descriptor number only reads the descriptor table; it is valid
    // for any integer and touches no memory of ours.
    let flags = unsafe { libc::fcntl(libc::STDOUT_FILENO, libc::F_GETFD) };
    if flags == -1 {
        STDOUT_CLOSED_AT_START.store(true, Ordering::Relaxed);
    }
}

/// Run by the dynamic loader (or the static start code) with the other constructors, before
/// the Rust runtime's own initialisation reopens closed descriptors.
#[used]
// SAFETY: the section holds pointers to functions taking no arguments that the start code
// calls once; `record_stdout_state` is such a function and only stores an atomic.
#[unsafe(link_section = ".init_array")]
static RECORD_STDOUT_STATE: extern "C" fn() = record_stdout_state;

/// Whether stdout was closed when the process started (`sysmeter list >&-`), as opposed to
/// open on anything, /dev/null included.
pub fn stdout_closed_at_start() -> bool {
    // Naming the constructor here keeps its object in the link.
    let _ = &RECORD_STDOUT_STATE;
    STDOUT_CLOSED_AT_START.load(Ordering::Relaxed)
}

/// Writes `text` to stderr, ignoring failure: where stderr is gone there is nowhere left to
/// report it, and the caller's own outcome must not change because of it.
pub fn err(text: &str) {
    let mut stderr = std::io::stderr().lock();
    let _ = stderr
        .write_all(text.as_bytes())
        .and_then(|()| stderr.flush());
}

/// Writes `text` and a newline to stderr, ignoring failure.
pub fn errln(text: impl std::fmt::Display) {
    err(&format!("{text}\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_test_process_starts_with_stdout_open() {
        // The test harness runs with stdout open (a pipe or a terminal): the constructor ran
        // and found descriptor 1 open.
        assert!(!stdout_closed_at_start());
        errln("stdio: a line on stderr");
    }
}
