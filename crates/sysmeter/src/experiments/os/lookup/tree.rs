//! The directory tree `os.lookup` resolves paths in: a temporary directory under `--dir`
//! (default: the working directory, so the file system is the one the user works on, not a
//! tmpfs), removed with everything in it on drop — also on Ctrl-C, which returns through the
//! experiment and drops it. It is held open (`root`), so relative paths resolve from it and
//! count exactly the components they name.
//!
//! Layout: a chain `d/d/…/d` of [`MAX_DEPTH`] − 1 short-named directories with a file `f`
//! at every level; a chain of [`LONG_DEPTH`] − 1 directories with 255-byte names ending in
//! a 255-byte file name; symbolic links `l1 → f`, `l2 → l1`, … `l8 → l7`; a `PATH` of empty
//! directories `p0 … p{N-1}` with an executable `cmd` in the last; an empty `neg/` for
//! lookups of names that do not exist.

use std::ffi::CString;
use std::fs::{self, File};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::harness::ExperimentError;

/// Deepest path measured, in components.
pub const MAX_DEPTH: usize = 32;
/// Components of the long-name path (each 255 bytes, NAME_MAX of ext4, xfs, btrfs, tmpfs).
pub const LONG_DEPTH: usize = 8;
/// Length of each long component.
pub const LONG_NAME: usize = 255;
/// Longest symbolic-link chain.
pub const MAX_LINKS: usize = 8;

/// The tree; removed on drop.
#[derive(Debug)]
pub struct Tree {
    dir: tempfile::TempDir,
    root: File,
}

fn io(what: &str, path: &Path) -> impl Fn(std::io::Error) -> ExperimentError {
    let text = format!("{what} {}", path.display());
    move |e| {
        ExperimentError::Failed(format!(
            "{text} failed: {e}; pass a writable directory with --dir"
        ))
    }
}

impl Tree {
    /// Builds the tree under `base` with a `PATH` of `path_dirs` directories.
    pub fn create(base: &Path, path_dirs: usize) -> Result<Tree, ExperimentError> {
        let dir = tempfile::Builder::new()
            .prefix("sysmeter-lookup-")
            .tempdir_in(base)
            .map_err(io("creating a directory in", base))?;
        let top = dir.path().to_path_buf();
        let mut level = top.clone();
        for depth in 1..=MAX_DEPTH {
            fs::write(level.join("f"), b"").map_err(io("creating a file in", &level))?;
            if depth < MAX_DEPTH {
                level.push("d");
                fs::create_dir(&level).map_err(io("creating", &level))?;
            }
        }
        let mut long = top.clone();
        for _ in 1..LONG_DEPTH {
            long.push("L".repeat(LONG_NAME));
            fs::create_dir(&long).map_err(io("creating", &top))?;
        }
        fs::write(long.join("F".repeat(LONG_NAME)), b"").map_err(io("creating a file in", &top))?;
        for k in 1..=MAX_LINKS {
            let target = if k == 1 {
                "f".to_string()
            } else {
                format!("l{}", k - 1)
            };
            let link = top.join(format!("l{k}"));
            std::os::unix::fs::symlink(target, &link).map_err(io("creating the link", &link))?;
        }
        for i in 0..path_dirs {
            let p = top.join(format!("p{i}"));
            fs::create_dir(&p).map_err(io("creating", &p))?;
        }
        let cmd = top
            .join(format!("p{}", path_dirs.saturating_sub(1)))
            .join("cmd");
        fs::write(&cmd, b"#!/bin/sh\n").map_err(io("creating", &cmd))?;
        fs::set_permissions(&cmd, fs::Permissions::from_mode(0o755)).map_err(io("chmod", &cmd))?;
        fs::create_dir(top.join("neg")).map_err(io("creating neg in", &top))?;
        let root = File::open(&top).map_err(io("opening", &top))?;
        Ok(Tree { dir, root })
    }

    /// The directory fd relative paths resolve from.
    pub fn fd(&self) -> RawFd {
        self.root.as_raw_fd()
    }

    /// The tree's absolute path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// A C string of `path` (no NUL inside: the tree's names have none).
pub fn c(path: &Path) -> Result<CString, ExperimentError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| ExperimentError::Failed(format!("{} contains a NUL byte", path.display())))
}

/// The relative path of `depth` components through the short-named chain: `d/…/d/f`.
pub fn short_path(depth: usize) -> PathBuf {
    let mut p = PathBuf::new();
    for _ in 1..depth {
        p.push("d");
    }
    p.push("f");
    p
}

/// The relative path of [`LONG_DEPTH`] components of [`LONG_NAME`] bytes each.
pub fn long_path() -> PathBuf {
    let mut p = PathBuf::new();
    for _ in 1..LONG_DEPTH {
        p.push("L".repeat(LONG_NAME));
    }
    p.push("F".repeat(LONG_NAME));
    p
}

/// Names of files that do not exist, written into one buffer without allocating: `neg/x`
/// followed by a decimal number and a NUL. The same code serves the cached case (numbers
/// cycle through a few names) and the fresh case (every number is new), so both carry the
/// same formatting cost.
pub struct Names {
    buf: [u8; 32],
}

const PREFIX: &[u8] = b"neg/x";

impl Names {
    /// An empty name buffer.
    pub fn new() -> Names {
        let mut buf = [0u8; 32];
        buf[..PREFIX.len()].copy_from_slice(PREFIX);
        Names { buf }
    }

    /// The name for number `n`.
    pub fn name(&mut self, mut n: u64) -> &std::ffi::CStr {
        let mut digits = [0u8; 20];
        let mut len = 0;
        loop {
            digits[len] = b'0' + (n % 10) as u8;
            len += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let start = PREFIX.len();
        for i in 0..len {
            self.buf[start + i] = digits[len - 1 - i];
        }
        self.buf[start + len] = 0;
        std::ffi::CStr::from_bytes_until_nul(&self.buf).unwrap_or(c"neg/x")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sysmeter_sys::syscall as sys;

    #[test]
    fn the_tree_has_every_path_and_goes_away() {
        let base = tempfile::tempdir().expect("base");
        let top;
        {
            let t = Tree::create(base.path(), 5).expect("tree");
            top = t.path().to_path_buf();
            for depth in [1, 2, 32] {
                let p = c(&short_path(depth)).expect("c");
                assert_eq!(sys::stat_at(t.fd(), &p), 0, "depth {depth}");
            }
            assert_eq!(short_path(3), PathBuf::from("d/d/f"));
            assert_eq!(sys::stat_at(t.fd(), &c(&long_path()).expect("c")), 0);
            assert_eq!(sys::stat_at(t.fd(), c"l8"), 0, "the chain resolves");
            assert_eq!(sys::stat_at(t.fd(), c"p4/cmd"), 0);
            assert_eq!(sys::stat_at(t.fd(), c"p3/cmd"), libc::ENOENT);
            let mut names = Names::new();
            assert_eq!(names.name(1234).to_bytes(), b"neg/x1234");
            assert_eq!(names.name(7).to_bytes(), b"neg/x7");
            assert_eq!(sys::stat_at(t.fd(), names.name(0)), libc::ENOENT);
        }
        assert!(!top.exists(), "removed on drop");
    }
}
