//! The echo peer shared by `os.ctxsw` and the ipc group: our end of a connected channel
//! ([`Near`]: where requests are written and replies read), the peer's end ([`Far`]), two
//! pipes as such a channel, and a forked process that echoes over any of them.
//!
//! One round trip is plain `write` system calls until the message is out, then plain `read`
//! calls until the echo is back; the peer does the same in the other order. The echo process
//! is a [`sysmeter_sys::process::EchoChild`], killed and reaped when dropped, so an
//! interrupted experiment leaves no process behind. Depends on `sysmeter-sys` and the
//! harness error type only: nothing in a group folder.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use sysmeter_sys::process::EchoChild;
use sysmeter_sys::syscall;

use crate::harness::ExperimentError;

/// Our end: where requests are written and replies read (the same socket, or two pipes).
pub struct Near {
    write: OwnedFd,
    read: Option<OwnedFd>,
}

impl Near {
    /// One descriptor both written and read (a socket).
    pub fn socket(fd: OwnedFd) -> Near {
        Near {
            write: fd,
            read: None,
        }
    }

    fn read_fd(&self) -> RawFd {
        self.read.as_ref().unwrap_or(&self.write).as_raw_fd()
    }

    /// Write all of `buf` (one write per datagram).
    pub fn send(&self, buf: &[u8]) -> Result<(), ExperimentError> {
        let fd = self.write.as_raw_fd();
        transfer(buf.len(), |off| syscall::write(fd, &buf[off..]))
    }

    /// Read exactly `buf.len()` bytes (one datagram for UDP).
    pub fn recv(&self, buf: &mut [u8]) -> Result<(), ExperimentError> {
        let fd = self.read_fd();
        transfer(buf.len(), |off| syscall::read(fd, &mut buf[off..]))
    }

    /// One round trip of `buf.len()` bytes: send them, read the echo back.
    pub fn round_trip(&self, buf: &mut [u8]) -> Result<(), ExperimentError> {
        self.send(buf)?;
        self.recv(buf)
    }

    /// Our descriptors, which a forked peer closes on its side.
    pub fn raw_fds(&self) -> Vec<RawFd> {
        let mut v = vec![self.write.as_raw_fd()];
        v.extend(self.read.as_ref().map(|r| r.as_raw_fd()));
        v
    }
}

fn transfer(len: usize, mut step: impl FnMut(usize) -> isize) -> Result<(), ExperimentError> {
    let mut done = 0;
    while done < len {
        let n = step(done);
        if n <= 0 {
            let err = std::io::Error::last_os_error();
            return Err(ExperimentError::Failed(format!(
                "the peer process stopped answering ({}); rerun, and check for memory \
                 pressure or a process limit if it recurs",
                if n == 0 {
                    "end of file".to_string()
                } else {
                    err.to_string()
                }
            )));
        }
        done += n as usize;
    }
    Ok(())
}

/// The peer's end, handed to a forked child (or a thread) and closed here after the fork.
pub struct Far {
    /// Where the peer reads requests (and, for a socket, also writes replies).
    pub read: OwnedFd,
    /// Where the peer writes replies, when that is a second descriptor (pipes).
    pub write: Option<OwnedFd>,
}

impl Far {
    /// One descriptor both read and written (a socket).
    pub fn socket(fd: OwnedFd) -> Far {
        Far {
            read: fd,
            write: None,
        }
    }

    /// The descriptor the peer writes replies to.
    pub fn write_fd(&self) -> RawFd {
        self.write.as_ref().unwrap_or(&self.read).as_raw_fd()
    }

    /// The peer's descriptors as (requests are read here, replies are written here), for a
    /// peer in this process; a socket's one descriptor is duplicated.
    pub fn split(self) -> Result<(OwnedFd, OwnedFd), ExperimentError> {
        let write = match self.write {
            Some(w) => w,
            None => self
                .read
                .try_clone()
                .map_err(|e| ExperimentError::io("duplicate a socket", e))?,
        };
        Ok((self.read, write))
    }
}

/// Two anonymous pipes, one per direction.
pub fn pipes() -> Result<(Near, Far), ExperimentError> {
    let pipe = || std::io::pipe().map_err(|e| ExperimentError::io("create a pipe", e));
    let (req_r, req_w) = pipe()?;
    let (rep_r, rep_w) = pipe()?;
    let near = Near {
        write: req_w.into(),
        read: Some(rep_r.into()),
    };
    let far = Far {
        read: req_r.into(),
        write: Some(rep_w.into()),
    };
    Ok((near, far))
}

/// Fork a peer with `spawn`, which gets the peer's end and our descriptors (for the child
/// to close), then close the peer's end here.
pub fn fork<C>(
    (near, far): (Near, Far),
    spawn: impl FnOnce(&Far, &[RawFd]) -> std::io::Result<C>,
    what: &str,
) -> Result<(Near, C), ExperimentError> {
    let child = spawn(&far, &near.raw_fds()).map_err(|e| ExperimentError::io(what, e))?;
    // The child's ends are its own now; dropping ours lets EOF reach it if we go away.
    drop(far);
    Ok((near, child))
}

/// A forked process echoing `msg_len`-byte messages over `(near, far)`, pinned to `cpu`.
pub fn echo_process(
    pair: (Near, Far),
    msg_len: usize,
    cpu: Option<usize>,
) -> Result<(Near, EchoChild), ExperimentError> {
    let spawn = |far: &Far, close: &[RawFd]| {
        EchoChild::spawn(far.read.as_raw_fd(), far.write_fd(), msg_len, cpu, close)
    };
    fork(pair, spawn, "fork the echo process")
}

/// A forked process echoing `msg_len`-byte messages over two fresh pipes, pinned to `cpu`.
pub fn pipe_echo_process(
    msg_len: usize,
    cpu: Option<usize>,
) -> Result<(Near, EchoChild), ExperimentError> {
    echo_process(pipes()?, msg_len, cpu)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pipe_echo_returns_what_was_sent() {
        for len in [1usize, 1024] {
            let (near, _child) = pipe_echo_process(len, None).expect("peer");
            let mut buf: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let sent = buf.clone();
            near.round_trip(&mut buf).expect("round trip");
            assert_eq!(buf, sent);
        }
    }

    #[test]
    fn a_dead_pipe_peer_is_an_error_not_a_hang() {
        let (near, child) = pipe_echo_process(1, None).expect("peer");
        drop(child);
        let mut buf = [1u8];
        assert!(near.round_trip(&mut buf).is_err());
    }
}
