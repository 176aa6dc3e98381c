//! A one-shot start signal from a parent to a child it forked: the child blocks reading a
//! pipe until the parent writes one byte, or gives up when the parent closes the pipe
//! instead. Used to start a child only once the parent is ready to observe it (tracer
//! attached, perf counters enabled), so nothing the child does is missed.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// A pipe with close-on-exec set on both ends: (read end, write end).
pub(crate) fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid array of two ints.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(crate::last_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Both ends of the gate, made before the fork.
pub(crate) struct Gate {
    read: OwnedFd,
    write: OwnedFd,
}

impl Gate {
    /// A closed gate.
    pub(crate) fn new() -> io::Result<Gate> {
        let (read, write) = pipe_cloexec()?;
        Ok(Gate { read, write })
    }

    /// The descriptor the child waits on (pass it to [`wait_in_child`]).
    pub(crate) fn child_fd(&self) -> RawFd {
        self.read.as_raw_fd()
    }

    /// In the parent after the fork: keep only the end that opens the gate.
    pub(crate) fn into_opener(self) -> Opener {
        Opener(Some(self.write))
    }
}

/// Blocks the forked child until the gate opens; `false` when the parent gave up (closed
/// the pipe). Only a raw `read`, so it is safe after fork in a threaded process.
pub(crate) fn wait_in_child(fd: RawFd) -> bool {
    let mut byte = [0u8; 1];
    crate::syscall::read(fd, &mut byte) == 1
}

/// The parent's end: opens the gate once; dropping it unopened makes the child give up.
#[derive(Debug)]
pub(crate) struct Opener(Option<OwnedFd>);

impl Opener {
    /// Lets the child go (later calls do nothing).
    pub(crate) fn open(&mut self) -> io::Result<()> {
        if let Some(fd) = self.0.take()
            && crate::syscall::write(fd.as_raw_fd(), &[1]) != 1
        {
            return Err(crate::last_error());
        }
        Ok(())
    }
}
