//! The one experiment type behind `ipc.pipe`, `ipc.unix`, `ipc.tcp` and `ipc.udp`: round
//! trips of small and 1 KiB messages between two processes on the same CPU and on different
//! CPUs, streaming bandwidth to a reader in another process (`stream.rs`), and for TCP the
//! cost of a connection's setup and teardown (`tcp/connect.rs`). What differs per transport
//! (its pair of descriptors, its about text, its findings) lives in the transport's file.
//! Depends on the harness, `model` and the shared peer; on no other group.

use super::stream::bandwidth;
use super::transport::{Transport, echo_peer};
use super::{findings, pipe, tcp, udp, unix};
use crate::harness::{Ctx, Experiment, ExperimentError, Measured, Spec};
use crate::model::{About, Metric};

/// One transport's experiment.
pub struct Ipc(pub Transport);

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
    fn shares_measuring_cpu(&self) -> bool {
        // Peers, children, helper threads or kernel I/O work of its own run beside it.
        true
    }

    fn id(&self) -> &'static str {
        match self.0 {
            Transport::Pipe => "ipc.pipe",
            Transport::Unix => "ipc.unix",
            Transport::Tcp => "ipc.tcp",
            Transport::Udp => "ipc.udp",
        }
    }

    fn about(&self) -> About {
        let (title, what) = match self.0 {
            Transport::Pipe => pipe::ABOUT,
            Transport::Unix => unix::ABOUT,
            Transport::Tcp => tcp::ABOUT,
            Transport::Udp => udp::ABOUT,
        };
        let mut methodology = format!(
            "Transport: {what}. Round trip: the measuring process writes a message of 1 B \
             or 1 KiB and reads the reply from an echo process forked for the purpose \
             (plain read/write system calls on both sides); one operation is write + the \
             peer's read and write + our read, including the wake-ups in between. The echo \
             process is pinned to the measuring CPU (same CPU: every round trip is two \
             context switches) or to another allowed CPU (cross CPU: two wake-ups across \
             CPUs, no switch away from a busy task). Bandwidth: a reader process, on \
             the measuring CPU and again on another CPU when one is allowed, reads and \
             discards; the timed interval is our \
             writes of {} each, for a fixed time (0.1 s quick, 0.25 s default, 2 s \
             thorough) after a warm-up that fills the kernel buffers; the rate is sampled \
             every 10 ms (longer than a full socket buffer takes to drain, so a sample is \
             not a burst into free buffer space), and the note gives the aggregate rate, \
             total bytes over total time, which is what iperf3 reports.",
            if self.0.is_datagram() {
                "8 KiB datagrams, at most two 32 KiB windows unacknowledged (the reader \
                 sends one byte per window: UDP has no flow control, and a sender without \
                 it measures only how fast the kernel can drop)"
            } else {
                "128 KiB"
            }
        );
        if self.0 == Transport::Tcp {
            methodology.push_str(tcp::connect::METHODOLOGY);
        }
        About::new(
            format!(
                "{title} round trip, bandwidth{}",
                if self.0 == Transport::Tcp {
                    " and connection cost"
                } else {
                    ""
                }
            ),
            format!(
                "Round-trip latency of 1 B and 1 KiB messages between two processes over {what}, same CPU and cross CPU; streaming bandwidth{}.",
                if self.0 == Transport::Tcp {
                    "; connect+accept and close-seen-by-peer per connection"
                } else {
                    ""
                }
            ),
            methodology,
            &[
                "systems-measurement report: round trip time, peak bandwidth, connection overhead",
                "lmbench lat_pipe, lat_unix, lat_tcp, lat_udp, bw_pipe, bw_tcp, lat_connect",
            ],
        )
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
        findings::add(ctx, self.0, &mut out);
        Ok(out)
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
