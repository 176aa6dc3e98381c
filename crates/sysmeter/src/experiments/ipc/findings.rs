//! The findings every ipc transport shares: same vs cross CPU for the round trip and for
//! the bandwidth, and the comparison of two transports' round trips. Each transport's
//! comparison with the others (pipe vs os.ctxsw, unix vs pipe, TCP vs unix, UDP vs TCP)
//! lives in that transport's file, and `against_others` calls it. The findings drawn from
//! the experiment's own metrics ([`own`]) are its `metric_findings`, so with rounds they
//! quote the pooled figures; those against an earlier experiment read it through `Ctx` and
//! are drawn in `run`.

use super::experiment::{bw_name, rtt_name};
use super::transport::Transport;
use super::{pipe, tcp, udp, unix};
use crate::harness::{Ctx, Measured};
use crate::stats::ratio;

/// Add the findings of transport `t` drawn from its own metrics to `out`.
pub fn own(t: Transport, out: &mut Measured) {
    cross_cpu(out);
    placement(out);
    if t == Transport::Tcp {
        tcp::connect_vs_round_trip(out);
    }
}

/// Add the findings of transport `t` against the earlier experiments of the run to `out`.
pub fn against_others(ctx: &Ctx<'_>, t: Transport, out: &mut Measured) {
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

#[cfg(test)]
mod tests {
    use super::super::tcp::{TCP, connect::SETUP};
    use super::*;
    use crate::harness::pooled::{figure, finding, pooled, round};
    use crate::model::{HostInfo, Unit};

    #[test]
    fn the_findings_of_the_own_metrics_quote_the_pooled_figures() {
        let (same, cross) = (rtt_name("1 B", false), rtt_name("1 B", true));
        let rows = [
            (same.as_str(), Unit::Ns, 10_000.0),
            (cross.as_str(), Unit::Ns, 20_000.0),
            (bw_name(false), Unit::BytesPerSec, 2e9),
            (bw_name(true), Unit::BytesPerSec, 1e9),
            (SETUP, Unit::Ns, 40_000.0),
        ];
        let mut rounds = [round(&rows, 1.0), round(&rows, 1.0)];
        // All but the same-CPU round trip move between the rounds, so each ratio moves too.
        for m in &mut rounds[1][1..] {
            *m = crate::harness::pooled::metric(
                &m.name,
                m.unit,
                &m.samples.iter().map(|x| x * 1.5).collect::<Vec<_>>(),
            );
        }
        let r = pooled(&TCP, &HostInfo::default(), &rounds);
        let rtt = (figure(&r, &same), figure(&r, &cross));
        assert_eq!(rtt.1, 25_000.0, "pooled, not the last round's 30 000 ns");
        let (text, value) = finding(&r, "cross_vs_same_cpu");
        assert_eq!(value, ratio(rtt.1, rtt.0));
        assert!(text.contains("(25000 ns)"), "{text}");
        let bw = (figure(&r, bw_name(false)), figure(&r, bw_name(true)));
        assert_eq!(finding(&r, "bandwidth_placement").1, ratio(bw.1, bw.0));
        let setup = figure(&r, SETUP);
        assert_eq!(finding(&r, "connect_vs_round_trip").1, ratio(setup, rtt.0));
    }
}
