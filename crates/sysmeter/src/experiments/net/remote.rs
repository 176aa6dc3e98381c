//! The net group's connection to a `sysmeter serve` (`--remote HOST[:PORT]`, a token from
//! `--token` or `SYSMETER_TOKEN`), skipped with a hint when none is given, and the helpers
//! every net measurement shares: counts by profile, a time cap, and I/O errors worded for
//! the user. Depends on [`crate::wire`] and the harness only.

use std::net::SocketAddr;
use std::time::Duration;

use crate::harness::{Ctx, ExperimentError};
use crate::wire::client::{self, Request, Session};
use crate::wire::protocol::Test;

/// How long to wait for a server's answer before a request counts as lost.
pub const TIMEOUT: Duration = Duration::from_secs(2);

/// The server to measure against.
pub struct Remote {
    /// Its address.
    pub addr: SocketAddr,
    /// Token from `--token` or `SYSMETER_TOKEN`.
    pub token: Option<String>,
}

impl Remote {
    /// The server given on the command line, or a skip with the hint to start one.
    pub fn from_ctx(ctx: &Ctx<'_>) -> Result<Remote, ExperimentError> {
        let Some(r) = ctx.params.remote.as_deref() else {
            return Err(ExperimentError::Skipped {
                reason: "no remote host given".into(),
                hint: format!(
                    "start `sysmeter serve --bind 0.0.0.0:PORT --token T` on the other host \
                     and pass --remote HOST:PORT (default port {}) with SYSMETER_TOKEN=T",
                    crate::wire::DEFAULT_PORT
                ),
            });
        };
        let addr = client::resolve(r).map_err(|e| ExperimentError::Failed(e.to_string()))?;
        let token = ctx.params.token.clone();
        Ok(Remote { addr, token })
    }

    /// Open a session for `test`, asking for `secs` seconds.
    pub fn open(
        &self,
        test: Test,
        secs: u32,
        size: Option<u32>,
    ) -> Result<Session, ExperimentError> {
        let req = Request {
            token: self.token.as_deref(),
            secs: Some(secs),
            size,
        };
        client::open(self.addr, test, &req, TIMEOUT)
            .map_err(|e| ExperimentError::Failed(e.to_string()))
    }
}

/// Pick a count by profile: quick, default, thorough.
pub fn by_profile(ctx: &Ctx<'_>, quick: usize, default: usize, thorough: usize) -> usize {
    match ctx.profile.name {
        "quick" => quick,
        "thorough" => thorough,
        _ => default,
    }
}

/// Longest a counted loop (connections, requests, echoes) may run: on a long path the counts
/// would otherwise take minutes and outlive the server's test time cap.
pub fn time_cap(ctx: &Ctx<'_>) -> std::time::Instant {
    let secs = by_profile(ctx, 2, 10, 30) as u64;
    std::time::Instant::now() + Duration::from_secs(secs)
}

/// An I/O error of a test against the server, as an experiment failure.
pub fn io_failed(
    remote: &Remote,
    what: &str,
) -> impl Fn(std::io::Error) -> ExperimentError + use<> {
    let addr = remote.addr;
    let what = what.to_string();
    move |e| {
        ExperimentError::Failed(format!(
            "{what} with the sysmeter serve at {addr} failed: {e}; check the network and that the server is still running"
        ))
    }
}
