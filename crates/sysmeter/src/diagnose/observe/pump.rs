//! The one record pump: every ring drained the same way, each record read once into a typed
//! [`Record`] and handed to the diagnosis's [`Handler`] (what it aggregates), then the
//! handler settled once per drain (records merged by time, stacks unwound); and the one
//! session loop ([`run`]) that drains every `rings::DRAIN_PERIOD` until the stop rule says so:
//! the launched command ended, the attached process is gone, Ctrl-C, or `--duration`.
//! A handler that implements [`Snapshot`] can be read between two drains without stopping
//! the session (the view of its aggregation so far).
//!
//! Depends on `perf_event` (the rings), [`super::records`], [`super::session`].

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use perf_event::Sampler;
use sysmeter_sys::clock::{ClockId, clock_gettime_ns};
use sysmeter_sys::process::child::Child;

use super::proc::process_gone;
use super::records::{Format, Record};
use super::rings::DRAIN_PERIOD;
use super::session::{Ended, Exited, StopWhen};

/// One drain ended: every ring was read once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settle {
    /// When the drain began (CLOCK_MONOTONIC, ns): a record older than the drain before it
    /// cannot still be on its way into another CPU's ring.
    pub started: i64,
    /// The last drain of the session: nothing more will come.
    pub last: bool,
}

/// What a diagnosis keeps of the records: its aggregation.
pub trait Handler {
    /// One record, in its ring's order (rings are read one after the other).
    fn record(&mut self, r: Record<'_>);
    /// Every ring was drained once: release what waited for the other rings.
    fn settle(&mut self, _drain: Settle) {}
    /// The session was cut short (Ctrl-C, `--duration`): forget what cannot complete
    /// (calls that entered and will never be seen to return).
    fn cut(&mut self) {}
    /// Events counted so far, for the progress line of an attached session.
    fn count(&self) -> u64 {
        0
    }
}

/// An aggregation that can be read while it runs: a consistent view of what it holds after
/// the last drain, taken without stopping the session (a live view reads it between drains).
pub trait Snapshot {
    /// What a reader sees.
    type View;
    /// The aggregation so far.
    fn snapshot(&self) -> Self::View;
}

/// Where a session's records come from, as [`run`] drives it.
pub trait Pump<H: ?Sized> {
    /// Reads every record now available into `h`, then settles it (`last`: the final drain).
    fn pump(&mut self, h: &mut H, last: bool);
    /// Stops recording (the targets are not affected), before the final drain.
    fn stop(&mut self) {}
    /// Whether the targets ended, for a source that watches them itself
    /// ([`Watched::BySource`]: it reads their state at every drain anyway).
    fn ended(&mut self) -> io::Result<bool> {
        Ok(false)
    }
}

/// A source that holds no records but is read at every drain all the same: a shared region
/// or BPF maps sampled by a closure (`observe::inject`'s watch, `alloc`'s uprobe backend).
pub struct Ticks<F>(pub F);

impl<H: ?Sized, F: FnMut()> Pump<H> for Ticks<F> {
    fn pump(&mut self, _: &mut H, _last: bool) {
        (self.0)();
    }
}

/// A source read together with a closure called just before each of its drains: a counter
/// sampled beside the records (trace's `/proc/PID/io` read and write calls, the independent
/// count `observe::witness` judges the records by). Sampled first, so every call it counts
/// was made before the records drained after it.
pub struct Beside<'s, S: ?Sized, F>(pub &'s mut S, pub F);

impl<H: ?Sized, S: Pump<H> + ?Sized, F: FnMut()> Pump<H> for Beside<'_, S, F> {
    fn pump(&mut self, h: &mut H, last: bool) {
        (self.1)();
        self.0.pump(h, last);
    }

    fn stop(&mut self) {
        self.0.stop();
    }

    fn ended(&mut self) -> io::Result<bool> {
        self.0.ended()
    }
}

/// A source drained on another thread until `flag` is set ([`Watched::BySource`]): `run`'s
/// lookup tracer, which the launching thread stops once the command it traces is reaped.
pub struct UntilSet<'s, S: ?Sized>(pub &'s mut S, pub Arc<AtomicBool>);

impl<H: ?Sized, S: Pump<H> + ?Sized> Pump<H> for UntilSet<'_, S> {
    fn pump(&mut self, h: &mut H, last: bool) {
        self.0.pump(h, last);
    }

    fn ended(&mut self) -> io::Result<bool> {
        Ok(self.1.load(Ordering::Acquire))
    }
}

/// A handler that only counts the samples it is handed (`profile`'s calibration: how many
/// samples a timed block cost).
#[derive(Debug, Default)]
pub struct SampleCount(pub u64);

impl Handler for SampleCount {
    fn record(&mut self, r: Record<'_>) {
        self.0 += u64::from(matches!(r, Record::Sample(_)));
    }

    fn count(&self) -> u64 {
        self.0
    }
}

/// The handler of a session whose source holds no records ([`Ticks`]).
pub struct NoRecords;

impl Handler for NoRecords {
    fn record(&mut self, _: Record<'_>) {}
}

/// Moves every record of `ring` (samples laid out as `format` says) into `h`.
pub fn drain_ring<H: Handler + ?Sized>(ring: &mut Sampler, format: Format, h: &mut H) {
    while let Some(rec) = ring.next_record() {
        let body = rec.to_contiguous();
        if let Some(r) = Record::parse(rec.ty(), rec.misc(), &body, format) {
            h.record(r);
        }
        // Dropping `rec` hands the space back to the kernel.
    }
}

/// Drains `rings` (all laid out as `format` says) into `h` and settles it.
pub fn drain_all<'r, H: Handler + ?Sized>(
    rings: impl IntoIterator<Item = &'r mut Sampler>,
    format: Format,
    h: &mut H,
    last: bool,
) {
    let started = clock_gettime_ns(ClockId::Monotonic);
    for ring in rings {
        drain_ring(ring, format, h);
    }
    h.settle(Settle { started, last });
}

/// What ends a session besides the stop rule.
pub enum Watched<'c> {
    /// A launched command: its exit.
    Command(&'c mut Child),
    /// An attached process: its disappearance.
    Process(i32),
    /// Attached processes whose source says when they ended ([`Pump::ended`]).
    BySource,
}

impl Watched<'_> {
    /// `Some` once the target ended, with a launched command's exit.
    fn ended<H: ?Sized>(&mut self, source: &mut dyn Pump<H>) -> io::Result<Option<Option<Exited>>> {
        Ok(match self {
            Watched::Command(child) => child.wait(false)?.map(Some),
            Watched::Process(pid) => process_gone(*pid).then_some(None),
            Watched::BySource => source.ended()?.then_some(None),
        })
    }
}

/// How the loop ended: why, and a launched command's exit when it ended by itself (what a
/// diagnosis turns into the `model::SessionEnd` of its result, through `session::end`).
pub type LoopEnd = (Ended, Option<Exited>);

/// The one session loop: drains `source` into `h` every `DRAIN_PERIOD` until `target`
/// ends (a last drain takes what is left) or `stop` says to stop (recording is stopped,
/// the last records drained, and what cannot complete cut).
pub fn run<H: Handler + ?Sized>(
    source: &mut dyn Pump<H>,
    h: &mut H,
    mut target: Watched<'_>,
    stop: &mut StopWhen<'_>,
) -> io::Result<LoopEnd> {
    loop {
        std::thread::sleep(DRAIN_PERIOD);
        source.pump(h, false);
        if let Some(exit) = target.ended(source)? {
            source.pump(h, true);
            return Ok((Ended::Finished, exit));
        }
        if stop.check(h.count()) {
            source.stop();
            source.pump(h, true);
            h.cut();
            return Ok((stop.why.unwrap_or(Ended::Interrupted), None));
        }
    }
}
