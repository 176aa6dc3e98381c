//! The UDP responder of `sysmeter serve`: answers datagrams of live `udp` sessions only
//! (known cookie, from the address whose TCP connection opened the session). A reply is
//! never longer than the request that asked for it, unless that session negotiated a larger
//! reply size over TCP (`size=N` in its hello, at most [`MAX_UDP_REPLY`]): a forged source
//! address can then gain no more bytes than it sends. Anything else is dropped without an
//! answer, so the responder can neither be probed cheaply nor used to reflect traffic.

use std::net::UdpSocket;

use super::Shared;
use crate::wire::protocol::{MAX_UDP_REPLY, UDP_HEADER, udp_parse};

/// Answer datagrams until the server stops.
pub fn respond(sock: &UdpSocket, shared: &Shared) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut reply = vec![0u8; MAX_UDP_REPLY];
    while !shared.stopping() {
        let (n, from) = match sock.recv_from(&mut buf) {
            Ok(x) => x,
            Err(_) => continue, // the read timeout: check for a stop
        };
        let Some((cookie, asked)) = udp_parse(&buf[..n]) else {
            continue;
        };
        let negotiated = shared.sessions.lock().ok().and_then(|s| {
            s.get(&cookie)
                .filter(|x| x.peer == from.ip())
                .map(|x| x.max_reply)
        });
        let Some(negotiated) = negotiated else {
            continue;
        };
        let len = reply_len(asked, n, negotiated);
        reply[..UDP_HEADER].copy_from_slice(&buf[..UDP_HEADER]);
        let _ = sock.send_to(&reply[..len], from);
    }
}

/// The length of the reply to a `request`-byte datagram asking for `asked` bytes, in a
/// session that negotiated `negotiated` bytes (0 when it did not): what was asked, at most
/// the larger of the request and the negotiated size, never above [`MAX_UDP_REPLY`] nor
/// below the header.
fn reply_len(asked: usize, request: usize, negotiated: usize) -> usize {
    asked
        .min(request.max(negotiated))
        .clamp(UDP_HEADER, MAX_UDP_REPLY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_never_outgrow_their_request_without_a_negotiated_size() {
        assert_eq!(reply_len(1400, 10, 0), 10);
        assert_eq!(reply_len(120, 40, 0), 40);
        assert_eq!(reply_len(20, 40, 0), 20);
        assert_eq!(reply_len(120, 40, 120), 120);
        assert_eq!(reply_len(1400, 40, 120), 120);
        assert_eq!(reply_len(1400, 2000, 0), MAX_UDP_REPLY);
        assert_eq!(reply_len(0, 10, 0), UDP_HEADER);
    }
}
