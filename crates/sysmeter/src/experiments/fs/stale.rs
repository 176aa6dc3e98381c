//! Test directories left behind by a `bench` that was killed (SIGKILL, OOM, power loss)
//! before its `TestDir` could remove them. Every test directory is named
//! `sysmeter-fs-<pid>-<random>` ([`prefix`]) and holds a lock file ([`OWNER_LOCK`]) on which
//! its owner keeps an exclusive `flock` for as long as it lives; the kernel drops the lock
//! when the owner dies, however it dies. The next bench removes the directories whose lock
//! it can take ([`remove_stale`]).
//!
//! Why a lock and not the pid in the name: pid numbers are not unique across pid namespaces
//! (a bench in a container sees other pids than one on the host, over the same directory),
//! and a pid is reused. Only directories of the current user are ever touched; one without a
//! lock file (written by an older sysmeter, or caught between its creation and its lock) is
//! removed only when it has not changed for `UNLOCKED_AGE`.

use std::fs::File;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

/// The lock file inside every test directory, held by its owner.
pub const OWNER_LOCK: &str = ".sysmeter-owner";

/// How long a test directory without a lock file must have been left alone to be stale.
const UNLOCKED_AGE: Duration = Duration::from_secs(3600);

/// Takes the owner's lock of the test directory `dir` (just created by this process): held
/// until the returned file is closed.
pub fn own(dir: &Path) -> std::io::Result<File> {
    let f = File::create(dir.join(OWNER_LOCK))?;
    f.lock()?;
    Ok(f)
}

/// The name prefix of this process's test directories.
pub fn prefix() -> String {
    format!("{PREFIX}{}-", std::process::id())
}

const PREFIX: &str = "sysmeter-fs-";

/// What [`remove_stale`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    /// Directories removed.
    pub dirs: usize,
    /// Bytes of the files in them.
    pub bytes: u64,
}

/// Removes the test directories in `base` whose owning process is gone. Errors (an
/// unreadable `base`, a directory that cannot be removed) leave things as they are: this is
/// housekeeping, never a reason to fail a bench.
pub fn remove_stale(base: &Path) -> Removed {
    let mut removed = Removed::default();
    let Ok(entries) = std::fs::read_dir(base) else {
        return removed;
    };
    let me = crate::host::ownership::my_uid();
    for entry in entries.flatten() {
        let name = entry.file_name();
        if owner(&name.to_string_lossy()).is_none() {
            continue;
        }
        let Ok(meta) = entry.metadata() else {
            continue;
        };
        if !meta.is_dir() || Some(meta.uid()) != me || !abandoned(&entry.path(), &meta) {
            continue;
        }
        let bytes = size(&entry.path());
        if std::fs::remove_dir_all(entry.path()).is_ok() {
            removed.dirs += 1;
            removed.bytes += bytes;
        }
    }
    removed
}

/// Whether no live process owns the test directory `dir`: its lock can be taken, or it has
/// no lock file and has not changed for `UNLOCKED_AGE`.
fn abandoned(dir: &Path, meta: &std::fs::Metadata) -> bool {
    let lock = dir.join(OWNER_LOCK);
    if lock.exists() {
        return crate::host::ownership::lock_is_free(&lock);
    }
    meta.modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age >= UNLOCKED_AGE)
}

/// The owner's pid of a test directory name, `None` for any other name.
fn owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let (pid, random) = rest.split_once('-')?;
    (!random.is_empty()).then_some(())?;
    pid.parse().ok().filter(|&p| p > 0)
}

/// Bytes of the regular files directly in `dir` (the experiments write no subdirectories).
fn size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .filter(|m| m.is_file())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_directories_whose_owner_lock_is_free_are_removed() {
        assert_eq!(owner("sysmeter-fs-123-abc"), Some(123));
        assert_eq!(owner("sysmeter-fs-abc"), None);
        assert_eq!(owner("sysmeter-fs-0-abc"), None);
        assert_eq!(owner("other-123-abc"), None);
        let base = tempfile::tempdir().expect("base");
        // A live owner holds its lock; the name's pid does not matter (it may be another
        // namespace's, or reused).
        let live = base.path().join("sysmeter-fs-4194304-live");
        let dead = base.path().join(format!("{}dead", prefix()));
        let unlocked_new = base.path().join("sysmeter-fs-7-new");
        let unmarked = base.path().join("sysmeter-fs-old");
        for d in [&live, &dead, &unlocked_new, &unmarked] {
            std::fs::create_dir(d).expect("mkdir");
        }
        let held = own(&live).expect("own live");
        drop(own(&dead).expect("own dead"));
        std::fs::write(dead.join("f"), [0u8; 1000]).expect("write");
        let removed = remove_stale(base.path());
        assert_eq!(
            removed,
            Removed {
                dirs: 1,
                bytes: 1000
            }
        );
        assert!(
            live.exists() && !dead.exists(),
            "the dead owner's directory goes"
        );
        assert!(
            unlocked_new.exists() && unmarked.exists(),
            "recent or foreign names stay"
        );
        drop(held);
    }
}
