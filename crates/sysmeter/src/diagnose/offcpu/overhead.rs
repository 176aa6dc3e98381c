//! What tracing one context switch costs the traced program, measured before each
//! off-CPU profile.
//!
//! Two threads of this process bounce a byte over a Unix socket pair: every round trip
//! blocks and wakes each thread once. Blocks of `ROUND_TRIPS` round trips run alternately
//! without and with the events of an off-CPU profile on both threads (switch events with
//! call chains and stack snapshots, and the system-wide waking events), `PAIRS` times
//! each (`observe::overhead::paired`, the one A/B loop); each block is timed by the
//! process's CPU time (the two threads; the kernel's work for a record is charged to the
//! thread that switches). The cost per switch is the median over pairs of (traced −
//! untraced CPU time) / switches recorded. A profile's in-target
//! overhead is then estimated as switches × cost, stated against its wall time. Wakings of
//! other processes cost them too and are not in this figure (counted in the report).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use super::events::{Ids, OffEvents};
use super::raw::OffRaw;
use crate::diagnose::observe::overhead::{CpuOf, Paired, Traced, cpu_ns, own_tid, paired};
use crate::diagnose::observe::proc::online_cpus;

/// Round trips per timed block (records of one block fit the rings).
const ROUND_TRIPS: usize = 200;
/// Timed blocks of each kind.
const PAIRS: usize = 5;

/// The measured cost of tracing switches.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cost {
    /// CPU time one recorded switch adds, ns (`None` when it could not be measured).
    pub per_switch_ns: Option<f64>,
    /// Switches recorded in one traced block (median).
    pub switches_per_block: f64,
}

/// The process's CPU time of [`ROUND_TRIPS`] round trips, ns.
fn bounce(s: &mut UnixStream) -> std::io::Result<f64> {
    let t = cpu_ns(CpuOf::Process);
    let mut b = [0u8; 1];
    for _ in 0..ROUND_TRIPS {
        s.write_all(&b)?;
        s.read_exact(&mut b)?;
    }
    Ok(cpu_ns(CpuOf::Process) - t)
}

/// Measures [`Cost`]; `per_switch_ns` is `None` when the events cannot be opened on this
/// process or the socket pair fails.
pub fn calibrate(ids: Ids) -> Cost {
    measure(ids).unwrap_or_default()
}

fn measure(ids: Ids) -> Option<Cost> {
    let (mut a, mut b) = UnixStream::pair().ok()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let echo = std::thread::spawn(move || {
        let _ = tx.send(own_tid());
        let mut byte = [0u8; 1];
        while b.read_exact(&mut byte).is_ok() && b.write_all(&byte).is_ok() {}
    });
    let helper = rx.recv().ok()??;
    let me = own_tid()?;
    let traced = |a: &mut UnixStream| {
        let failed = |e: String| std::io::Error::other(e);
        let mut events = OffEvents::new(ids, &online_cpus()).map_err(|e| failed(e.to_string()))?;
        events.add_thread(me).map_err(|e| failed(e.to_string()))?;
        events
            .add_thread(helper)
            .map_err(|e| failed(e.to_string()))?;
        let cost_ns = bounce(a)?;
        let mut raw = OffRaw::default();
        events.drain(&mut raw);
        let events = raw.outs.len() as f64;
        Ok::<_, std::io::Error>(Traced { cost_ns, events })
    };
    let pairs = paired(PAIRS, &mut a, bounce, traced);
    drop(a);
    let _ = echo.join();
    let pairs = Paired::per_event(&pairs.ok()?);
    Some(Cost {
        per_switch_ns: pairs.per_event_ns(),
        switches_per_block: pairs.events_per_block(),
    })
}
