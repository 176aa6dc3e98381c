//! `ipc.unix`: round trips and bandwidth over a connected AF_UNIX stream socket pair, and
//! its finding against `ipc.pipe`. The measurement itself is the group's one [`Ipc`]
//! experiment.

use std::os::unix::net::UnixStream;

use super::experiment::Ipc;
use super::findings::versus;
use super::transport::{Transport, io, sockets};
use crate::experiments::peer::{Far, Near};
use crate::harness::{Ctx, ExperimentError, Measured};

/// `ipc.unix`.
pub static UNIX: Ipc = Ipc(Transport::Unix, include_str!("unix.md"));

/// A connected unix stream socket pair.
pub fn pair() -> Result<(Near, Far), ExperimentError> {
    let pair = UnixStream::pair().map_err(io("create a unix socket pair"))?;
    sockets(
        pair,
        UnixStream::set_read_timeout,
        "set a unix socket's receive timeout",
    )
}

/// The unix socket round trip against the pipe's.
pub fn findings(ctx: &Ctx<'_>, out: &mut Measured, mine: f64, me: &str) {
    if let Some(pipe) = ctx.previous_median("ipc.pipe", me) {
        versus(
            out,
            "pipe_vs_socket",
            ("a unix socket", mine),
            ("a pipe", pipe),
            "A pipe is the simplest kernel channel (a ring of pages, no addresses, no \
             socket layer); a unix stream socket adds the socket layer's locking and \
             skb allocation per message.",
            "Here the socket layer's extra work is lost in the wake-ups and switches \
             that both pay.",
        );
    }
}
