//! Test files for the `fs` experiments: a temporary directory under `--dir` (default: the
//! working directory) that is removed on drop — also when an experiment returns early on
//! Ctrl-C, because every loop polls the interrupt flag and returns `Interrupted`, which drops
//! it — a free-space check before anything is written, files of incompressible random bytes
//! written in 1 MiB chunks, fsync'ed and dropped from the page cache, and the two ways of
//! reading "uncached": O_DIRECT, or where the file system refuses it (tmpfs, some FUSE
//! mounts: EINVAL at open) posix_fadvise(DONTNEED) eviction verified page by page with
//! mincore.

use crate::model::units;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use sysmeter_sys::memory::{self, FileMap};

use crate::harness::{Ctx, ExperimentError};

/// Block size of every read and of the O_DIRECT alignment.
pub const BLOCK: usize = 4096;

/// Chunk of a file write.
const CHUNK: usize = 1 << 20;

/// Space left free on the file system after the test files, so a run never fills a disk.
const HEADROOM: u64 = 256 << 20;

/// The directory the files of one experiment live in; removed with its contents on drop.
/// This process holds the lock of its owner file while it lives, so a bench killed before
/// the drop leaves a directory the next bench can recognise as stale
/// (`stale::remove_stale`).
#[derive(Debug)]
pub struct TestDir {
    /// The owner lock, held until the directory is removed (`None` on a file system without
    /// `flock`: the directory is then stale only after an hour without change). Declared
    /// first so it is closed first: on FUSE an open file being deleted becomes a
    /// `.fuse_hidden…` file that keeps the directory from being removed.
    _owner: Option<File>,
    dir: tempfile::TempDir,
}

impl TestDir {
    /// A fresh directory under `base` once `need` bytes (plus headroom) are known to fit.
    /// `what` names the option the user sets (`--dir`, `--remote-dir`) for the error.
    pub fn create(base: &Path, need: u64, what: &str) -> Result<TestDir, ExperimentError> {
        let shown = base.display();
        let meta = std::fs::metadata(base).map_err(|e| {
            ExperimentError::Failed(format!(
                "cannot use {what} {shown}: {e}; pass an existing writable directory with {what}"
            ))
        })?;
        if !meta.is_dir() {
            return Err(ExperimentError::Failed(format!(
                "cannot use {what} {shown}: it is not a directory; pass a directory with {what}"
            )));
        }
        let space = sysmeter_sys::files::space(base).map_err(|e| {
            ExperimentError::Failed(format!("cannot read the free space of {shown} (statvfs): {e}; pass another directory with {what}"))
        })?;
        if space.available < need + HEADROOM {
            return Err(ExperimentError::Failed(format!(
                "{shown} has {} free but the test files need {} plus {} headroom; free some \
                 space or pass a roomier directory with {what} (or a smaller --max-size)",
                units::size(space.available),
                units::size(need),
                units::size(HEADROOM)
            )));
        }
        let dir = tempfile::Builder::new()
            .prefix(&super::stale::prefix())
            .tempdir_in(base)
            .map_err(|e| {
                ExperimentError::Failed(format!(
                    "cannot create a test directory in {shown}: {e}; pass a writable directory \
                     with {what}"
                ))
            })?;
        let owner = super::stale::own(dir.path()).ok();
        Ok(TestDir { dir, _owner: owner })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Write `name` with `size` random bytes (rounded up to whole blocks), fsync it and drop
    /// it from the page cache. Polls Ctrl-C between chunks.
    pub fn random_file(
        &self,
        name: &str,
        size: u64,
        seed: u64,
    ) -> Result<PathBuf, ExperimentError> {
        let path = self.path().join(name);
        let mut f = File::create(&path).map_err(io("create", &path))?;
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut chunk = vec![0u8; CHUNK];
        let size = size.next_multiple_of(BLOCK as u64);
        let mut left = size;
        while left > 0 {
            if sysmeter_sys::signal::interrupted() {
                return Err(ExperimentError::Interrupted);
            }
            let n = left.min(CHUNK as u64) as usize;
            rng.fill(&mut chunk[..n]);
            f.write_all(&chunk[..n]).map_err(io("write", &path))?;
            left -= n as u64;
        }
        f.sync_all().map_err(io("fsync", &path))?;
        memory::fadvise_dontneed(&f, 0, size).map_err(io("posix_fadvise", &path))?;
        Ok(path)
    }
}

/// An error maker naming the operation and the path.
pub fn io<'a>(op: &'a str, path: &'a Path) -> impl Fn(std::io::Error) -> ExperimentError + 'a {
    move |e| ExperimentError::Failed(format!("{op} {} failed: {e}", path.display()))
}

/// The base directory of the local experiments: `--dir`, else the working directory.
pub fn local_base(ctx: &Ctx<'_>) -> PathBuf {
    ctx.params
        .dir
        .clone()
        .or_else(|| std::env::current_dir().ok())
        .unwrap_or_else(|| PathBuf::from("."))
}

/// How "uncached" reads bypass the page cache on a file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bypass {
    /// O_DIRECT: reads go to the device, the page cache is not involved.
    Direct,
    /// O_DIRECT refused (EINVAL at open): evict with posix_fadvise(DONTNEED) before each
    /// pass, verified with mincore.
    EvictRefused,
    /// A memory file system (tmpfs): O_DIRECT may be accepted (Linux ≥ 6.6) but the data
    /// lives in memory either way, so eviction is tried and mincore shows what stayed.
    EvictInMemory,
}

impl Bypass {
    /// Whether uncached passes evict instead of using O_DIRECT.
    pub fn evicts(self) -> bool {
        self != Bypass::Direct
    }
}

/// Open `path` for uncached reads: O_DIRECT when the file system allows it and keeps its
/// data on a device (`in_memory` false).
pub fn open_uncached(path: &Path, in_memory: bool) -> Result<(File, Bypass), ExperimentError> {
    if in_memory {
        let f = File::open(path).map_err(io("open", path))?;
        return Ok((f, Bypass::EvictInMemory));
    }
    match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
    {
        Ok(f) => Ok((f, Bypass::Direct)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            let f = File::open(path).map_err(io("open", path))?;
            Ok((f, Bypass::EvictRefused))
        }
        Err(e) => Err(io("open (O_DIRECT)", path)(e)),
    }
}

/// Drop `file`'s first `len` bytes from the page cache and return the share of its pages
/// still resident (mincore): 0.0 means the eviction worked.
pub fn evict(file: &File, len: u64, path: &Path) -> Result<f64, ExperimentError> {
    memory::fadvise_dontneed(file, 0, len).map_err(io("posix_fadvise(DONTNEED)", path))?;
    resident_share(file, len, path)
}

/// Share of the first `len` bytes of `file` that are in the page cache (mincore).
pub fn resident_share(file: &File, len: u64, path: &Path) -> Result<f64, ExperimentError> {
    let map = FileMap::map(file, len as usize, true).map_err(io("mmap", path))?;
    let resident = map.resident_pages().map_err(io("mincore", path))?;
    Ok(resident as f64 / map.pages().max(1) as f64)
}

/// A 4 KiB buffer aligned for O_DIRECT, carved out of a slightly larger allocation (no
/// unsafe allocation needed).
pub struct AlignedBlock {
    buf: Vec<u8>,
    start: usize,
}

impl AlignedBlock {
    /// A zeroed, 4 KiB-aligned block.
    pub fn new() -> AlignedBlock {
        let buf = vec![0u8; 2 * BLOCK];
        let start = buf.as_ptr().align_offset(BLOCK).min(BLOCK);
        AlignedBlock { buf, start }
    }

    /// The aligned 4 KiB.
    pub fn as_mut(&mut self) -> &mut [u8] {
        &mut self.buf[self.start..self.start + BLOCK]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_block_is_aligned() {
        let mut b = AlignedBlock::new();
        let s = b.as_mut();
        assert_eq!(s.len(), BLOCK);
        assert_eq!(s.as_ptr() as usize % BLOCK, 0);
    }

    #[test]
    fn test_dir_writes_random_files_and_removes_them() {
        let base = tempfile::tempdir().expect("base");
        let path;
        {
            let d = TestDir::create(base.path(), 1 << 20, "--dir").expect("dir");
            path = d.random_file("f", 10_000, 7).expect("file");
            assert_eq!(std::fs::metadata(&path).expect("meta").len(), 12_288);
            let data = std::fs::read(&path).expect("read");
            // Incompressible: not all one byte value.
            assert!(data.iter().any(|&b| b != data[0]));
        }
        assert!(!path.exists(), "removed on drop");
        assert_eq!(std::fs::read_dir(base.path()).expect("ls").count(), 0);
    }

    #[test]
    fn bad_directories_get_one_sentence_errors() {
        let e = TestDir::create(Path::new("/nonexistent/x"), 1, "--dir").expect_err("err");
        let msg = e.to_string();
        assert!(
            msg.contains("/nonexistent/x") && msg.contains("--dir"),
            "{msg}"
        );
        let e = TestDir::create(Path::new("/"), u64::MAX / 4, "--dir").expect_err("err");
        assert!(e.to_string().contains("free"), "{e}");
    }
}
