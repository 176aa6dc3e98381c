//! The findings every ipc transport shares: same vs cross CPU for the round trip and for
//! the bandwidth, and the comparison of two transports' round trips. Each transport's
//! comparison with the others (pipe vs os.ctxsw, unix vs pipe, TCP vs unix, UDP vs TCP)
//! lives in that transport's file, and `add` calls it.

use super::experiment::{bw_name, rtt_name};
use super::transport::Transport;
use super::{pipe, tcp, udp, unix};
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
    match t {
        Transport::Pipe => pipe::findings(ctx, out, mine),
        Transport::Unix => unix::findings(ctx, out, mine, &me),
        Transport::Tcp => tcp::findings(ctx, out, mine, &me),
        Transport::Udp => udp::findings(ctx, out, mine, &me),
    }
}

/// Compare `a` with `b`; `why` explains `a` costing more, `why_not` the opposite outcome.
pub fn versus(
    out: &mut Measured,
    key: &str,
    a: (&str, f64),
    b: (&str, f64),
    why: &str,
    why_not: &str,
) {
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
