//! `ipc.pipe`: round trips and bandwidth over two anonymous pipes, one per direction (the
//! pair is the shared [`crate::experiments::peer::pipes`], the same channel `os.ctxsw`
//! times), and its finding against `os.ctxsw`'s process round trip (read by that
//! experiment's metric name, the one import from another group). The measurement itself
//! is the group's one [`Ipc`] experiment.

use super::experiment::Ipc;
use super::transport::Transport;
use crate::experiments::os::ctxsw::PROC_RTT;
use crate::harness::{Ctx, Measured};
use crate::stats::ratio;

/// `ipc.pipe`.
pub static PIPE: Ipc = Ipc(Transport::Pipe, include_str!("pipe.md"));

/// The pipe round trip against os.ctxsw's measurement of the same operation.
pub fn findings(ctx: &Ctx<'_>, out: &mut Measured, mine: f64) {
    if let Some(ctxsw) = ctx.previous_median("os.ctxsw", PROC_RTT) {
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
