//! What tracing one context switch costs the traced program, measured before each
//! off-CPU profile.
//!
//! Two threads of this process bounce a byte over a Unix socket pair: every round trip
//! blocks and wakes each thread once. Blocks of `ROUND_TRIPS` round trips run alternately
//! without and with the events of an off-CPU profile on both threads (switch events with
//! call chains and stack snapshots, and the system-wide waking events), `PAIRS` times
//! each; each block is timed by the process's CPU time (the two threads; the kernel's work
//! for a record is charged to the thread that switches). The cost per switch is the median
//! over pairs of (traced − untraced CPU time) / switches recorded. A profile's in-target
//! overhead is then estimated as switches × cost, stated against its wall time. Wakings of
//! other processes cost them too and are not in this figure (counted in the report).

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

use sysmeter_sys::clock::{ClockId, clock_gettime_ns};

use super::events::{Ids, OffEvents};
use super::raw::OffRaw;
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

fn cpu_ns() -> f64 {
    clock_gettime_ns(ClockId::ProcessCputime) as f64
}

fn thread_id() -> Option<i32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

fn bounce(s: &mut UnixStream, n: usize) -> std::io::Result<()> {
    let mut b = [0u8; 1];
    for _ in 0..n {
        s.write_all(&b)?;
        s.read_exact(&mut b)?;
    }
    Ok(())
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
        let _ = tx.send(thread_id());
        let mut byte = [0u8; 1];
        while b.read_exact(&mut byte).is_ok() && b.write_all(&byte).is_ok() {}
    });
    let helper = rx.recv().ok()??;
    let me = thread_id()?;
    let mut costs = Vec::with_capacity(PAIRS);
    let mut switches = Vec::with_capacity(PAIRS);
    for _ in 0..PAIRS {
        let t = cpu_ns();
        bounce(&mut a, ROUND_TRIPS).ok()?;
        let plain = cpu_ns() - t;
        let mut events = OffEvents::new(ids, &online_cpus()).ok()?;
        events.add_thread(me).ok()?;
        events.add_thread(helper).ok()?;
        let t = cpu_ns();
        bounce(&mut a, ROUND_TRIPS).ok()?;
        let traced = cpu_ns() - t;
        let mut raw = OffRaw::default();
        events.drain(&mut raw);
        drop(events);
        let n = raw.outs.len() as f64;
        if n > 0.0 {
            costs.push((traced - plain).max(0.0) / n);
            switches.push(n);
        }
    }
    drop(a);
    let _ = echo.join();
    Some(Cost {
        per_switch_ns: crate::stats::median(&costs).ok(),
        switches_per_block: crate::stats::median(&switches).unwrap_or(0.0),
    })
}
