//! The one experiment type behind `net.rtt`, `net.bandwidth`, `net.connect` and
//! `net.udp_rr`: their pages (`<id>.md`) followed by what they share (`shared.md`), and the
//! dispatch to each one's measurement, which lives in the file named after its id. Depends on the harness, `model` and this group's
//! `remote.rs`; on no other group and not on the `server` command module.

use super::remote::Remote;
use super::{bandwidth, connect, rtt, udp_rr};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured};
use crate::model::{About, HostInfo};

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

    fn metric_findings(&self, _host: &HostInfo, out: &mut Measured) {
        match self.0 {
            Kind::Rtt => rtt::tcp_vs_icmp(out),
            Kind::Bandwidth => bandwidth::streams_gain(out),
            Kind::Connect | Kind::UdpRr => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::bandwidth::{BANDWIDTH, STREAMS, name};
    use super::super::rtt::{ICMP, RTT, TCP_1B};
    use crate::harness::pooled::{figure, finding, pooled, round};
    use crate::model::{HostInfo, Unit};

    #[test]
    fn the_rtt_and_streams_findings_quote_the_pooled_figures() {
        let rows = [(TCP_1B, Unit::Ns, 60_000.0), (ICMP, Unit::Ns, 40_000.0)];
        let rounds = [round(&rows, 1.0), round(&rows, 2.0)];
        let r = pooled(&RTT, &HostInfo::default(), &rounds);
        let (tcp, icmp) = (figure(&r, TCP_1B), figure(&r, ICMP));
        assert_eq!(tcp, 90_000.0, "pooled, not the last round's 120 000 ns");
        let (text, value) = finding(&r, "tcp_vs_icmp");
        assert_eq!(value, Some(tcp - icmp));
        assert!(text.contains("(90.0 µs)"), "{text}");

        let (one, many) = (name(false, 1), name(false, STREAMS));
        let rows = [
            (one.as_str(), Unit::BytesPerSec, 1e8),
            (many.as_str(), Unit::BytesPerSec, 3e8),
        ];
        let mut rounds = [round(&rows, 1.0), round(&rows, 1.0)];
        rounds[1].truncate(1);
        rounds[1].extend(round(&rows[1..], 2.0));
        let r = pooled(&BANDWIDTH, &HostInfo::default(), &rounds);
        let ratio = crate::stats::ratio(figure(&r, &many), figure(&r, &one));
        assert_eq!(
            ratio,
            Some(4.5),
            "pooled 4.5e8 over 1e8, not the last round's 6x"
        );
        assert_eq!(finding(&r, "streams_gain").1, ratio);
    }
}
