//! The UDP responder of `sysmeter serve`: answers datagrams of live `udp` sessions only
//! (known cookie, from the address whose TCP connection opened the session), with a reply
//! no longer than [`MAX_UDP_REPLY`]. Anything else is dropped without an answer, so the
//! responder can neither be probed cheaply nor used to reflect traffic.

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
        let Some((cookie, len)) = udp_parse(&buf[..n]) else {
            continue;
        };
        let known = shared
            .sessions
            .lock()
            .map(|s| s.get(&cookie).is_some_and(|x| x.peer == from.ip()))
            .unwrap_or(false);
        if !known {
            continue;
        }
        reply[..UDP_HEADER].copy_from_slice(&buf[..UDP_HEADER]);
        let _ = sock.send_to(&reply[..len], from);
    }
}
