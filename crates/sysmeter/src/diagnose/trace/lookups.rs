//! Path lookups of a traced program: which system calls take a path (strace's `%file`
//! class, [`super::classes`]), which argument holds it, and the tally of the paths looked up
//! — per path the count and the failures by errno — that the ptrace backend fills from the
//! tracee's memory at each call's entry. The tracepoint backend sees call numbers only, so
//! it counts and times the calls but has no paths.
//!
//! Pure: the path bytes come from the caller.

use std::collections::{BTreeMap, HashMap};

/// Distinct paths kept; lookups of further new paths are counted in [`Lookups::untracked`].
pub const MAX_PATHS: usize = 100_000;
/// Longest path read from the tracee (PATH_MAX).
pub const MAX_PATH_LEN: usize = 4096;

/// Which argument (0-based) of call `name` is the path it resolves (for two-path calls the
/// one that names the new entry: `rename`'s source, `symlink`'s link); `None` for calls
/// that take no path or a path in an argument this table leaves out (`mount`).
pub fn path_arg(name: &str) -> Option<usize> {
    Some(match name {
        "open" | "creat" | "access" | "stat" | "lstat" | "statfs" | "truncate" | "chdir"
        | "chroot" | "rename" | "mkdir" | "rmdir" | "link" | "unlink" | "readlink" | "chmod"
        | "chown" | "lchown" | "utime" | "utimes" | "mknod" | "execve" | "setxattr"
        | "lsetxattr" | "getxattr" | "lgetxattr" | "listxattr" | "llistxattr" | "removexattr"
        | "lremovexattr" | "swapon" | "swapoff" | "acct" | "uselib" | "umount2" | "pivot_root" => 0,
        "openat" | "openat2" | "faccessat" | "faccessat2" | "newfstatat" | "statx" | "renameat"
        | "renameat2" | "mkdirat" | "unlinkat" | "linkat" | "readlinkat" | "fchmodat"
        | "fchmodat2" | "fchownat" | "utimensat" | "futimesat" | "mknodat" | "execveat"
        | "name_to_handle_at" | "inotify_add_watch" | "symlink" | "open_tree" | "fspick"
        | "setxattrat" | "getxattrat" | "listxattrat" | "removexattrat" => 1,
        "symlinkat" => 2,
        _ => return None,
    })
}

/// What happened to one path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathStats {
    /// Lookups (completed calls naming it).
    pub count: u64,
    /// Failed lookups by errno.
    pub errors: BTreeMap<i64, u64>,
}

impl PathStats {
    /// Failed lookups.
    pub fn failed(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// The paths a program looked up.
#[derive(Debug, Clone, Default)]
pub struct Lookups {
    paths: HashMap<Vec<u8>, PathStats>,
    /// Lookups of paths beyond the first [`MAX_PATHS`] distinct ones (counted, not kept).
    pub untracked: u64,
    /// Path arguments that could not be read (bad pointer, the task vanished).
    pub unreadable: u64,
    /// Calls given an empty path (`AT_EMPTY_PATH`: an fstat through newfstatat or statx,
    /// no lookup) or a NULL one (`utimensat` on a descriptor).
    pub no_path: u64,
}

impl Lookups {
    /// Tallies one completed lookup of `path`, failed with `errno` if given.
    pub fn record(&mut self, path: &[u8], errno: Option<i64>) {
        if path.is_empty() {
            self.no_path += 1;
            return;
        }
        if self.paths.len() >= MAX_PATHS && !self.paths.contains_key(path) {
            self.untracked += 1;
            return;
        }
        let s = match self.paths.get_mut(path) {
            Some(s) => s,
            None => self.paths.entry(path.to_vec()).or_default(),
        };
        s.count += 1;
        if let Some(e) = errno {
            *s.errors.entry(e).or_default() += 1;
        }
    }

    /// Lookups with a path, in all.
    pub fn total(&self) -> u64 {
        self.paths.values().map(|s| s.count).sum::<u64>() + self.untracked
    }

    /// Distinct paths kept.
    pub fn distinct(&self) -> usize {
        self.paths.len()
    }

    /// The `n` most looked-up paths, most first (ties by path).
    pub fn top(&self, n: usize) -> Vec<(String, &PathStats)> {
        let mut v: Vec<(&Vec<u8>, &PathStats)> = self.paths.iter().collect();
        v.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(b.0)));
        v.into_iter()
            .take(n)
            .map(|(p, s)| (String::from_utf8_lossy(p).into_owned(), s))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnose::trace::classes;

    #[test]
    fn every_path_call_is_in_the_file_class() {
        let file = classes::members("file").expect("file");
        for name in [
            "open",
            "openat",
            "newfstatat",
            "statx",
            "access",
            "execve",
            "symlinkat",
        ] {
            assert!(path_arg(name).is_some() && file.contains(&name), "{name}");
        }
        let with_arg = file.iter().filter(|n| path_arg(n).is_some()).count();
        assert!(
            with_arg * 10 >= file.len() * 8,
            "{with_arg} of {}",
            file.len()
        );
        assert_eq!(path_arg("read"), None);
        assert_eq!(path_arg("openat"), Some(1));
    }

    #[test]
    fn paths_are_tallied_with_their_failures() {
        let mut l = Lookups::default();
        for _ in 0..3 {
            l.record(b"/bin/missing", Some(2));
        }
        l.record(b"/etc/passwd", None);
        l.record(b"", None);
        let top = l.top(5);
        assert_eq!(top[0].0, "/bin/missing");
        assert_eq!((top[0].1.count, top[0].1.failed()), (3, 3));
        assert_eq!(top[0].1.errors.get(&2), Some(&3));
        assert_eq!((l.total(), l.no_path, l.distinct()), (4, 1, 2));
    }

    #[test]
    fn distinct_paths_are_capped() {
        let mut l = Lookups::default();
        for i in 0..MAX_PATHS + 10 {
            l.record(format!("/p{i}").as_bytes(), None);
        }
        l.record(b"/p0", None);
        assert_eq!((l.distinct(), l.untracked), (MAX_PATHS, 10));
        assert_eq!(l.total(), MAX_PATHS as u64 + 11);
    }
}
