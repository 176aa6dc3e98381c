//! The one rule for a run record read from a file named on the command line (`import`,
//! `compare`, `report`): it must be a regular file (or `-`, standard input) no larger than
//! [`MAX_RECORD_BYTES`], hold a run record in JSON, and be of a schema this build reads.
//! A FIFO, a device or a socket is refused before it is read — opened without blocking, so
//! a FIFO with no writer cannot hang the command and `/dev/zero` cannot fill the memory —
//! and a symlink is judged by what it points at. Every refusal is a [`UsageError`] of one
//! sentence ending with the caller's fix.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;

use super::UsageError;
use crate::model::{RunRecord, SCHEMA_VERSION};

/// The largest run record read: the biggest real ones (a `profile` with its flame graph and
/// folded stacks) are a few MiB; this leaves a wide margin and still bounds the memory.
pub const MAX_RECORD_BYTES: u64 = 256 << 20;

/// What a file that is not a regular file is, for the refusal.
fn kind_name(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "a directory"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "something else"
    }
}

fn refuse_unless_file(kind: std::fs::FileType) -> Result<(), String> {
    match kind.is_file() {
        true => Ok(()),
        false => Err(format!("it is {}, not a regular file", kind_name(kind))),
    }
}

/// The text of `path` (`-`: standard input), at most [`MAX_RECORD_BYTES`], from a regular
/// file only.
fn read_text(path: &str) -> Result<String, String> {
    let mut text = String::new();
    let limit = MAX_RECORD_BYTES + 1;
    if path == "-" {
        let read = std::io::stdin().take(limit).read_to_string(&mut text);
        read.map_err(|e| e.to_string())?;
    } else {
        // What the path names (a socket cannot even be opened), then the same of what was
        // opened, in case it changed in between.
        let kind = std::fs::metadata(path)
            .map_err(|e| e.to_string())?
            .file_type();
        refuse_unless_file(kind)?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .map_err(|e| e.to_string())?;
        refuse_unless_file(file.metadata().map_err(|e| e.to_string())?.file_type())?;
        let read = file.take(limit).read_to_string(&mut text);
        read.map_err(|e| e.to_string())?;
    }
    if text.len() as u64 > MAX_RECORD_BYTES {
        return Err(format!(
            "it is larger than {} MiB, more than any run record",
            MAX_RECORD_BYTES >> 20
        ));
    }
    Ok(text)
}

/// Reads the run record in `path` (`-`: standard input); anything else is a [`UsageError`]
/// of one sentence ending with `fix`.
pub(super) fn read_record(path: &str, fix: &str) -> anyhow::Result<RunRecord> {
    let text =
        read_text(path).map_err(|e| UsageError(format!("cannot read {path}: {e}; {fix}")))?;
    let run: RunRecord = serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("{path} is not a sysmeter run record ({e}); {fix}")))?;
    if run.schema > SCHEMA_VERSION {
        return Err(UsageError(format!(
            "{path} was written by a newer sysmeter (schema {}, this build knows {SCHEMA_VERSION}); \
             upgrade sysmeter",
            run.schema
        ))
        .into());
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(path: &str) -> String {
        match read_record(path, "FIX") {
            Ok(_) => panic!("{path} was read as a record"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_without_reading() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let link = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &link).expect("symlink");
        let mut paths = vec!["/dev/zero".to_string(), link.display().to_string()];
        paths.push(dir.path().display().to_string());
        if made.is_ok_and(|s| s.success()) {
            paths.push(fifo.display().to_string()); // no writer: a blocking open would hang
        }
        for path in paths {
            let e = refusal(&path);
            assert!(e.starts_with(&format!("cannot read {path}: it is")), "{e}");
            assert!(e.ends_with("; FIX"), "{e}");
        }
    }

    #[test]
    fn a_file_that_is_no_record_is_named_with_the_fix() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.json");
        std::fs::write(&path, "[1, 2]").expect("write");
        let shown = path.display().to_string();
        let e = refusal(&shown);
        assert!(
            e.starts_with(&format!("{shown} is not a sysmeter run record")),
            "{e}"
        );
        assert!(refusal("/nonexistent/x.json").contains("No such file"));
    }
}
