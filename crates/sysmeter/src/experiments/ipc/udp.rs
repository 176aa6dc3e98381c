//! `ipc.udp`: round trips and bandwidth between two UDP sockets on 127.0.0.1 connected to
//! each other, and its finding against `ipc.tcp`. The measurement itself is the group's one
//! [`Ipc`] experiment; the acknowledgement window that stands in for flow control is in
//! `stream.rs`.

use std::net::{Ipv4Addr, UdpSocket};

use super::experiment::Ipc;
use super::findings::versus;
use super::transport::{Transport, io, sockets};
use crate::experiments::peer::{Far, Near};
use crate::harness::{Ctx, ExperimentError, Measured};

/// `ipc.udp`.
pub static UDP: Ipc = Ipc(Transport::Udp, include_str!("udp.md"));

/// Two UDP sockets on loopback connected to each other.
pub fn pair() -> Result<(Near, Far), ExperimentError> {
    let bind = || {
        UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).map_err(io(
            "bind a UDP socket on 127.0.0.1 (is the loopback interface up?)",
        ))
    };
    let (a, b) = (bind()?, bind()?);
    let addr = |s: &UdpSocket| s.local_addr().map_err(io("read a UDP socket's address"));
    a.connect(addr(&b)?).map_err(io("connect a UDP socket"))?;
    b.connect(addr(&a)?).map_err(io("connect a UDP socket"))?;
    sockets(
        (a, b),
        UdpSocket::set_read_timeout,
        "set a UDP receive timeout",
    )
}

/// The UDP round trip against TCP's.
pub fn findings(ctx: &Ctx<'_>, out: &mut Measured, mine: f64, me: &str) {
    if let Some(tcp) = ctx.previous_median("ipc.tcp", me) {
        versus(
            out,
            "udp_vs_tcp",
            ("UDP over loopback", mine),
            ("TCP over loopback", tcp),
            "UDP is not cheaper here: TCP's fast path for an established connection \
             (header prediction, early demultiplexing) is as short as UDP's datagram \
             path, and both are dominated by the same system calls and wake-ups.",
            "UDP has no connection state, acknowledgements or retransmission timers \
             to update per message.",
        );
    }
}
