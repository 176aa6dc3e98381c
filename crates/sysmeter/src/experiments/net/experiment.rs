//! The one experiment type behind `net.rtt`, `net.bandwidth`, `net.connect` and
//! `net.udp_rr`: the about text they share and the dispatch to each one's measurement, which
//! lives in the file named after its id. Depends on the harness, `model` and this group's
//! `remote.rs`; on no other group and not on the `server` command module.

use super::remote::Remote;
use super::{bandwidth, connect, rtt, udp_rr};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::model::About;

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

impl Experiment for Net {
    fn shares_measuring_cpu(&self) -> bool {
        // Peers, children, helper threads or kernel I/O work of its own run beside it.
        true
    }

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
        About::new(
            title,
            measures,
            format!(
                "{methodology} The other end is `sysmeter serve` (one thread per connection, \
                 TCP_NODELAY on both ends)."
            ),
            &[
                "systems-measurement report: round trip time, peak bandwidth, connection overhead",
                "netperf TCP_RR/UDP_RR/TCP_CRR, iperf3, ping",
            ],
        )
    }

    // No estimate: the network between the hosts is not in the machine description; the
    // interface speed, where known, bounds bandwidth and is shown in `sysmeter host`.

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
