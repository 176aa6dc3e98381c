//! A full disk or an exhausted disk quota named as such, with the fix, wherever sysmeter
//! writes: the SQLite store (on open, on every write, and at its checkpoint) and every file
//! named on the command line (`commands::outfile`). Two causes, two sentences:
//!
//! - ENOSPC (`NoRoom::Full`): "the file system holding … is full (… free of …)" (the
//!   figures when its own count agrees);
//! - EDQUOT (`NoRoom::Quota`): "the disk quota of uid … on the file system holding … is
//!   exhausted" — the file system may have room, this user has none.
//!
//! A file write carries its OS error and is mapped directly ([`NoRoom::of_io`]). SQLite does
//! not: it says `SQLITE_FULL` for ENOSPC, "disk I/O error" for EDQUOT (and for a full disk
//! met while creating its shared-memory file at open). So for a store error that may come
//! from the file system (`StoreError::file_system_path`) the file system is asked the same
//! question the database met — one small write beside it ([`asked`]) — and what it answers
//! is said; when it answers nothing (room came back meanwhile) an `SQLITE_FULL` is still
//! named a full disk. Used by `commands::open_path`, every store write of a run and
//! `import`, and `commands::outfile`.

use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::store::{Store, StoreError};

/// How much the question to the file system writes: a page and its journal, what SQLite
/// needs to store anything.
const ROOM: usize = 64 * 1024;

/// Why a file system took no more of this process's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoRoom {
    /// ENOSPC: the file system is full (its blocks, or its inodes).
    Full,
    /// EDQUOT: this user's disk quota on it is used up.
    Quota,
}

impl NoRoom {
    /// The no-room an OS error number means; `None` for every other error.
    pub fn of_errno(errno: i32) -> Option<NoRoom> {
        match errno {
            libc::ENOSPC => Some(NoRoom::Full),
            libc::EDQUOT => Some(NoRoom::Quota),
            _ => None,
        }
    }

    /// The no-room of an I/O error, `None` when it is another error.
    pub fn of_io(e: &std::io::Error) -> Option<NoRoom> {
        e.raw_os_error().and_then(NoRoom::of_errno)
    }
}

/// The one sentence of a write that met `no_room`: `what` failed (e.g. "cannot use database
/// X"), on the file system holding `dir`, fixed by freeing room or by `elsewhere` (e.g. "pass
/// --db PATH on another file system").
pub fn sentence(what: &str, no_room: NoRoom, dir: &Path, elsewhere: &str) -> String {
    let shown = dir.display();
    match no_room {
        NoRoom::Full => {
            // Its count of free bytes, when it agrees; ENOSPC with room counted comes from
            // elsewhere (no inodes left, root's reserved blocks, a device such as /dev/full).
            let free = match sysmeter_sys::files::space(dir) {
                Ok(s) if s.available < ROOM as u64 => format!(
                    " ({} free of {})",
                    crate::model::units::size(s.available),
                    crate::model::units::size(s.total)
                ),
                _ => String::new(),
            };
            format!(
                "{what}: the file system holding {shown} is full{free}; free some space \
                 there, or {elsewhere}"
            )
        }
        NoRoom::Quota => {
            let uid = crate::host::ownership::my_uid()
                .map_or_else(|| "this user".to_string(), |u| format!("uid {u}"));
            format!(
                "{what}: the disk quota of {uid} on the file system holding {shown} is \
                 exhausted; delete some of your files there or ask for a larger quota, or \
                 {elsewhere}"
            )
        }
    }
}

/// `e`, as the full disk or exhausted quota it is when it is one.
pub fn named(e: StoreError) -> anyhow::Error {
    match full(&e) {
        Some(sentence) => anyhow::anyhow!(sentence),
        None => anyhow::Error::new(e),
    }
}

/// The text of `e`, as the full disk or exhausted quota it is when it is one (for the
/// warnings of a run whose results were written but not stored).
pub fn said(e: &StoreError) -> String {
    full(e).unwrap_or_else(|| e.to_string())
}

/// Checkpoints `store` after a run was stored (`Store::checkpoint`); a failure, a full disk
/// said as such, is a warning: the run is stored, in the write-ahead log.
pub fn checkpoint(store: &mut Store) {
    if let Err(e) = store.checkpoint() {
        super::console::errln(format!(
            "warning: {}; what was stored is kept in its write-ahead log {}-wal",
            said(&e),
            store.path().display()
        ));
    }
}

/// The sentence of no room under the database of `e`, `None` when there is room.
fn full(e: &StoreError) -> Option<String> {
    let path = e.file_system_path()?;
    let dir = existing_dir(path)?;
    let no_room = asked(&dir).or(e.said_full().then_some(NoRoom::Full))?;
    Some(sentence(
        &format!("cannot use database {}", path.display()),
        no_room,
        &dir,
        "pass --db PATH on another file system",
    ))
}

/// What the file system holding `dir` answers a write of [`ROOM`] bytes by this process:
/// the no-room it says, `None` when it takes them (or fails for another reason). The file
/// has no name (`O_TMPFILE`) and is gone when closed.
pub fn asked(dir: &Path) -> Option<NoRoom> {
    let file = match tempfile::tempfile_in(dir) {
        Ok(f) => f,
        Err(e) => return NoRoom::of_io(&e),
    };
    let wrote = file
        .write_all_at(&[0u8; ROOM], 0)
        .and_then(|()| file.sync_data());
    wrote.err().and_then(|e| NoRoom::of_io(&e))
}

/// `path` if it is a directory, else the nearest directory above it that exists (the
/// directory of a file, or of a database not created yet).
pub fn existing_dir(path: &Path) -> Option<PathBuf> {
    let path = std::path::absolute(path).ok()?;
    path.ancestors().find(|p| p.is_dir()).map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_and_edquot_are_told_apart_and_nothing_else_is_either() {
        assert_eq!(NoRoom::of_errno(libc::ENOSPC), Some(NoRoom::Full));
        assert_eq!(NoRoom::of_errno(libc::EDQUOT), Some(NoRoom::Quota));
        for other in [libc::EIO, libc::EACCES, libc::EROFS, libc::EFBIG, 0] {
            assert_eq!(NoRoom::of_errno(other), None, "errno {other}");
        }
        let io = std::io::Error::from_raw_os_error(libc::EDQUOT);
        assert_eq!(NoRoom::of_io(&io), Some(NoRoom::Quota));
        assert_eq!(NoRoom::of_io(&std::io::Error::other("x")), None);
    }

    #[test]
    fn each_sentence_names_its_cause_the_place_and_the_fix() {
        let dir = tempfile::tempdir().expect("dir");
        let what = "cannot write --out r.html";
        let fix = "write --out to another file system";
        let full = sentence(what, NoRoom::Full, dir.path(), fix);
        let quota = sentence(what, NoRoom::Quota, dir.path(), fix);
        for s in [&full, &quota] {
            assert!(s.starts_with(what), "{s}");
            assert!(s.contains(&dir.path().display().to_string()), "{s}");
            assert!(s.ends_with(fix), "{s}");
        }
        assert!(full.contains(" is full") && full.contains("free some space"));
        assert!(
            !full.contains(" free of "),
            "a temp dir's room is not called full: {full}"
        );
        assert!(quota.contains("the disk quota of uid") && quota.contains("is exhausted"));
        assert!(!quota.contains("is full") && !full.contains("quota"));
    }

    #[test]
    fn a_file_system_with_room_answers_nothing_and_a_store_error_stays_itself() {
        let dir = tempfile::tempdir().expect("dir");
        assert_eq!(asked(dir.path()), None, "a temp dir has room for 64 KiB");
        let e = StoreError::Open {
            path: dir.path().join("runs.db"),
            reason: "disk I/O error".into(),
        };
        let text = e.to_string();
        assert_eq!(said(&e), text, "not called a full disk");
        let below = dir.path().join("not/yet/runs.db");
        assert_eq!(existing_dir(&below).as_deref(), Some(dir.path()));
    }
}
