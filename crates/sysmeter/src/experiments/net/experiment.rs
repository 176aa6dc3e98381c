//! The one experiment type behind `net.rtt`, `net.bandwidth`, `net.connect` and
//! `net.udp_rr`: their pages (`<id>.md`) followed by what they share (`shared.md`), and the
//! dispatch to each one's measurement, which lives in the file named after its id. Depends on the harness, `model` and this group's
//! `remote.rs`; on no other group and not on the `server` command module.

use super::remote::Remote;
use super::{bandwidth, connect, rtt, udp_rr};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::model::About;

/// What every net experiment's page shares: the end of the methodology, the references.
const SHARED: &str = include_str!("shared.md");

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

/// One net experiment and its page (`rtt.md`, …).
pub struct Net(pub Kind, pub &'static str);

impl Experiment for Net {
    fn page(&self) -> &'static str {
        self.1
    }

    fn about(&self) -> About {
        // Each page's own methodology, then what every net experiment shares (`shared.md`).
        let shared = About::from_page(SHARED);
        let mut about = About::from_page(self.page());
        about.methodology = format!("{} {}", about.methodology, shared.methodology);
        about.references = shared.references;
        about
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
