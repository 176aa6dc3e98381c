//! `sysmeter serve`: validate the arguments, bind, say where, serve until Ctrl-C.

use std::time::Duration;

use anyhow::Context;

use super::{Outcome, UsageError, emit};
use crate::cli::ServeArgs;
use crate::server::{ServeConfig, Server};
use crate::wire::protocol;

/// Run `sysmeter serve`. Exits 130 once stopped by SIGINT/SIGTERM.
pub fn serve(args: &ServeArgs) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    if let Some(t) = &args.token
        && (t.is_empty()
            || t.len() > protocol::MAX_TOKEN
            || !t.bytes().all(|b| b.is_ascii_graphic()))
    {
        return Err(UsageError(format!(
            "--token must be 1 to {} printable ASCII characters without spaces",
            protocol::MAX_TOKEN
        ))
        .into());
    }
    let cfg = ServeConfig {
        bind: args.bind,
        token: args.token.clone(),
        max_clients: args.max_clients as usize,
        max_test_secs: args.max_test_secs,
        hello_timeout: Duration::from_secs(u64::from(args.hello_timeout)),
    };
    let server = Server::bind(cfg).map_err(|e| UsageError(e.to_string()))?;
    let addr = server.local_addr().unwrap_or(args.bind);
    emit(&format!(
        "sysmeter serve: listening on {addr} (TCP and UDP), protocol SYSMETER/{}{}\n",
        protocol::VERSION,
        if args.token.is_some() {
            ", token required"
        } else {
            ""
        }
    ))?;
    if addr.ip().is_loopback() {
        eprintln!(
            "serve: bound to loopback only; pass --bind 0.0.0.0:{} to be reachable from other hosts",
            addr.port()
        );
    }
    server.run()?;
    eprintln!("serve: stopped");
    Ok(Outcome::Interrupted)
}
