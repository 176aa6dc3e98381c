//! [`Watch`]: the probe and the counters taken at the start of an experiment, and the
//! [`MachineState`] produced at its end.
//!
//! Both [`Watch::start`] and [`Watch::finish`] must run on the measuring thread, pinned to
//! the measuring CPU: the probe measures the CPU it runs on and `/proc/thread-self` is the
//! caller's thread. **Timed interval**: from the end of the start probe and counter read to
//! the end counter read, which happens before the end probe, so neither probe is inside it.
//! [`Watch::finish_with`] is the pure half, for tests and for callers that probe themselves.

use std::time::Instant;

use super::MachineError;
use super::cache::{self, CACHE_SPREAD, CacheTrail};
use super::counters::{Beside, Counters};
use super::judge::{Limits, judge_series};
use super::sample::ProbeSample;
use super::state;
use crate::model::MachineState;

/// What was true when the experiment started.
#[derive(Debug, Clone)]
pub struct Watch {
    probe: ProbeSample,
    counters: Counters,
    at: Instant,
    cache: Option<CacheTrail>,
}

impl Watch {
    /// Probe the machine and read the counters for `cpu`, the CPU the calling thread is
    /// pinned to.
    pub fn start(cpu: usize) -> Result<Watch, MachineError> {
        let probe = ProbeSample::take();
        let counters = Counters::read(cpu)?;
        Ok(Watch::from_parts(probe, counters))
    }

    /// A watch from a probe and counters taken now.
    pub fn from_parts(probe: ProbeSample, counters: Counters) -> Watch {
        Watch {
            probe,
            counters,
            at: Instant::now(),
            cache: None,
        }
    }

    /// Also watch the share of the last-level cache left to this CPU (the shared-cache
    /// probe, [`cache`]): one reading now, one at the end.
    pub fn with_cache(mut self) -> Watch {
        let mut trail = CacheTrail::default();
        trail.take();
        self.cache = Some(trail);
        self
    }

    /// The start probe.
    pub fn probe(&self) -> ProbeSample {
        self.probe
    }

    /// Read the counters, probe again and judge, with the probes the experiment took
    /// between the points of its series (`between`, may be empty; `cache_between`, the
    /// shared-cache readings among them, used only when [`Watch::with_cache`] was called).
    pub fn finish(
        self,
        between: &[ProbeSample],
        cache_between: &CacheTrail,
        limits: &Limits,
    ) -> Result<MachineState, MachineError> {
        let counters = Counters::read(self.counters.cpu)?;
        let interval_ns = u64::try_from(self.at.elapsed().as_nanos()).unwrap_or(u64::MAX);
        let probe = ProbeSample::take();
        let mut state = self.finish_with(probe, between, &counters, interval_ns, limits);
        if let Some(mut trail) = self.cache {
            trail.extend(cache_between);
            trail.take();
            add_cache(&mut state, &trail);
        }
        Ok(state)
    }

    /// The pure half of [`Watch::finish`]: the state from the end probe and counters.
    pub fn finish_with(
        &self,
        end: ProbeSample,
        between: &[ProbeSample],
        counters: &Counters,
        interval_ns: u64,
        limits: &Limits,
    ) -> MachineState {
        let beside = Beside::between(&self.counters, counters, interval_ns);
        let verdict = judge_series(&self.probe, between, &end, &beside, limits);
        let mut s = state::assemble(&self.probe, &end, &beside, verdict);
        s.between = state::between_range(between);
        s
    }
}

/// Record the shared-cache readings in `state` and judge their spread ([`CACHE_SPREAD`]).
pub fn add_cache(state: &mut MachineState, trail: &CacheTrail) {
    state.cache = trail.summary();
    let Some(clause) = state
        .cache
        .as_ref()
        .and_then(|c| cache::judge(c, CACHE_SPREAD))
    else {
        return;
    };
    state.stable = false;
    state.reason = Some(match state.reason.take() {
        Some(r) => format!("{r}; {clause}"),
        None => clause,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::machine::judge::DEFAULT_LIMITS;

    #[test]
    fn finish_with_judges_the_differences() {
        let stat =
            |busy: u64| format!("cpu  {busy} 0 0 100 0 0 0 0\ncpu1 {busy} 0 0 100 0 0 0 0\n");
        let status = "nonvoluntary_ctxt_switches:\t0\n";
        let a = Counters::from_text(1, &stat(0), status, "0 0 0", 0).expect("parses");
        let b = Counters::from_text(1, &stat(40), status, "0 0 3", 100_000_000).expect("parses");
        let probe = ProbeSample {
            core_ghz: 3.6,
            throughput: 14.0,
            syscall_ns: 230.0,
        };
        let w = Watch::from_parts(probe, a);
        assert_eq!(w.probe(), probe);
        // 400 ms busy, 100 ms of it the thread: 300 ms of 1 s by others.
        let s = w.finish_with(probe, &[], &b, 1_000_000_000, &DEFAULT_LIMITS);
        assert!(!s.stable);
        assert_eq!(
            s.reason.as_deref(),
            Some("other tasks ran 30% of the time on CPU 1")
        );
        let quiet = w.finish_with(probe, &[], &a, 1_000_000_000, &DEFAULT_LIMITS);
        assert!(quiet.stable && quiet.reason.is_none());
    }

    /// This thread pinned to the CPU it runs on and a watch started there; `None` (saying
    /// it skipped) where this thread cannot be pinned.
    fn pinned_watch() -> Option<(usize, Watch)> {
        let cpu = sysmeter_sys::sched::current_cpu().unwrap_or(0);
        if sysmeter_sys::sched::pin_current_thread(cpu).is_err() {
            eprintln!("skipped: cannot pin this thread");
            return None;
        }
        Some((cpu, Watch::start(cpu).expect("/proc is readable")))
    }

    #[test]
    fn a_real_watch_produces_a_state() {
        let Some((_, w)) = pinned_watch() else {
            return;
        };
        std::hint::black_box(sysmeter_sys::probe::mul_chain(1000, 3));
        let s = w
            .finish(&[], &CacheTrail::default(), &DEFAULT_LIMITS)
            .expect("/proc is readable");
        assert!(s.core_ghz_start > 0.0 && s.core_ghz_end > 0.0, "{s:?}");
        assert!(s.throughput_end > 0.0 && s.syscall_ns_end > 0.0, "{s:?}");
        // Stability itself depends on the machine's load: only its consistency is checked.
        assert_eq!(s.stable, s.reason.is_none(), "{s:?}");
    }

    /// The drift flag on a real interval: a thread spinning on the measuring CPU for the
    /// second half of it takes about half of that half from the measuring thread, far above
    /// every share limit, whatever else the machine is doing.
    #[test]
    fn a_spinner_on_the_measuring_cpu_makes_the_interval_unstable() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::time::{Duration, Instant};

        let Some((cpu, w)) = pinned_watch() else {
            return;
        };
        let busy_for = |d: Duration| {
            let t = Instant::now();
            while t.elapsed() < d {
                std::hint::black_box(sysmeter_sys::probe::mul_chain(100, 3));
            }
        };
        busy_for(Duration::from_millis(150));
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let spinner = std::thread::spawn(move || {
            let pinned = sysmeter_sys::sched::pin_current_thread(cpu).is_ok();
            while !flag.load(Ordering::Relaxed) {
                std::hint::black_box(sysmeter_sys::probe::mul_chain(100, 5));
            }
            pinned
        });
        busy_for(Duration::from_millis(300));
        stop.store(true, Ordering::Relaxed);
        let pinned = spinner.join().expect("the spinner does not panic");
        let s = w
            .finish(&[], &CacheTrail::default(), &DEFAULT_LIMITS)
            .expect("/proc is readable");
        assert!(pinned, "the spinner could be pinned to CPU {cpu}");
        assert!(!s.stable, "{s:?}");
        let reason = s.reason.unwrap_or_default();
        eprintln!("unstable as expected: {reason}");
        assert!(reason.contains(&format!("CPU {cpu}")), "{reason}");
        assert!(
            s.runqueue_wait_ns > 0 && s.involuntary_switches > 0,
            "{reason}"
        );
    }
}
