//! The four local transports of the ipc group as connected descriptor pairs: one end stays
//! with the measuring thread, the other goes to a forked peer (an echo process for round
//! trips, a sink for bandwidth). The peer is a [`sysmeter_sys::process`] child, killed and
//! reaped when dropped, so an interrupted experiment leaves no process behind.

use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use sysmeter_sys::process::{EchoChild, SinkChild};
use sysmeter_sys::syscall;

use crate::harness::ExperimentError;

/// How long our end waits for a reply before the round trip is declared lost (a datagram
/// dropped, or a peer that died without closing).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(2);

/// A local transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// Two anonymous pipes, one per direction.
    Pipe,
    /// A connected AF_UNIX stream socket pair.
    Unix,
    /// A TCP connection over 127.0.0.1 with TCP_NODELAY on both ends.
    Tcp,
    /// Two UDP sockets on 127.0.0.1 connected to each other.
    Udp,
}

impl Transport {
    /// Whether messages are datagrams (no flow control, one read per message).
    pub fn is_datagram(self) -> bool {
        self == Transport::Udp
    }
}

/// Our end: where requests are written and replies read (the same socket, or two pipes).
pub struct Near {
    write: OwnedFd,
    read: Option<OwnedFd>,
}

impl Near {
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

    fn raw_fds(&self) -> Vec<RawFd> {
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

/// The peer's end, handed to a forked child and closed in this process after the fork.
struct Far {
    read: OwnedFd,
    write: Option<OwnedFd>,
}

fn io(what: &str) -> impl FnOnce(std::io::Error) -> ExperimentError + '_ {
    move |e| ExperimentError::io(what, e)
}

/// A connected pair of `t`.
fn pair(t: Transport) -> Result<(Near, Far), ExperimentError> {
    Ok(match t {
        Transport::Pipe => {
            let (req_r, req_w) = std::io::pipe().map_err(io("create a pipe"))?;
            let (rep_r, rep_w) = std::io::pipe().map_err(io("create a pipe"))?;
            let near = Near {
                write: req_w.into(),
                read: Some(rep_r.into()),
            };
            let far = Far {
                read: req_r.into(),
                write: Some(rep_w.into()),
            };
            (near, far)
        }
        Transport::Unix => {
            let (a, b) = UnixStream::pair().map_err(io("create a unix socket pair"))?;
            a.set_read_timeout(Some(REPLY_TIMEOUT))
                .map_err(io("set a unix socket's receive timeout"))?;
            (near_socket(a.into()), far_socket(b.into()))
        }
        Transport::Tcp => {
            let (a, b) = tcp_pair()?;
            (near_socket(a.into()), far_socket(b.into()))
        }
        Transport::Udp => {
            let (a, b) = udp_pair()?;
            (near_socket(a.into()), far_socket(b.into()))
        }
    })
}

fn near_socket(fd: OwnedFd) -> Near {
    Near {
        write: fd,
        read: None,
    }
}

fn far_socket(fd: OwnedFd) -> Far {
    Far {
        read: fd,
        write: None,
    }
}

/// A TCP connection over loopback: (connecting end, accepted end), TCP_NODELAY on both.
pub fn tcp_pair() -> Result<(TcpStream, TcpStream), ExperimentError> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .map_err(io("listen on 127.0.0.1 (is the loopback interface up?)"))?;
    let addr = listener
        .local_addr()
        .map_err(io("read the listener's address"))?;
    let a = TcpStream::connect(addr).map_err(io("connect to the loopback listener"))?;
    let (b, _) = listener
        .accept()
        .map_err(io("accept the loopback connection"))?;
    for s in [&a, &b] {
        s.set_nodelay(true).map_err(io("set TCP_NODELAY"))?;
    }
    a.set_read_timeout(Some(REPLY_TIMEOUT))
        .map_err(io("set a TCP receive timeout"))?;
    Ok((a, b))
}

fn udp_pair() -> Result<(UdpSocket, UdpSocket), ExperimentError> {
    let bind = || {
        UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io(
            "bind a UDP socket on 127.0.0.1 (is the loopback interface up?)",
        ))
    };
    let (a, b) = (bind()?, bind()?);
    let addr = |s: &UdpSocket| s.local_addr().map_err(io("read a UDP socket's address"));
    a.connect(addr(&b)?).map_err(io("connect a UDP socket"))?;
    b.connect(addr(&a)?).map_err(io("connect a UDP socket"))?;
    a.set_read_timeout(Some(REPLY_TIMEOUT))
        .map_err(io("set a UDP receive timeout"))?;
    Ok((a, b))
}

/// A forked process echoing `msg_len`-byte messages over a fresh `t`, pinned to `cpu`.
pub fn echo_peer(
    t: Transport,
    msg_len: usize,
    cpu: Option<usize>,
) -> Result<(Near, EchoChild), ExperimentError> {
    let (near, far) = pair(t)?;
    let (r, w) = (
        far.read.as_raw_fd(),
        far.write.as_ref().unwrap_or(&far.read).as_raw_fd(),
    );
    let child = EchoChild::spawn(r, w, msg_len, cpu, &near.raw_fds())
        .map_err(io("fork the echo process"))?;
    drop(far);
    Ok((near, child))
}

/// A forked process reading and discarding everything sent over a fresh `t`, pinned to
/// `cpu`; for datagrams it acknowledges every `ack_bytes` with one byte.
pub fn sink_peer(
    t: Transport,
    buf_len: usize,
    ack_bytes: usize,
    cpu: Option<usize>,
) -> Result<(Near, SinkChild), ExperimentError> {
    let (near, far) = pair(t)?;
    let child = SinkChild::spawn(
        far.read.as_raw_fd(),
        buf_len,
        ack_bytes,
        cpu,
        &near.raw_fds(),
    )
    .map_err(io("fork the reading process"))?;
    drop(far);
    Ok((near, child))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_transport_echoes_both_message_sizes() {
        for t in [
            Transport::Pipe,
            Transport::Unix,
            Transport::Tcp,
            Transport::Udp,
        ] {
            for len in [1usize, 1024] {
                let (near, _child) = echo_peer(t, len, None).expect("peer");
                let mut buf: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
                let sent = buf.clone();
                near.round_trip(&mut buf).expect("round trip");
                assert_eq!(buf, sent, "{t:?} {len}");
            }
        }
    }

    #[test]
    fn a_dead_peer_is_an_error_not_a_hang() {
        let (near, child) = echo_peer(Transport::Tcp, 1, None).expect("peer");
        drop(child);
        let mut buf = [1u8];
        assert!(near.round_trip(&mut buf).is_err());
    }
}
