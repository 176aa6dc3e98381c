//! The four local transports of the ipc group and the peers forked on their far end: an
//! echo process for round trips (the shared [`crate::experiments::peer`]) and a sink for
//! bandwidth. Each transport's connected pair is built in its own file (`pipe.rs`,
//! `unix.rs`, `tcp/`, `udp.rs`). Peers are [`sysmeter_sys::process`] children, killed and
//! reaped when dropped, so an interrupted experiment leaves no process behind. Depends on
//! the shared peer and `sysmeter-sys`; on no other group.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Duration;

use sysmeter_sys::process::{EchoChild, SinkChild};

use super::{tcp, udp, unix};
use crate::experiments::peer::{self, Far, Near};
use crate::harness::ExperimentError;

/// How long our end waits for a reply before the round trip is declared lost (a datagram
/// dropped, or a peer that died without closing).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(2);

/// An I/O error while setting up `what`, as an experiment failure.
pub fn io(what: &str) -> impl FnOnce(std::io::Error) -> ExperimentError + '_ {
    move |e| ExperimentError::io(what, e)
}

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

/// Our end and the peer's of a connected socket pair, with the reply timeout set on ours
/// by `set_timeout` (the socket type's `set_read_timeout`).
pub fn sockets<S: Into<OwnedFd>>(
    (near, far): (S, S),
    set_timeout: impl FnOnce(&S, Option<Duration>) -> std::io::Result<()>,
    what: &str,
) -> Result<(Near, Far), ExperimentError> {
    set_timeout(&near, Some(REPLY_TIMEOUT)).map_err(io(what))?;
    Ok((Near::socket(near.into()), Far::socket(far.into())))
}

/// A connected pair of `t`.
fn pair(t: Transport) -> Result<(Near, Far), ExperimentError> {
    match t {
        Transport::Pipe => peer::pipes(),
        Transport::Unix => unix::pair(),
        Transport::Tcp => tcp::pair(),
        Transport::Udp => udp::pair(),
    }
}

/// A forked process echoing `msg_len`-byte messages over a fresh `t`, pinned to `cpu`:
/// the shared [`peer::echo_process`].
pub fn echo_peer(
    t: Transport,
    msg_len: usize,
    cpu: Option<usize>,
) -> Result<(Near, EchoChild), ExperimentError> {
    peer::echo_process(pair(t)?, msg_len, cpu)
}

/// A forked process reading and discarding everything sent over a fresh `t`, pinned to
/// `cpu`; for datagrams it acknowledges every `ack_bytes` with one byte.
pub fn sink_peer(
    t: Transport,
    buf_len: usize,
    ack_bytes: usize,
    cpu: Option<usize>,
) -> Result<(Near, SinkChild), ExperimentError> {
    let spawn = |far: &Far, close: &[RawFd]| {
        SinkChild::spawn(far.read.as_raw_fd(), buf_len, ack_bytes, cpu, close)
    };
    peer::fork(pair(t)?, spawn, "fork the reading process")
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
