//! The `sysmeter serve` wire: the protocol codec ([`protocol`]) and the client side
//! ([`client`]), shared by the `server` command module and the net experiments, which sit
//! above it. Depends on the standard library and `thiserror` only: nothing in `server`,
//! `experiments` or `commands`.

pub mod client;
pub mod protocol;

/// The port `serve` binds and `--remote HOST` connects to when none is given.
pub const DEFAULT_PORT: u16 = 7388;
