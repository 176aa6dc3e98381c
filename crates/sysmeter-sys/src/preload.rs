//! The in-process library of `calls`, `alloc` and `locks` (built from `preload/` by build.rs)
//! and the shared memory it writes its counts into. Both are close-on-exec memfds of
//! sysmeter's own: the launched program does not inherit them (a program that closes its
//! descriptors cannot lose them) but reaches them by path, `/proc/<sysmeter's pid>/fd/N`,
//! which stays valid while sysmeter runs, through every exec of every process of the run.
//! No unsafe code: the region is read back with `pread`.

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
pub const LIBRARY_NAME: &str = match LIBRARY_MEMFD.to_str() {
    Ok(name) => name,
    Err(_) => panic!("the library's memfd name is UTF-8"),
};
/// The memfd name the library is created under ([`LIBRARY_NAME`] is read from it).
const LIBRARY_MEMFD: &CStr = c"sysmeter-calls.so";

/// An anonymous in-memory file of sysmeter's own (close-on-exec: children reach it by its
/// `/proc/<pid>/fd/N` path).
pub fn memfd(name: &CStr) -> io::Result<File> {
    let fd: OwnedFd = memfd_create(name, MFdFlags::MFD_CLOEXEC).map_err(io::Error::from)?;
    Ok(File::from(fd))
}

/// The preload library in a memfd.
pub fn library_memfd() -> io::Result<File> {
    let mut f = memfd(LIBRARY_MEMFD)?;
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
