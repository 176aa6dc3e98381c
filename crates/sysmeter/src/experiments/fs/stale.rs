//! Test directories left behind by a `bench` that was killed (SIGKILL, OOM, power loss)
//! before its `TestDir` could remove them. Every test directory is named
//! `sysmeter-fs-<pid>-<random>` after the process that owns it ([`prefix`]); the next bench
//! removes those whose owner no longer runs ([`remove_stale`]). A directory of a live
//! process, and any other name, is left alone.

use std::path::Path;

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
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = owner(&name.to_string_lossy()) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || Path::new(&format!("/proc/{pid}")).exists() {
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
    fn only_directories_of_dead_owners_are_removed() {
        assert_eq!(owner("sysmeter-fs-123-abc"), Some(123));
        assert_eq!(owner("sysmeter-fs-abc"), None);
        assert_eq!(owner("sysmeter-fs-0-abc"), None);
        assert_eq!(owner("other-123-abc"), None);
        let base = tempfile::tempdir().expect("base");
        let live = base.path().join(format!("{}x", prefix()));
        // Pid 4194304 is above the kernel's largest pid_max, so it never runs.
        let dead = base.path().join("sysmeter-fs-4194304-x");
        let unmarked = base.path().join("sysmeter-fs-old");
        for d in [&live, &dead, &unmarked] {
            std::fs::create_dir(d).expect("mkdir");
        }
        std::fs::write(dead.join("f"), [0u8; 1000]).expect("write");
        let removed = remove_stale(base.path());
        assert_eq!(
            removed,
            Removed {
                dirs: 1,
                bytes: 1000
            }
        );
        assert!(live.exists() && unmarked.exists() && !dead.exists());
    }
}
