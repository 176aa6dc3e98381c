//! The one writer of stdout and stderr: every line sysmeter prints goes through [`out`] or
//! [`err`], so a reader that stops early never makes a write panic (`print!` and
//! `eprint!` panic on a closed pipe, which cost `run -- CMD` the command's exit code).
//!
//! - stdout: a closed pipe (`sysmeter history | head -1`) ends the output quietly, like
//!   ripgrep and hyperfine; later writes are dropped. A stdout that was *closed* when sysmeter
//!   started (`sysmeter list >&-`) is an error: the Rust runtime quietly reopens a closed
//!   standard descriptor on /dev/null, so output would vanish; [`out`] refuses instead, and
//!   the command exits 1 with that sentence on stderr. Which it was is recorded before the
//!   runtime starts (`sysmeter_sys::stdio`), so a stdout open on /dev/null — even read-write,
//!   as Python's `subprocess.DEVNULL` and supervisors pass it — is fine.
//! - stderr: best effort (`sysmeter_sys::stdio::err`, also what `serve` logs with). Where
//!   stderr is gone there is nowhere left to report it, and the command's own outcome (a
//!   measured command's exit code, a server's clients) must not change because of it.
//!
//! Both pass everything through the one escaping of `model::visible` (keeping only the
//! report's own bold, `report::STYLES`): text that came from a store, a file or a
//! traced program never writes a control or bidi character to the terminal, whichever
//! printer formatted it. Only [`progress`], sysmeter's own live counter, writes a carriage
//! return.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once stdout's reader has gone: everything after is dropped.
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout. A closed pipe is not an error; a stdout closed at start is.
pub fn out(text: &str) -> anyhow::Result<()> {
    out_bytes(shown(text).as_bytes())
}

/// Writes `bytes` to stdout as they are, by the rules of [`out`]: only for a binary format
/// (`export --format pprof`), which its command never sends to a terminal.
pub fn out_bytes(bytes: &[u8]) -> anyhow::Result<()> {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return Ok(());
    }
    check_stdout()?;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
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
    sysmeter_sys::stdio::err(&shown(text));
}

/// Writes `text` and a newline to stderr, ignoring failure.
pub fn errln(text: impl std::fmt::Display) {
    sysmeter_sys::stdio::errln(shown(&text.to_string()));
}

/// Writes sysmeter's own live counter `line` to stderr as it is (it starts with a carriage
/// return, to overwrite itself); it must hold nothing that came from outside.
pub fn progress(line: &str) {
    sysmeter_sys::stdio::err(line);
}

/// `text` as it may reach a terminal (module docs).
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    crate::model::visible::visible_keeping(text, &crate::report::STYLES)
}

/// Whether stdout was closed when sysmeter started.
fn stdout_was_closed() -> bool {
    sysmeter_sys::stdio::stdout_closed_at_start()
}
