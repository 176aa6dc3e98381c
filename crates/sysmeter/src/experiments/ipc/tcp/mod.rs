//! `ipc.tcp`: round trips and bandwidth over a TCP connection on 127.0.0.1 with TCP_NODELAY
//! on both ends, the cost of a connection's setup and teardown (`connect.rs`), and its
//! findings against `ipc.unix`. The round trips and bandwidth are the group's one [`Ipc`]
//! experiment.

pub mod connect;

use std::net::{Ipv4Addr, TcpListener, TcpStream};

use super::experiment::{Ipc, bw_name, rtt_name};
use super::findings::versus;
use super::transport::{Transport, io, sockets};
use crate::experiments::peer::{Far, Near};
use crate::harness::{Ctx, ExperimentError, Measured};
use crate::stats::ratio;
use connect::SETUP;

/// `ipc.tcp`.
pub static TCP: Ipc = Ipc(Transport::Tcp, include_str!("../tcp.md"));

/// A TCP connection over loopback: (connecting end, accepted end), TCP_NODELAY on both.
pub fn pair() -> Result<(Near, Far), ExperimentError> {
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
    sockets(
        (a, b),
        TcpStream::set_read_timeout,
        "set a TCP receive timeout",
    )
}

/// TCP against the unix socket (round trip and bandwidth).
pub fn findings(ctx: &Ctx<'_>, out: &mut Measured, mine: f64, me: &str) {
    if let Some(unix) = ctx.previous_median("ipc.unix", me) {
        versus(
            out,
            "unix_vs_tcp",
            ("TCP over loopback", mine),
            ("a unix socket", unix),
            "Loopback TCP runs the whole IP and TCP stack on both ends (headers, \
             checksums offloaded but sequence/ACK processing, the loopback device's \
             softirq), which a unix socket skips: it queues the data straight on \
             the peer socket.",
            "Here the network stack's extra work is lost in the wake-ups and switches \
             that both pay.",
        );
    }
    bandwidth_vs_unix(ctx, out);
}

/// A connection's setup against a 1-byte round trip on it.
pub fn connect_vs_round_trip(out: &mut Measured) {
    let (Some(setup), Some(rtt)) = (out.median(SETUP), out.median(&rtt_name("1 B", false))) else {
        return;
    };
    let r = ratio(setup, rtt);
    out.find(
        "connect_vs_round_trip",
        format!(
            "Setting up a loopback TCP connection ({setup:.0} ns) costs {} a 1-byte round \
             trip on it ({rtt:.0} ns): three handshake segments, two sockets created and \
             hashed, and an accept; keep connections open (pooling) when requests are small.",
            r.map_or("n/a x".into(), |r| format!("{r:.1}x"))
        ),
        r,
    );
}

fn bandwidth_vs_unix(ctx: &Ctx<'_>, out: &mut Measured) {
    let (Some(tcp), Some(unix)) = (
        out.median(bw_name(false)),
        ctx.previous_median("ipc.unix", bw_name(false)),
    ) else {
        return;
    };
    out.find(
        "unix_vs_tcp_bandwidth",
        format!(
            "Streaming with the reader on the same CPU: TCP loopback moves {:.2} GB/s, a unix \
             socket {:.2} GB/s, {} TCP's rate.",
            tcp / 1e9,
            unix / 1e9,
            ratio(unix, tcp).map_or("n/a".into(), |r| format!("{r:.2}x"))
        ),
        ratio(unix, tcp),
    );
}
