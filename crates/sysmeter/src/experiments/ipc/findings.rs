//! Findings of the ipc group: same vs cross CPU for each transport, and the transports
//! against each other (pipe vs socket, unix vs TCP, UDP vs TCP) using the results of the
//! experiments that ran earlier in the same run.

use super::connect::SETUP;
use super::{Transport, bw_name, rtt_name};
use crate::harness::{Ctx, Measured};
use crate::stats::ratio;

/// Add the findings for transport `t` to `out`.
pub fn add(ctx: &Ctx<'_>, t: Transport, out: &mut Measured) {
    cross_cpu(out);
    placement(out);
    let me = rtt_name("1 B", false);
    let Some(mine) = out.median(&me) else {
        return;
    };
    let compare = |other: &str| ctx.previous_median(other, &me);
    match t {
        Transport::Pipe => pipe_vs_ctxsw(ctx, out, mine),
        Transport::Unix => {
            if let Some(pipe) = compare("ipc.pipe") {
                versus(
                    out,
                    "pipe_vs_socket",
                    ("a unix socket", mine),
                    ("a pipe", pipe),
                    "A pipe is the simplest kernel channel (a ring of pages, no addresses, no \
                     socket layer); a unix stream socket adds the socket layer's locking and \
                     skb allocation per message.",
                    "Here the socket layer's extra work is lost in the wake-ups and switches \
                     that both pay.",
                );
            }
        }
        Transport::Tcp => {
            if let Some(unix) = compare("ipc.unix") {
                versus(
                    out,
                    "unix_vs_tcp",
                    ("TCP over loopback", mine),
                    ("a unix socket", unix),
                    "Loopback TCP runs the whole IP and TCP stack on both ends (headers, \
                     checksums offloaded but sequence/ACK processing, the loopback device's \
                     softirq), which a unix socket skips: it queues the data straight on \
                     the peer socket.",
                    "Here the network stack's extra work is lost in the wake-ups and switches \
                     that both pay.",
                );
            }
            tcp_connect(out, mine);
            bandwidth_vs_unix(ctx, out);
        }
        Transport::Udp => {
            if let Some(tcp) = compare("ipc.tcp") {
                versus(
                    out,
                    "udp_vs_tcp",
                    ("UDP over loopback", mine),
                    ("TCP over loopback", tcp),
                    "UDP is not cheaper here: TCP's fast path for an established connection \
                     (header prediction, early demultiplexing) is as short as UDP's datagram \
                     path, and both are dominated by the same system calls and wake-ups.",
                    "UDP has no connection state, acknowledgements or retransmission timers \
                     to update per message.",
                );
            }
        }
    }
}

/// Compare `a` with `b`; `why` explains `a` costing more, `why_not` the opposite outcome.
fn versus(out: &mut Measured, key: &str, a: (&str, f64), b: (&str, f64), why: &str, why_not: &str) {
    let r = ratio(a.1, b.1);
    let why = if r.is_some_and(|r| r > 1.1) {
        why
    } else {
        why_not
    };
    out.find(
        key,
        format!(
            "A 1-byte round trip over {} ({:.0} ns) costs {} one over {} ({:.0} ns). {why}",
            a.0,
            a.1,
            r.map_or("n/a x".into(), |r| format!("{r:.2}x")),
            b.0,
            b.1
        ),
        r,
    );
}

fn cross_cpu(out: &mut Measured) {
    let (Some(same), Some(cross)) = (
        out.median(&rtt_name("1 B", false)),
        out.median(&rtt_name("1 B", true)),
    ) else {
        return;
    };
    let Some(r) = ratio(cross, same) else {
        return;
    };
    let why = if r > 1.2 {
        "waking a peer on another CPU takes an inter-processor interrupt and that CPU's exit \
         from idle (a VM exit under a hypervisor), while on one CPU the wake-up is a local \
         run-queue operation"
    } else if r < 0.8 {
        "on two CPUs the sender and the echo run in parallel and no context switch is \
         needed, which outweighs the cross-CPU wake-up"
    } else {
        "the cross-CPU wake-up costs about what the two context switches of the same-CPU \
         case cost"
    };
    out.find(
        "cross_vs_same_cpu",
        format!(
            "A 1-byte round trip between two CPUs ({cross:.0} ns) costs {r:.2}x one on the \
             same CPU ({same:.0} ns): {why}."
        ),
        Some(r),
    );
}

fn tcp_connect(out: &mut Measured, rtt: f64) {
    let Some(setup) = out.median(SETUP) else {
        return;
    };
    let r = ratio(setup, rtt);
    out.find(
        "connect_vs_round_trip",
        format!(
            "Setting up a loopback TCP connection ({setup:.0} ns) costs {} a 1-byte round \
             trip on it ({rtt:.0} ns): three handshake segments, two sockets created and \
             hashed, and an accept; keep connections open (pooling) when requests are small.",
            r.map_or("n/a x".into(), |r| format!("{r:.1}x"))
        ),
        r,
    );
}

fn placement(out: &mut Measured) {
    let (Some(same), Some(cross)) = (out.median(bw_name(false)), out.median(bw_name(true))) else {
        return;
    };
    let Some(r) = ratio(cross, same) else {
        return;
    };
    let why = if r < 0.8 {
        "on one CPU the writer fills the kernel buffer and the reader then drains it in large \
         batches with few switches, while a reader on another CPU is woken (an \
         inter-processor interrupt, a VM exit under a hypervisor) again and again as data \
         trickles in; where the producer and consumer of a stream sit matters"
    } else if r > 1.2 {
        "two CPUs copy in parallel: the writer copies into the kernel while the reader copies \
         out"
    } else {
        "placement makes little difference here"
    };
    out.find(
        "bandwidth_placement",
        format!(
            "Streaming to a reader on another CPU ({:.2} GB/s) runs at {r:.2}x the rate with the \
             reader on the same CPU ({:.2} GB/s): {why}.",
            cross / 1e9,
            same / 1e9
        ),
        Some(r),
    );
}

fn bandwidth_vs_unix(ctx: &Ctx<'_>, out: &mut Measured) {
    let (Some(tcp), Some(unix)) = (
        out.median(bw_name(false)),
        ctx.previous_median("ipc.unix", bw_name(false)),
    ) else {
        return;
    };
    out.find(
        "unix_vs_tcp_bandwidth",
        format!(
            "Streaming with the reader on the same CPU: TCP loopback moves {:.2} GB/s, a unix \
             socket {:.2} GB/s, {} TCP's rate.",
            tcp / 1e9,
            unix / 1e9,
            ratio(unix, tcp).map_or("n/a".into(), |r| format!("{r:.2}x"))
        ),
        ratio(unix, tcp),
    );
}

/// The pipe round trip against os.ctxsw's measurement of the same operation.
fn pipe_vs_ctxsw(ctx: &Ctx<'_>, out: &mut Measured, mine: f64) {
    if let Some(ctxsw) = ctx.previous_median("os.ctxsw", super::super::os_ctxsw::PROC_RTT) {
        let r = ratio(mine, ctxsw);
        out.find(
            "pipe_vs_ctxsw",
            format!(
                "The same-CPU pipe round trip ({mine:.0} ns) is {} os.ctxsw's process \
                 round trip over pipes ({ctxsw:.0} ns), the same operation measured \
                 by another experiment earlier in this run: {}.",
                r.map_or("n/a x".into(), |r| format!("{r:.2}x")),
                if r.is_some_and(|r| (0.8..=1.25).contains(&r)) {
                    "they agree"
                } else {
                    "they differ by more than the usual noise; the machine's load \
                     probably changed between the two"
                }
            ),
            r,
        );
    }
}
