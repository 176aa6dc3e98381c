//! The one writer of stdout and stderr: every line sysmeter prints goes through [`out`] or
//! [`err`], so a reader that stops early never makes a write panic (`print!` and
//! `eprint!` panic on a closed pipe, which cost `run -- CMD` the command's exit code).
//!
//! - stdout: a closed pipe (`sysmeter history | head -1`) ends the output quietly, like
//!   ripgrep and hyperfine; later writes are dropped. A stdout that was *closed* when sysmeter
//!   started (`sysmeter list >&-`) is an error: the Rust runtime quietly reopens a closed
//!   standard descriptor on /dev/null (read-write), so output would vanish; [`out`] refuses
//!   instead, and the command exits 1 with that sentence on stderr.
//! - stderr: best effort. Where stderr is gone there is nowhere left to report it, and the
//!   command's own outcome (a measured command's exit code) must not change because of it.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout's reader has gone: everything after is dropped.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout. A closed pipe is not an error; a stdout closed at start is.
pub fn out(text: &str) -> anyhow::Result<()> {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return Ok(());
    }
    check_stdout()?;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            STDOUT_GONE.store(true, Ordering::Relaxed);
            Ok(())
        }
        Err(e) => Err(anyhow::anyhow!("cannot write to stdout: {e}")),
        Ok(()) => Ok(()),
    }
}

/// Fails when stdout was closed when sysmeter started, so a measuring command can refuse
/// before it measures rather than lose its report at the end.
pub fn check_stdout() -> anyhow::Result<()> {
    if stdout_was_closed() {
        anyhow::bail!(
            "cannot write the output: stdout is closed; run sysmeter with stdout open (redirect \
             it to a file, or to /dev/null to discard it)"
        );
    }
    Ok(())
}

/// Writes `text` to stderr, ignoring failure (there is nowhere left to report it).
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

/// Whether descriptor 1 is the read-write /dev/null the Rust runtime opens in place of a
/// closed stdout. A shell's `>/dev/null` opens it write-only, so that is still allowed.
fn stdout_was_closed() -> bool {
    let target = std::fs::read_link("/proc/self/fd/1");
    if target.ok().as_deref() != Some(std::path::Path::new("/dev/null")) {
        return false;
    }
    let info = std::fs::read_to_string("/proc/self/fdinfo/1").unwrap_or_default();
    info.lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
        .is_some_and(|flags| flags & 0o3 == 0o2)
}
