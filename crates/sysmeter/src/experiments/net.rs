//! `net.rtt`, `net.bandwidth`, `net.connect`, `net.udp_rr`: the ipc measurements across a
//! network, against a `sysmeter serve` on another host (`--remote HOST[:PORT]`; a token, if
//! the server wants one, from `--token` or `SYSMETER_TOKEN`). Without `--remote` each is skipped
//! with the hint to start one. The measurements live in one submodule each.

mod bandwidth;
mod connect;
mod rtt;
mod udp_rr;

use std::net::SocketAddr;
use std::time::Duration;

use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::model::{About, Estimate, HostInfo};
use crate::wire::client::{self, Request, Session};
use crate::wire::protocol::Test;

/// Which net experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// TCP echo round trips and ICMP echo.
    Rtt,
    /// Upload and download, 1 and N streams.
    Bandwidth,
    /// Connection setup and teardown.
    Connect,
    /// Small UDP request/response.
    UdpRr,
}

/// One net experiment.
pub struct Net(pub Kind);

/// `net.rtt`.
pub static RTT: Net = Net(Kind::Rtt);
/// `net.bandwidth`.
pub static BANDWIDTH: Net = Net(Kind::Bandwidth);
/// `net.connect`.
pub static CONNECT: Net = Net(Kind::Connect);
/// `net.udp_rr`.
pub static UDP_RR: Net = Net(Kind::UdpRr);

/// How long to wait for a server's answer before a request counts as lost.
const TIMEOUT: Duration = Duration::from_secs(2);

impl Experiment for Net {
    fn id(&self) -> &'static str {
        match self.0 {
            Kind::Rtt => "net.rtt",
            Kind::Bandwidth => "net.bandwidth",
            Kind::Connect => "net.connect",
            Kind::UdpRr => "net.udp_rr",
        }
    }

    fn about(&self) -> About {
        let (title, measures, methodology) = match self.0 {
            Kind::Rtt => rtt::ABOUT,
            Kind::Bandwidth => bandwidth::ABOUT,
            Kind::Connect => connect::ABOUT,
            Kind::UdpRr => udp_rr::ABOUT,
        };
        About {
            title: title.into(),
            measures: measures.into(),
            methodology: format!(
                "{methodology} The other end is `sysmeter serve` (one thread per connection, \
                 TCP_NODELAY on both ends)."
            ),
            references: vec![
                "systems-measurement-report §10 Round trip time, §11 Peak bandwidth, §12 Connection overhead".into(),
                "netperf TCP_RR/UDP_RR/TCP_CRR, iperf3, ping".into(),
            ],
        }
    }

    fn estimate(&self, _host: &HostInfo, _tsc_ghz: Option<f64>) -> Vec<Estimate> {
        // The network between the hosts is not in the machine description; the interface
        // speed, where known, bounds bandwidth and is shown in `sysmeter host`.
        Vec::new()
    }

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let remote = Remote::from_ctx(ctx)?;
        let mut out = Measured::default();
        match self.0 {
            Kind::Rtt => rtt::run(ctx, &remote, &mut out)?,
            Kind::Bandwidth => bandwidth::run(ctx, &remote, &mut out)?,
            Kind::Connect => connect::run(ctx, &remote, &mut out)?,
            Kind::UdpRr => udp_rr::run(ctx, &remote, &mut out)?,
        }
        Ok(out)
    }
}

/// The server to measure against.
pub struct Remote {
    /// Its address.
    pub addr: SocketAddr,
    /// Token from `--token` or `SYSMETER_TOKEN`.
    pub token: Option<String>,
}

impl Remote {
    fn from_ctx(ctx: &Ctx<'_>) -> Result<Remote, ExperimentError> {
        let Some(r) = ctx.params.remote.as_deref() else {
            return Err(ExperimentError::Skipped {
                reason: "no remote host given".into(),
                hint: format!(
                    "start `sysmeter serve --bind 0.0.0.0:PORT` on the other host and pass \
                     --remote HOST:PORT (default port {})",
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
