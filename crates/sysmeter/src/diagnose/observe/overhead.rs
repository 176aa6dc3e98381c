//! The one shape of a tracer's overhead calibration: the same operation timed without the
//! tracer (A) and with it (B) in [`paired`], the one A/B loop, and the difference charged
//! to what the tracer recorded. A calibration supplies only its A and B blocks; the loop,
//! the clocks and the medians are here. What a block measures is one of two modes, each
//! with its reduction of the pairs:
//!
//! - **Per recorded event, CPU-timed** (a block's cost is its CPU time, [`cpu_ns`]; B also
//!   counts the events it recorded, [`Traced`]; [`Paired::per_event`]): `profile` (a spin
//!   loop with and without a sampling event) and `profile --off-cpu` (a socket ping-pong
//!   with and without the switch events), ten pairs each.
//! - **Per call, wall-timed in chunks** (a block is a loop of calls timed chunk by chunk by
//!   the monotonic clock, [`Chunks`]; [`Overhead::per_call`]): `trace` (a system call
//!   untraced and traced, in a forked child that times its own chunks), `calls` (a library
//!   call with and without its probes) and the path lookups of `run`. The backend's own
//!   timing of the probed operation is kept beside them: what tracing adds to each traced
//!   event ([`Overhead::added_ns`]) is reported; the part inside a timed interval
//!   ([`Overhead::inside_ns`]) is subtracted from every duration the tracer measures.
//!
//! Why the second mode times wall time: a per-call tracer's overhead is subtracted from
//! durations it times by the monotonic clock, so its untraced cost must be a wall time per
//! call in the same unit, beside the tracer's own median duration of the traced call
//! ([`Overhead::inside_ns`]); and a ptrace stop costs the program wall time while it is
//! stopped, off CPU, which CPU-timed blocks would not see. Its blocks are one pair of
//! loops (a traced block is a new child or new probes, dear to set up), each timed in
//! chunks: the median chunk keeps a preemption from moving the figure, as the medians over
//! alternating pairs do for the per-event tracers. What a probed call adds to the program's
//! CPU time (`calls`) is read around the same chunks by the same [`cpu_ns`].
//!
//! CPU time is read one way ([`cpu_ns`]; `session::Watch` reads sysmeter's own by it too)
//! and every median is `stats::median`. Depends on `stats` and `sysmeter_sys::clock`.

use sysmeter_sys::clock::{ClockId, clock_gettime_ns};

use crate::stats::median;

/// The measured overhead of a tracer, per traced event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Overhead {
    /// The operation untraced, ns per call.
    pub untraced_ns: f64,
    /// The operation traced, ns per call as the program sees it.
    pub traced_ns: f64,
    /// Median duration of the traced operation as the tracer times it, ns.
    pub interval_ns: f64,
    /// Calls in the traced loop (all chunks).
    pub calls: u64,
}

impl Overhead {
    /// What tracing adds to every traced call, ns.
    pub fn added_ns(&self) -> f64 {
        (self.traced_ns - self.untraced_ns).max(0.0)
    }

    /// The part of it inside a call's timed interval (subtracted from every duration), ns.
    pub fn inside_ns(&self) -> f64 {
        (self.interval_ns - self.untraced_ns).max(0.0)
    }

    /// The per-call mode's reduction of [`paired`]'s pairs of chunked loops: the median
    /// chunk of the untraced and of the traced blocks, per call, and the tracer's median
    /// duration of a traced call (`interval_ns`); `None` when a side timed no chunk.
    pub fn per_call(pairs: &[(Chunks, Chunks)], interval_ns: f64) -> Option<Overhead> {
        let untraced: Vec<&Chunks> = pairs.iter().map(|(a, _)| a).collect();
        let traced: Vec<&Chunks> = pairs.iter().map(|(_, b)| b).collect();
        Some(Overhead {
            untraced_ns: Chunks::median_per_call(&untraced)?,
            traced_ns: Chunks::median_per_call(&traced)?,
            interval_ns,
            calls: traced.iter().map(|c| c.total_calls()).sum(),
        })
    }
}

/// A block of the per-call mode: a loop timed in chunks, the time of each chunk and the
/// calls each made. The median chunk is used, so a preemption or a burst of other load
/// during a few chunks does not move it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunks {
    /// Each chunk's time (monotonic clock), ns.
    pub times_ns: Vec<u64>,
    /// Calls per chunk.
    pub calls: u64,
}

impl Chunks {
    /// Calls made in all the chunks.
    pub fn total_calls(&self) -> u64 {
        self.times_ns.len() as u64 * self.calls
    }

    /// Time per call of the median chunk of `blocks`, ns; `None` without a chunk.
    fn median_per_call(blocks: &[&Chunks]) -> Option<f64> {
        let per_call: Vec<f64> = blocks
            .iter()
            .flat_map(|b| b.times_ns.iter().map(|&t| t as f64 / b.calls as f64))
            .collect();
        median(&per_call).ok()
    }
}

/// Whose CPU time [`cpu_ns`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuOf {
    /// The calling thread.
    Thread,
    /// The whole process (all its threads: a block that makes two threads work).
    Process,
}

/// CPU time used so far, ns: the one clock every calibration times its blocks by. Other
/// load on the machine preempts a block but does not add CPU time to it, where wall times
/// on a busy machine vary by more than the effect measured.
pub fn cpu_ns(of: CpuOf) -> f64 {
    let clock = match of {
        CpuOf::Thread => ClockId::ThreadCputime,
        CpuOf::Process => ClockId::ProcessCputime,
    };
    clock_gettime_ns(clock) as f64
}

/// The calling thread's id (a calibration opens its events on itself).
pub fn own_tid() -> Option<i32> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    link.file_name()?.to_str()?.parse().ok()
}

/// A traced block (B) of the per-event mode: what it cost (CPU time) and how many events
/// the tracer recorded in it. Its plain block (A) is its cost alone, ns.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Traced {
    /// The block's cost (CPU time), ns.
    pub cost_ns: f64,
    /// Events the tracer recorded (samples, switches…).
    pub events: f64,
}

/// The per-event mode's reduction of [`paired`]'s pairs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Paired {
    /// Each plain block's cost, ns.
    pub plain_ns: Vec<f64>,
    /// Events recorded in each traced block.
    pub events: Vec<f64>,
    /// (traced − plain cost) / events of each pair that recorded any, ns (0 at least).
    pub per_event_ns: Vec<f64>,
}

impl Paired {
    /// Charges each pair's difference in cost to the events its traced block recorded.
    pub fn per_event(pairs: &[(f64, Traced)]) -> Paired {
        let mut out = Paired::default();
        for &(a, b) in pairs {
            out.plain_ns.push(a);
            out.events.push(b.events);
            if b.events > 0.0 {
                out.per_event_ns.push((b.cost_ns - a).max(0.0) / b.events);
            }
        }
        out
    }

    /// The median cost one recorded event adds, ns; `None` when no block recorded one.
    pub fn per_event_ns(&self) -> Option<f64> {
        median(&self.per_event_ns).ok()
    }

    /// The median number of events a traced block recorded (0 without pairs).
    pub fn events_per_block(&self) -> f64 {
        median(&self.events).unwrap_or(0.0)
    }

    /// The median cost of a plain block, ns (0 without pairs).
    pub fn plain_block_ns(&self) -> f64 {
        median(&self.plain_ns).unwrap_or(0.0)
    }
}

/// The one A/B loop of every calibration: `pairs` times a plain block (`plain`: the
/// operation without the tracer) and a traced one (`traced`: with it), alternating which
/// goes first (the first pair plain first) so that a drift in speed affects both alike.
/// `state` is what both blocks use (a socket, an event to enable, the tracer's collector).
/// What a block returns is its mode's measure, reduced by [`Paired::per_event`] (CPU time,
/// per recorded event) or [`Overhead::per_call`] (wall-timed [`Chunks`], per call).
pub fn paired<S, A, B, E>(
    pairs: usize,
    state: &mut S,
    mut plain: impl FnMut(&mut S) -> Result<A, E>,
    mut traced: impl FnMut(&mut S) -> Result<B, E>,
) -> Result<Vec<(A, B)>, E> {
    let mut out = Vec::with_capacity(pairs);
    for pair in 0..pairs {
        out.push(if pair % 2 == 0 {
            let a = plain(state)?;
            (a, traced(state)?)
        } else {
            let b = traced(state)?;
            (plain(state)?, b)
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_alternate_and_charge_the_difference_to_the_events() {
        let mut order = Vec::new();
        let p = paired(
            4,
            &mut order,
            |o: &mut Vec<char>| {
                o.push('a');
                Ok::<_, ()>(100.0)
            },
            |o: &mut Vec<char>| {
                o.push('b');
                let events = if o.len() == 2 { 0.0 } else { 10.0 };
                Ok(Traced {
                    cost_ns: 150.0,
                    events,
                })
            },
        );
        let p = Paired::per_event(&p.unwrap());
        assert_eq!(order.iter().collect::<String>(), "abbaabba");
        assert_eq!(p.per_event_ns, vec![5.0, 5.0, 5.0]);
        assert_eq!(p.per_event_ns(), Some(5.0));
        assert_eq!(p.events_per_block(), 10.0);
        assert_eq!(p.plain_block_ns(), 100.0);
    }

    #[test]
    fn medians_of_even_and_odd_pairs_and_of_none() {
        let medians = |plain_ns: &[f64]| {
            let p = Paired {
                plain_ns: plain_ns.to_vec(),
                ..Paired::default()
            };
            p.plain_block_ns()
        };
        assert_eq!(medians(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(medians(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(medians(&[]), 0.0);
    }

    #[test]
    fn no_event_is_no_cost_rather_than_a_division_by_zero() {
        let p = paired(
            2,
            &mut (),
            |_| Ok::<_, ()>(1.0),
            |_| {
                Ok(Traced {
                    cost_ns: 2.0,
                    events: 0.0,
                })
            },
        );
        assert_eq!(Paired::per_event(&p.unwrap()).per_event_ns(), None);
    }

    #[test]
    fn chunks_give_the_median_per_call() {
        let chunks = |times_ns: &[u64], calls| Chunks {
            times_ns: times_ns.to_vec(),
            calls,
        };
        let pair = (chunks(&[100, 300, 200], 10), chunks(&[500, 400], 2));
        let o = Overhead::per_call(std::slice::from_ref(&pair), 30.0).unwrap();
        assert_eq!((o.untraced_ns, o.traced_ns, o.calls), (20.0, 225.0, 4));
        assert_eq!(o.added_ns(), 205.0);
        assert_eq!(o.inside_ns(), 10.0);
        assert!(Overhead::per_call(&[(chunks(&[], 1), pair.1)], 0.0).is_none());
        assert!(Overhead::per_call(&[], 0.0).is_none());
    }

    #[test]
    fn chunked_pairs_pool_their_chunks_and_run_plain_first() {
        let mut order = String::new();
        let mut next = 0;
        let pairs = paired(
            2,
            &mut order,
            |o: &mut String| {
                o.push('a');
                Ok::<_, ()>(Chunks {
                    times_ns: vec![100, 120],
                    calls: 10,
                })
            },
            |o: &mut String| {
                o.push('b');
                next += 1;
                Ok(Chunks {
                    times_ns: vec![400 * next],
                    calls: 2,
                })
            },
        )
        .unwrap();
        assert_eq!(order, "abba");
        let o = Overhead::per_call(&pairs, 250.0).unwrap();
        assert_eq!((o.untraced_ns, o.traced_ns, o.calls), (11.0, 300.0, 4));
    }
}
