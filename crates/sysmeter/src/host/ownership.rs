//! Who owns a file sysmeter left behind: the live owner of a test directory, a uprobe group
//! or a temporary output holds an exclusive `flock` on a lock file for as long as it lives,
//! and the kernel drops it however the owner dies. So "its lock can be taken" means "its
//! owner is gone" — unlike a pid in a name, which repeats across pid namespaces. Used by
//! the housekeeping of `experiments::fs::stale`, `diagnose::observe::uprobes` and
//! `commands::outfile`.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Whether the lock file `path` exists and no live process holds its lock (taking it to
/// find out; it is released at once).
pub fn lock_is_free(path: &Path) -> bool {
    std::fs::File::open(path).is_ok_and(|f| f.try_lock().is_ok())
}

/// The effective user id of this process (the owner of `/proc/self`), `None` without /proc.
pub fn my_uid() -> Option<u32> {
    std::fs::metadata("/proc/self").map(|m| m.uid()).ok()
}
