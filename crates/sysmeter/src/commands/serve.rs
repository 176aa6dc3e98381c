//! `sysmeter serve`: validate the arguments (a token, or an explicit `--no-token`, for any
//! address but loopback), bind, say where, serve until Ctrl-C.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;

use super::{Outcome, UsageError, console, emit};
use crate::cli::ServeArgs;
use crate::server::{ServeConfig, Server};
use crate::wire::protocol;

/// Run `sysmeter serve`. Exits 130 once stopped by SIGINT/SIGTERM.
pub fn serve(args: &ServeArgs) -> anyhow::Result<Outcome> {
    sysmeter_sys::signal::install_interrupt_flag().context("installing the Ctrl-C handler")?;
    let token = token(args)?;
    let cfg = ServeConfig {
        bind: args.bind,
        token: token.clone(),
        max_clients: args.max_clients as usize,
        max_per_source: max_per_source(args)?,
        max_test_secs: args.max_test_secs,
        hello_timeout: Duration::from_secs(u64::from(args.hello_timeout)),
    };
    let server = Server::bind(cfg).map_err(|e| UsageError(e.to_string()))?;
    let addr = server.local_addr().unwrap_or(args.bind);
    emit(&format!(
        "sysmeter serve: listening on {addr} (TCP and UDP), protocol SYSMETER/{}{}\n",
        protocol::VERSION,
        if token.is_some() {
            ", token required"
        } else {
            ""
        }
    ))?;
    if is_loopback(addr) {
        // The address family the user chose: [::1] is answered with [::].
        let any = if addr.is_ipv6() { "[::]" } else { "0.0.0.0" };
        console::errln(format_args!(
            "serve: bound to loopback only; pass --bind {any}:{} to be reachable from other hosts",
            addr.port()
        ));
    } else if token.is_none() {
        console::errln(format_args!(
            "serve: warning: serving {addr} without a token (--no-token): anyone who can reach this port can make this host send and receive traffic"
        ));
    }
    server.run()?;
    console::errln("serve: stopped");
    Ok(Outcome::Interrupted)
}

fn is_loopback(addr: SocketAddr) -> bool {
    addr.ip().to_canonical().is_loopback()
}

/// The token: `--token`, else SYSMETER_TOKEN, unless `--no-token`; none at all is refused
/// for an address other than loopback unless `--no-token` says so.
fn token(args: &ServeArgs) -> anyhow::Result<Option<String>> {
    let token = if args.no_token {
        None
    } else {
        args.token
            .clone()
            .or_else(|| std::env::var("SYSMETER_TOKEN").ok())
    };
    if let Some(t) = &token
        && (t.is_empty()
            || t.len() > protocol::MAX_TOKEN
            || !t.bytes().all(|b| b.is_ascii_graphic()))
    {
        return Err(UsageError(format!(
            "--token (or SYSMETER_TOKEN) must be 1 to {} printable ASCII characters without spaces",
            protocol::MAX_TOKEN
        ))
        .into());
    }
    if token.is_none() && !args.no_token && !is_loopback(args.bind) {
        return Err(UsageError(format!(
            "refusing to serve {} without a token, as anyone who can reach it could use this host for traffic tests; pass --token T (clients pass the same with SYSMETER_TOKEN=T), or --no-token on a network you trust",
            args.bind
        ))
        .into());
    }
    Ok(token)
}

/// `--max-per-source`, or its default: half of `--max-clients`, at least 4, and below
/// `--max-clients` so that one source always leaves a slot for others.
fn max_per_source(args: &ServeArgs) -> anyhow::Result<usize> {
    let all = args.max_clients as usize;
    match args.max_per_source {
        Some(n) if n as usize >= all && all > 1 => Err(UsageError(format!(
            "--max-per-source {n} must be below --max-clients {all}, so that one address cannot take every slot; lower it or raise --max-clients"
        ))
        .into()),
        Some(n) => Ok(n as usize),
        None => Ok((all / 2).max(4).min(all.saturating_sub(1)).max(1)),
    }
}
