//! A full disk named as such: a store error that may come from the file system under an
//! SQLite database (`StoreError::file_system_path`) is checked against the file system
//! (`statvfs`); when it has no room left, or SQLite said `SQLITE_FULL`, the one sentence says
//! "the file system holding … is full" with the fix, instead of SQLite's "disk I/O error"
//! (which is what it says when the full disk stops it from creating its shared-memory file
//! at open). Used on open (`commands::open_path`) and on every write (a bench's results as
//! they are stored, the end of a run, `import`).

use std::path::Path;

use crate::store::StoreError;

/// Below this many bytes free a file system is full for SQLite (a page and its journal).
const ROOM: u64 = 64 * 1024;

/// `e`, as the full disk it is when it is one.
pub fn named(e: StoreError) -> anyhow::Error {
    match full(&e) {
        Some(sentence) => anyhow::anyhow!(sentence),
        None => anyhow::Error::new(e),
    }
}

/// The text of `e`, as the full disk it is when it is one (for the warnings of a run whose
/// results were written but not stored).
pub fn said(e: &StoreError) -> String {
    full(e).unwrap_or_else(|| e.to_string())
}

/// The sentence of a full disk under the database of `e`, `None` when it is not one.
fn full(e: &StoreError) -> Option<String> {
    let path = e.file_system_path()?;
    let dir = existing_ancestor(path)?;
    let space = sysmeter_sys::files::space(&dir).ok();
    let no_room = space.is_some_and(|s| s.available < ROOM);
    if !no_room && !e.said_full() {
        return None;
    }
    let free = match space {
        Some(s) => format!("{} bytes free of {}", s.available, s.total),
        None => "no space left".to_string(),
    };
    Some(format!(
        "cannot use database {}: the file system holding {} is full ({free}{}); free some \
         space there, or pass --db PATH on another file system",
        path.display(),
        dir.display(),
        if no_room {
            ""
        } else {
            ", or your quota on it is used up"
        }
    ))
}

/// `path` or the nearest directory above it that exists (a database not created yet).
fn existing_ancestor(path: &Path) -> Option<std::path::PathBuf> {
    let path = std::path::absolute(path).ok()?;
    path.ancestors()
        .find(|p| p.exists())
        .map(|p| match p.is_dir() {
            true => p.to_path_buf(),
            false => p.parent().unwrap_or(p).to_path_buf(),
        })
}
