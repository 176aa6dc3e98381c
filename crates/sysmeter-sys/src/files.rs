//! File-system facts and hints for the `fs` experiments: free space (`statvfs`), the file
//! system type (`statfs` magic, to name tmpfs, FUSE, NFS), `posix_fadvise` access-pattern
//! hints (random reads must not trigger readahead when the page cache is in the path), and
//! `fsync`/`fdatasync`. Page-cache eviction and residency (`posix_fadvise(DONTNEED)`,
//! `mincore`) live in [`crate::memory`], shared with `mem.pagefault`.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Space on the file system holding a path (`statvfs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes an unprivileged user may still write (`f_bavail × f_frsize`).
    pub available: u64,
    /// Size of the file system, bytes.
    pub total: u64,
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// Free and total space of the file system that holds `path`.
pub fn space(path: &Path) -> io::Result<Space> {
    let c = c_path(path)?;
    // SAFETY: statvfs is plain data; zeroed is a valid value.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` is valid and writable.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(crate::last_error());
    }
    let frag = st.f_frsize as u64;
    Ok(Space {
        available: (st.f_bavail as u64).saturating_mul(frag),
        total: (st.f_blocks as u64).saturating_mul(frag),
    })
}

/// The `f_type` magic number of the file system holding `path` (`statfs`), e.g.
/// 0x01021994 for tmpfs, 0x65735546 for FUSE, 0x6969 for NFS, 0xEF53 for ext2/3/4.
pub fn fs_magic(path: &Path) -> io::Result<u64> {
    let c = c_path(path)?;
    // SAFETY: statfs is plain data; zeroed is a valid value.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `st` is valid and writable.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(crate::last_error());
    }
    Ok(st.f_type as u64)
}

/// A `posix_fadvise` access-pattern hint for a whole file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    /// POSIX_FADV_NORMAL: the default readahead.
    Normal,
    /// POSIX_FADV_RANDOM: no readahead, so each read fetches only the block asked for.
    Random,
    /// POSIX_FADV_SEQUENTIAL: a larger readahead window.
    Sequential,
}

/// Tell the kernel how `file` will be read.
pub fn fadvise(file: &File, pattern: Pattern) -> io::Result<()> {
    let advice = match pattern {
        Pattern::Normal => libc::POSIX_FADV_NORMAL,
        Pattern::Random => libc::POSIX_FADV_RANDOM,
        Pattern::Sequential => libc::POSIX_FADV_SEQUENTIAL,
    };
    // SAFETY: plain system call on an open descriptor; no memory is passed.
    let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, advice) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::from_raw_os_error(rc))
    }
}

/// `fdatasync`: make the file's data (and only the metadata needed to read it back)
/// durable. `File::sync_all` is the full `fsync`.
pub fn fdatasync(file: &File) -> io::Result<()> {
    // SAFETY: plain system call on an open descriptor.
    if unsafe { libc::fdatasync(file.as_raw_fd()) } == 0 {
        Ok(())
    } else {
        Err(crate::last_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_and_type_of_the_temp_dir() {
        let dir = std::env::temp_dir();
        let s = space(&dir).expect("statvfs");
        assert!(s.total > 0 && s.available <= s.total);
        assert!(fs_magic(&dir).expect("statfs") != 0);
        assert!(space(Path::new("/nonexistent/sysmeter")).is_err());
    }

    #[test]
    fn hints_and_sync_on_a_file() {
        let path = std::env::temp_dir().join(format!("sysmeter-files-{}", std::process::id()));
        let f = File::create(&path).expect("create");
        std::fs::remove_file(&path).expect("unlink");
        for p in [Pattern::Random, Pattern::Sequential, Pattern::Normal] {
            fadvise(&f, p).expect("fadvise");
        }
        fdatasync(&f).expect("fdatasync");
    }
}
