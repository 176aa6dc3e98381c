//! The one experiment type behind `ipc.pipe`, `ipc.unix`, `ipc.tcp` and `ipc.udp`: round
//! trips of small and 1 KiB messages between two processes on the same CPU and on different
//! CPUs, streaming bandwidth to a reader in another process (`stream.rs`), and for TCP the
//! cost of a connection's setup and teardown (`tcp/connect.rs`). What differs per transport
//! (its pair of descriptors, its findings) lives in the transport's file, its page in
//! `<transport>.md`; the description the four share is `shared.md`, whose holes each page
//! fills. Depends on the harness, `model` and the shared peer; on no other group.

use super::stream::bandwidth;
use super::transport::{Transport, echo_peer};
use super::{findings, tcp};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::about::page::Page;
use crate::model::{About, HostInfo, Metric};

/// What the four transports' pages share, with holes for what differs.
const SHARED: &str = include_str!("shared.md");

/// One transport's experiment and its page (`pipe.md`, …).
pub struct Ipc(pub Transport, pub &'static str);

/// Message sizes of the round trips: one byte, and 1 KiB.
const SIZES: [(usize, &str); 2] = [(1, "1 B"), (1024, "1 KiB")];
/// Name of the round-trip metric for a message size and CPU placement.
pub fn rtt_name(size: &str, cross: bool) -> String {
    format!(
        "round trip {size}, {} CPU",
        if cross { "cross" } else { "same" }
    )
}

/// Name of the bandwidth metric for a reader on the same or another CPU.
pub fn bw_name(cross: bool) -> &'static str {
    if cross {
        "bandwidth, reader cross CPU"
    } else {
        "bandwidth, reader same CPU"
    }
}

impl Experiment for Ipc {
    fn page(&self) -> &'static str {
        self.1
    }

    fn about(&self) -> About {
        // The four transports share one text (`shared.md`) with holes for what differs; a
        // transport's own page holds its title, what fills them and what it adds.
        let (Ok(own), Ok(shared)) = (Page::parse(self.page()), Page::parse(SHARED)) else {
            return About::default();
        };
        let writes = if self.0.is_datagram() {
            "Writes, datagram"
        } else {
            "Writes, stream"
        };
        let connections = own.text("Connections").map(|c| format!("; {c}"));
        let mut about = shared
            .about()
            .fill("transport", &own.text("Transport").unwrap_or_default())
            .fill("writes", &shared.text(writes).unwrap_or_default())
            .fill("connections", &connections.unwrap_or_default());
        about.title = own.title.to_string();
        if let Some(more) = own.text("Methodology") {
            about.methodology = format!("{} {more}", about.methodology);
        }
        about
    }

    // No estimate: no model from the machine description predicts a kernel path's cost; the
    // findings relate the transports to each other and to os.ctxsw instead.

    fn run(&self, ctx: &mut Ctx<'_>) -> Result<Measured, ExperimentError> {
        let mut out = Measured::default();
        let other = ctx.other_cpu();
        for (len, label) in SIZES {
            out.metrics
                .push(round_trip(ctx, self.0, len, label, ctx.cpu, false)?);
            if let Some(o) = other {
                out.metrics
                    .push(round_trip(ctx, self.0, len, label, Some(o), true)?);
            }
        }
        if other.is_none() {
            out.find(
                "cross_cpu_skipped",
                "Cross-CPU round trips skipped: this process may use only one CPU (run \
                 with taskset or a cpuset that allows two)."
                    .into(),
                None,
            );
        }
        out.metrics.push(bandwidth(ctx, self.0, ctx.cpu, false)?);
        if let Some(o) = other {
            out.metrics.push(bandwidth(ctx, self.0, Some(o), true)?);
        }
        if self.0 == Transport::Tcp {
            tcp::connect::measure(ctx, &mut out)?;
        }
        findings::against_others(ctx, self.0, &mut out);
        Ok(out)
    }

    fn metric_findings(&self, _host: &HostInfo, out: &mut Measured) {
        findings::own(self.0, out);
    }
}

fn round_trip(
    ctx: &mut Ctx<'_>,
    t: Transport,
    len: usize,
    label: &str,
    cpu: Option<usize>,
    cross: bool,
) -> Result<Metric, ExperimentError> {
    let (near, child) = echo_peer(t, len, cpu)?;
    let mut buf = vec![0x5au8; len];
    let note = match cpu {
        Some(c) => format!("echo process on CPU {c}"),
        None => "echo process unpinned".into(),
    };
    let m = ctx.try_measure(Spec::new(&rtt_name(label, cross)).note(&note), |n| {
        (0..n).try_for_each(|_| near.round_trip(&mut buf))
    });
    drop((near, child));
    m
}
