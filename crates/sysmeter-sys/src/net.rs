//! Socket helpers the standard library lacks, for the ipc and net experiments and for
//! `sysmeter serve`: SO_LINGER, waiting for a descriptor to become readable with a timeout
//! (so a blocking server loop can notice Ctrl-C), and an ICMP echo socket.
//!
//! The ICMP socket is an unprivileged "ping" datagram socket where
//! `net.ipv4.ping_group_range` admits our group, else a raw socket (root or CAP_NET_RAW).
//! Everything goes through nix's safe wrappers; no `unsafe` is needed here.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::socket::{
    AddressFamily, MsgFlags, SockFlag, SockProtocol, SockType, SockaddrIn, recv, sendto,
    setsockopt, socket, sockopt,
};

fn to_io(e: nix::Error) -> io::Error {
    io::Error::from_raw_os_error(e as i32)
}

/// Set SO_LINGER: `Some(0)` makes close() send a reset and skip TIME_WAIT; `None` restores
/// the default graceful close.
pub fn set_linger(fd: &impl AsFd, secs: Option<u32>) -> io::Result<()> {
    let l = libc::linger {
        l_onoff: i32::from(secs.is_some()),
        l_linger: secs.unwrap_or(0) as i32,
    };
    setsockopt(fd, sockopt::Linger, &l).map_err(to_io)
}

/// Wait until `fd` is readable (or has an error or hang-up pending) for at most `timeout`.
/// Returns whether it became readable; an interrupted wait counts as not readable.
pub fn wait_readable(fd: &impl AsFd, timeout: Duration) -> io::Result<bool> {
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    let mut fds = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
    match poll(
        &mut fds,
        PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX),
    ) {
        Ok(n) => Ok(n > 0),
        Err(nix::Error::EINTR) => Ok(false),
        Err(e) => Err(to_io(e)),
    }
}

/// Which kind of ICMP socket [`IcmpSocket::open`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IcmpKind {
    /// SOCK_DGRAM + IPPROTO_ICMP, allowed by `net.ipv4.ping_group_range`.
    Ping,
    /// SOCK_RAW + IPPROTO_ICMP, needs root or CAP_NET_RAW.
    Raw,
}

/// An ICMP echo socket (IPv4).
pub struct IcmpSocket {
    fd: OwnedFd,
    kind: IcmpKind,
    ident: u16,
    packet: Vec<u8>,
    reply: Vec<u8>,
}

impl IcmpSocket {
    /// Open a ping socket, or a raw one when ping sockets are not permitted. The error is
    /// the raw socket's (EPERM when neither is allowed).
    pub fn open() -> io::Result<IcmpSocket> {
        let flags = SockFlag::SOCK_CLOEXEC;
        let (fd, kind) = match socket(
            AddressFamily::Inet,
            SockType::Datagram,
            flags,
            SockProtocol::Icmp,
        ) {
            Ok(fd) => (fd, IcmpKind::Ping),
            Err(_) => (
                socket(
                    AddressFamily::Inet,
                    SockType::Raw,
                    flags,
                    SockProtocol::Icmp,
                )
                .map_err(to_io)?,
                IcmpKind::Raw,
            ),
        };
        Ok(IcmpSocket {
            fd,
            kind,
            ident: (std::process::id() & 0xffff) as u16,
            packet: Vec::new(),
            reply: vec![0u8; 2048],
        })
    }

    /// The kind of socket.
    pub fn kind(&self) -> IcmpKind {
        self.kind
    }

    /// Send one echo request with `payload` bytes to `dst` and wait up to `timeout` for its
    /// reply. `Ok(false)` means no reply came in time (a lost packet, or a filter).
    pub fn echo(
        &mut self,
        dst: Ipv4Addr,
        seq: u16,
        payload: usize,
        timeout: Duration,
    ) -> io::Result<bool> {
        self.packet = echo_request(self.ident, seq, payload);
        let to = SockaddrIn::from(SocketAddrV4::new(dst, 0));
        sendto(self.fd.as_raw_fd(), &self.packet, &to, MsgFlags::empty()).map_err(to_io)?;
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || !wait_readable(&self.fd, left)? {
                return Ok(false);
            }
            let n = match recv(self.fd.as_raw_fd(), &mut self.reply, MsgFlags::MSG_DONTWAIT) {
                Ok(n) => n,
                Err(nix::Error::EAGAIN | nix::Error::EINTR) => continue,
                Err(e) => return Err(to_io(e)),
            };
            let raw = self.kind == IcmpKind::Raw;
            if is_our_reply(&self.reply[..n], raw, self.ident, seq) {
                return Ok(true);
            }
        }
    }
}

/// An ICMP echo request: type 8, code 0, checksum, identifier, sequence, payload.
pub fn echo_request(ident: u16, seq: u16, payload: usize) -> Vec<u8> {
    let mut p = vec![8u8, 0, 0, 0];
    p.extend_from_slice(&ident.to_be_bytes());
    p.extend_from_slice(&seq.to_be_bytes());
    p.extend((0..payload).map(|i| (i & 0xff) as u8));
    let c = checksum(&p);
    p[2..4].copy_from_slice(&c.to_be_bytes());
    p
}

/// The Internet checksum (RFC 1071) of `data`.
pub fn checksum(data: &[u8]) -> u16 {
    let mut sum: u32 = data
        .chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum();
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// Whether `pkt` is the echo reply to our request `seq`. A raw socket's packet starts with
/// the IP header and sees every ICMP packet (our own requests on loopback too), so the type
/// and identifier are checked; a ping socket's identifier is rewritten by the kernel, which
/// also delivers only this socket's replies, so only the type and sequence are checked.
pub fn is_our_reply(pkt: &[u8], raw: bool, ident: u16, seq: u16) -> bool {
    let icmp = if raw {
        let ihl = usize::from(pkt.first().map_or(0, |b| b & 0x0f)) * 4;
        match pkt.get(ihl..) {
            Some(rest) => rest,
            None => return false,
        }
    } else {
        pkt
    };
    if icmp.len() < 8 || icmp[0] != 0 {
        return false;
    }
    let got_id = u16::from_be_bytes([icmp[4], icmp[5]]);
    let got_seq = u16::from_be_bytes([icmp[6], icmp[7]]);
    got_seq == seq && (!raw || got_id == ident)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_of_a_packet_with_its_checksum_is_zero() {
        let p = echo_request(0x1234, 7, 13);
        assert_eq!(checksum(&p), 0);
        assert_eq!(p[0], 8);
        assert_eq!(&p[4..8], &[0x12, 0x34, 0, 7]);
        assert_eq!(p.len(), 8 + 13);
    }

    #[test]
    fn rfc1071_example() {
        // The worked example of RFC 1071 section 3: sum 0xddf2, checksum its complement.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(checksum(&data), !0xddf2);
    }

    #[test]
    fn replies_are_matched_by_type_ident_and_sequence() {
        let mut reply = echo_request(5, 9, 4);
        reply[0] = 0;
        assert!(is_our_reply(&reply, false, 0, 9));
        assert!(!is_our_reply(&reply, false, 0, 8));
        let mut ip = vec![0x45u8; 1];
        ip.extend([0u8; 19]);
        ip.extend(&reply);
        assert!(is_our_reply(&ip, true, 5, 9));
        assert!(!is_our_reply(&ip, true, 6, 9));
        // Our own request seen on loopback by a raw socket is not a reply.
        let mut req = vec![0x45u8];
        req.extend([0u8; 19]);
        req.extend(echo_request(5, 9, 4));
        assert!(!is_our_reply(&req, true, 5, 9));
        assert!(!is_our_reply(&[0x4f], true, 5, 9));
    }
}
