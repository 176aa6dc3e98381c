//! The `net` group: the ipc measurements across a network, against a `sysmeter serve` on
//! another host (`--remote HOST[:PORT]`; without it each is skipped with the hint to start
//! one). One file per experiment id (`rtt.rs`, `bandwidth.rs`, `connect.rs`, `udp_rr.rs`)
//! holding its measurement; the experiment type they share in `experiment.rs`, the server
//! connection in `remote.rs`. Depends on the harness, `model` and [`crate::wire`]; never on
//! the `server` command module or another group.

mod bandwidth;
mod connect;
mod experiment;
mod remote;
mod rtt;
mod udp_rr;

use super::Group;

/// The group's registry entry.
pub static GROUP: Group = Group {
    name: "net",
    description: "across the network, against `sysmeter serve` on another host (--remote HOST[:PORT])",
    experiments: &[
        &rtt::RTT,
        &bandwidth::BANDWIDTH,
        &connect::CONNECT,
        &udp_rr::UDP_RR,
    ],
};
