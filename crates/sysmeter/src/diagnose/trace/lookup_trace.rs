//! The path lookups of a command that `sysmeter run` launches, traced without stopping it:
//! the tracepoint backend's rings (`tracepoint::Rings`) on the gated child, with the
//! kernel filter keeping only strace's `%file` calls (every call that takes a path), plus
//! the uprobes of `tracepoint::PathProbes` for the path strings when they can be
//! defined. A thread drains the rings on the floor's one session loop (`pump::run`) into one
//! [`Collector`] while the command runs; the calibrated tracing overhead inside each call's
//! interval is subtracted as in `trace`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

use super::calibrate::{self, Overhead};
use super::classes::Selection;
use super::lookups::Lookups;
use super::names::{self, Arch};
use super::summary::{CallStats, Collector};
use super::tracepoint::{self, OpenSpec, PathProbes, Rings};
use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::lookups::{LookupSummary, LookupTracer};
use crate::diagnose::observe::pump::{self, UntilSet, Watched};
use crate::diagnose::observe::session::StopWhen;

/// What the trace of the lookups found.
#[derive(Debug, Clone)]
pub struct LookupReport {
    /// Per path-taking call seen: its name and tally, most calls first.
    pub calls: Vec<(String, CallStats)>,
    /// The paths, for the calls whose path a probe saw.
    pub lookups: Lookups,
    /// The C library whose functions were probed for the paths, or why no path was read.
    pub paths: Result<String, Reason>,
    /// Records the kernel dropped (a ring was full).
    pub lost: u64,
    /// The tracing overhead measured before.
    pub overhead: Overhead,
    /// Things the reader should know (tracefs mounted by us).
    pub notes: Vec<String>,
}

/// The running trace.
pub struct LookupTrace {
    stop: Arc<AtomicBool>,
    /// Taken by [`LookupTrace::finish`]; joined on drop otherwise.
    worker: Option<JoinHandle<(Collector, u64)>>,
    /// Removed after the worker closed the events on them (a probe with an open event
    /// cannot be removed).
    probes: Option<Result<PathProbes, Reason>>,
    overhead: Overhead,
    notes: Vec<String>,
}

/// The `%file` class: every call that takes a path.
fn file_calls() -> Result<Selection, Reason> {
    Selection::parse(&["file".to_string()]).map_err(Reason)
}

impl LookupTrace {
    /// Opens the events on `pid`, a gated child that has not called execve yet (they start
    /// at its exec); `paths` also defines the path probes. The reason when the calls
    /// cannot be traced at all.
    pub fn start(pid: i32, paths: bool) -> Result<LookupTrace, Reason> {
        let (ids, note) = tracepoint::probe(true).map_err(|u| Reason::with_fix(u.reason, u.fix))?;
        let selection = file_calls()?;
        let cpus = super::run::online_cpus();
        let refused = |e: std::io::Error| {
            Reason(format!(
                "the system-call tracepoints could not be opened ({e})"
            ))
        };
        let (overhead, calibration) =
            calibrate::tracepoint_overhead(ids, &cpus).map_err(refused)?;
        let probes = match paths {
            true => PathProbes::define(),
            false => Err(Reason(
                "they are read only with --lookups paths (uprobes on the C library: root, \
                 about 12 µs per lookup and 1-2 s at exit)"
                    .to_string(),
            )),
        };
        let events = probes.as_ref().map_or(&[][..], |p| &p.events[..]);
        let spec = OpenSpec {
            targets: &[pid],
            cpus: &cpus,
            follow_forks: true,
            enable_on_exec: true,
            filter: tracepoint::filter_for(&selection.numbers(Arch::native())),
            paths: events,
        };
        let mut rings = Rings::open(ids, &spec).map_err(refused)?;
        drop(calibration);
        let mut calls = rings.calls(Collector::new(Some(selection), overhead.inside_ns()));
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let worker = std::thread::spawn(move || {
            let mut source = UntilSet(&mut rings, flag);
            // Only the flag ends it (BySource); a drain cannot fail.
            let _ = pump::run(
                &mut source,
                &mut calls,
                Watched::BySource,
                &mut StopWhen::never(),
            );
            (calls.collector, calls.lost)
        });
        Ok(LookupTrace {
            stop,
            worker: Some(worker),
            probes: Some(probes),
            overhead,
            notes: note.into_iter().collect(),
        })
    }

    /// Stops tracing (after the command exited) and returns what was found.
    pub fn report(mut self) -> LookupReport {
        let (collector, lost) = self.join();
        let paths = match self.probes.take() {
            Some(Ok(p)) => Ok(p.libc.clone()),
            Some(Err(why)) => Err(why),
            None => Err(Reason("not probed".into())),
        };
        let mut calls: Vec<(String, CallStats)> = collector
            .calls()
            .iter()
            .map(|(&(arch, nr), s)| (names::name(arch, nr).into_owned(), s.clone()))
            .collect();
        calls.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(&b.0)));
        LookupReport {
            calls,
            lookups: collector.lookups,
            paths,
            lost,
            overhead: self.overhead,
            notes: std::mem::take(&mut self.notes),
        }
    }

    /// Stops the worker and waits for it (it closes the events).
    fn join(&mut self) -> (Collector, u64) {
        self.stop.store(true, Ordering::Release);
        self.worker
            .take()
            .and_then(|w| w.join().ok())
            .unwrap_or_else(|| (Collector::new(None, 0.0), 0))
    }
}

/// Opens the lookup trace on the gated child `pid`: `run`'s
/// [`StartLookups`](crate::diagnose::observe::lookups::StartLookups).
pub fn start(pid: i32, paths: bool) -> Result<Box<dyn LookupTracer>, Reason> {
    Ok(Box::new(LookupTrace::start(pid, paths)?))
}

impl LookupTracer for LookupTrace {
    fn finish(self: Box<Self>, system_ns: u64) -> LookupSummary {
        super::lookup_summary::summarize(&self.report(), system_ns)
    }
}

impl Drop for LookupTrace {
    fn drop(&mut self) {
        self.join();
    }
}
