//! The in-process library of `calls` and `locks` (built from `preload/` by build.rs) and the shared
//! memory it writes its counts into. Both are memfds without close-on-exec: the launched
//! program inherits them, loads the library as `/proc/self/fd/N` and maps the region by its
//! number, and every process and exec'd image of the run writes into the same region,
//! which outlives them all. No unsafe code: the region is read back with `pread`.

use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::OwnedFd;

use nix::sys::memfd::{MFdFlags, memfd_create};

/// The preload library (empty where it is not built: not x86-64).
pub static CALLS_LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libsysmeter_calls.so"));

/// The name the preload library is mapped under in a program that loaded it (its memfd
/// shows as `/memfd:sysmeter-calls.so (deleted)` in `/proc/PID/maps`): how a stack frame in
/// it is recognised as the library's, not the program's.
pub const LIBRARY_NAME: &str = "sysmeter-calls.so";

/// An anonymous in-memory file that child processes inherit (not close-on-exec).
pub fn inherited_memfd(name: &CStr) -> io::Result<File> {
    let fd: OwnedFd = memfd_create(name, MFdFlags::empty()).map_err(io::Error::from)?;
    Ok(File::from(fd))
}

/// The preload library in an inherited memfd.
pub fn library_memfd() -> io::Result<File> {
    let mut f = inherited_memfd(c"sysmeter-calls.so")?;
    f.write_all(CALLS_LIBRARY)?;
    Ok(f)
}

/// A copy of the preload library for this process to read (its unwind tables and symbols:
/// the copy a program maps has no path sysmeter can open), close-on-exec.
pub fn library_copy() -> io::Result<File> {
    let fd: OwnedFd =
        memfd_create(c"sysmeter-calls-copy", MFdFlags::MFD_CLOEXEC).map_err(io::Error::from)?;
    let mut f = File::from(fd);
    f.write_all(CALLS_LIBRARY)?;
    Ok(f)
}
