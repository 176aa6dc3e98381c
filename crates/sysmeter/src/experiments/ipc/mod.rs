//! The `ipc` group: between processes on this machine. One file per experiment id
//! (`pipe.rs`, `unix.rs`, `tcp/`, `udp.rs`) holding what is particular to that transport;
//! the measurement they share in `experiment.rs`, streaming bandwidth in `stream.rs`, the
//! peers on the far end in `transport.rs`, shared findings in `findings.rs`. Depends on the
//! harness, `model`, `stats` and [`crate::experiments::peer`]; of other groups only on
//! `os.ctxsw`'s metric name for one finding.

mod experiment;
mod findings;
mod pipe;
mod stream;
mod tcp;
mod transport;
mod udp;
mod unix;

use super::Group;

/// The group's registry entry.
pub static GROUP: Group = Group {
    name: "ipc",
    description: "between processes on this machine: pipe, unix, TCP and UDP round trips, bandwidth, connections",
    experiments: &[&pipe::PIPE, &unix::UNIX, &tcp::TCP, &udp::UDP],
};
