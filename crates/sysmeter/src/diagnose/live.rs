//! `sysmeter live`: a running program watched as it runs. One sampled session of the floor
//! (`observe::sampled::session::record_live`: CPU-clock samples with whole stacks, a
//! launched command or every thread of a running process) is read after every drain; once
//! a second its new samples are named (one symbolizer kept for the whole session, so each
//! file's symbols are read once) and added to the [`window`] with each thread's CPU and
//! run-queue time ([`threads`]), the system calls counted in the kernel (a
//! [`CallCounter`] handed in by the command: `trace`'s in-kernel backend) and sysmeter's
//! own CPU time. Readers (the command's HTTP server) take a [`view`] of any window through
//! [`Live`] without stopping the session, and a window as the named samples a profile is
//! drawn from ([`Live::window`]). The samples themselves are dropped once named: memory is
//! the window's aggregation, not every sample.
//!
//! Depends on `observe` (the sampled session, symbols, the session's end) and `model::live`;
//! never on another diagnosis.

pub mod threads;
pub mod view;
pub mod window;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub use crate::diagnose::observe::call_counter::CallCounter;
use crate::diagnose::observe::maps::{MapEvent, parse_proc_maps};
use crate::diagnose::observe::overhead::{CpuOf, cpu_ns};
use crate::diagnose::observe::records::RawData;
use crate::diagnose::observe::sampled::SampledError;
use crate::diagnose::observe::sampled::aggregate::{Analysis, analyse_each_with};
use crate::diagnose::observe::sampled::session::{
    self, NoExtra, Recording, Sampled, Sampling, record_live,
};
use crate::diagnose::observe::session::Ended;
use crate::diagnose::observe::symbolize::Symbols;
use crate::diagnose::observe::target::Target;
use crate::model::live::LiveView;
use threads::ThreadClock;
use window::{Second, Window};

/// How often the window takes a new second.
pub const TICK: Duration = Duration::from_secs(1);

/// What the session's readers share.
#[derive(Debug)]
pub struct Live {
    state: Mutex<State>,
}

/// The shared state: the window and how the session stands.
#[derive(Debug)]
pub struct State {
    /// What the session has seen.
    pub window: Window,
    /// A frozen copy of the window while the view is paused.
    pub frozen: Option<Window>,
    /// How the program ended, once it did.
    pub ended: Option<String>,
    /// When observing began.
    pub started: Instant,
    /// What is observed, as the view names it.
    pub target: String,
    /// CPU-clock samples per second of CPU time per thread.
    pub frequency: u64,
    /// What this session cannot see, one sentence each.
    pub unseen: Vec<String>,
}

impl Live {
    /// The shared state of a session observing `target` at `frequency` Hz.
    pub fn new(target: &Target, frequency: u64, unseen: Vec<String>) -> Live {
        Live {
            state: Mutex::new(State {
                window: Window::default(),
                frozen: None,
                ended: None,
                started: Instant::now(),
                target: crate::model::live::shown(&target.describe()),
                frequency,
                unseen,
            }),
        }
    }

    /// The state, also after a reader panicked while holding it (it holds plain data).
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The view of the last `span` seconds (`None`: since the start), frozen while paused.
    pub fn view(&self, span: Option<u64>) -> LiveView {
        let s = self.lock();
        let w = s.frozen.as_ref().unwrap_or(&s.window);
        LiveView {
            target: s.target.clone(),
            elapsed_s: s.started.elapsed().as_secs_f64(),
            paused: s.frozen.is_some(),
            ended: s.ended.clone(),
            frequency: s.frequency,
            unseen: s.unseen.clone(),
            ..view::build(w, span)
        }
    }

    /// Freezes the view (`true`) or lets it follow the session again.
    pub fn pause(&self, paused: bool) {
        let mut s = self.lock();
        s.frozen = paused.then(|| s.window.clone());
    }

    /// The last whole second of the session, and whether it ended.
    pub fn now(&self) -> (u64, bool) {
        let s = self.lock();
        (s.window.now(), s.ended.is_some())
    }

    /// The samples of the last `span` seconds (`None`: since the start), or with `after`
    /// of the seconds after that one, named, with the recording a profile of them is drawn
    /// from (its wall and own CPU time those of the window).
    pub fn window(&self, span: Option<u64>, after: Option<u64>) -> (Recording, Analysis) {
        let s = self.lock();
        let w = &s.window;
        let seconds: Vec<&Second> = match after {
            Some(t) => w.after(t).collect(),
            None => w.last(span).collect(),
        };
        let analysis = match (span, after) {
            (None, None) => w.analysis(None),
            _ => w.analysis_of_seconds(seconds.iter().copied()),
        };
        let wall_ns = match (span, after) {
            (None, None) => s.started.elapsed().as_nanos() as u64,
            _ => seconds.iter().map(|s| s.length_ns).sum(),
        };
        let own: u64 = seconds.iter().map(|s| s.own_cpu_ns).sum();
        let cpu: u64 = seconds
            .iter()
            .flat_map(|s| &s.threads)
            .map(|t| t.cpu_ns)
            .sum();
        let mut raw = RawData::default();
        raw.lost = w.lost;
        let data = Sampled {
            raw,
            kernel: w.kernel(),
            frequency: s.frequency,
            target_cpu_ns: Some(cpu),
            events: 0,
        };
        let rec = Recording::launched(data, None, Ended::Duration, (wall_ns, own));
        (rec, analysis)
    }
}

/// Observes `target` until it ends or Ctrl-C, filling `live` once a second; `counter`
/// counts the system calls where the kernel may (`None`: not counted).
pub fn observe(
    target: &Target,
    sampling: &Sampling,
    live: &Live,
    counter: Option<Box<dyn CallCounter>>,
) -> Result<session::Recording, SampledError> {
    live.lock().started = Instant::now();
    let mut reader = Reader::new(target, counter);
    let mut each = |raw: &mut RawData, last: bool| reader.drained(raw, last, live);
    let mut quiet = |_: u64, _: Duration| {};
    let mut extra = NoExtra;
    let rec = record_live(target, sampling, (&mut extra, Some(&mut each)), &mut quiet)?;
    live.lock().ended = Some(ending(&rec));
    Ok(rec)
}

/// How a session's program ended, in words.
fn ending(rec: &session::Recording) -> String {
    match (&rec.exit, rec.stop) {
        (Some((exit, _)), _) => match (exit.code(), exit.signal()) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => "ended".to_string(),
        },
        (None, Ended::Interrupted) => "observing stopped (Ctrl-C)".to_string(),
        (None, _) => "the process ended".to_string(),
    }
}

/// What the session's reader keeps between drains.
struct Reader {
    /// The observed process (a launched command's: from its exec, at the first second).
    pid: Option<i32>,
    maps_at_start: Vec<MapEvent>,
    symbols: Symbols,
    clock: ThreadClock,
    counter: Option<Box<dyn CallCounter>>,
    counted: HashMap<String, u64>,
    started: Instant,
    last_tick: Instant,
    own_cpu: f64,
}

impl Reader {
    fn new(target: &Target, counter: Option<Box<dyn CallCounter>>) -> Reader {
        let pid = target.pid();
        let maps_at_start = pid
            .and_then(|p| std::fs::read_to_string(format!("/proc/{p}/maps")).ok())
            .map(|text| parse_proc_maps(pid.unwrap_or(0) as u32, &text))
            .unwrap_or_default();
        let mut reader = Reader {
            pid,
            maps_at_start,
            symbols: Symbols::new(),
            clock: ThreadClock::default(),
            counter,
            counted: HashMap::new(),
            started: Instant::now(),
            last_tick: Instant::now(),
            own_cpu: cpu_ns(CpuOf::Process),
        };
        reader.targeted();
        reader
    }

    /// Starts counting the calls of the process once it is known.
    fn targeted(&mut self) {
        if let (Some(pid), Some(c)) = (self.pid, self.counter.as_mut()) {
            c.target(pid);
        }
    }

    /// After a drain: once a second (and at the last drain) a new second of the window.
    fn drained(&mut self, raw: &mut RawData, last: bool, live: &Live) {
        if self.pid.is_none()
            && let Some(exec) = raw.execs.first()
        {
            self.pid = Some(exec.pid as i32);
            self.targeted();
        }
        if self.last_tick.elapsed() < TICK && !last {
            return;
        }
        let length_ns = self.last_tick.elapsed().as_nanos() as u64;
        self.last_tick = Instant::now();
        let (analysis, _) = analyse_each_with(raw, &self.maps_at_start, &self.symbols);
        raw.samples.clear();
        let (threads, names) = self.pid.map(|p| self.clock.tick(p)).unwrap_or_default();
        let syscalls = self.syscalls();
        let own = cpu_ns(CpuOf::Process);
        let second = Second {
            t: self.started.elapsed().as_secs_f64().round() as u64,
            length_ns,
            threads,
            syscalls_counted: self.counter.is_some(),
            syscalls,
            own_cpu_ns: (own - self.own_cpu).max(0.0) as u64,
            ..Second::default()
        };
        self.own_cpu = own;
        let mut s = live.lock();
        s.window.lost = raw.lost;
        s.window.names.extend(names);
        s.window.push(&analysis, second);
    }

    /// The calls of each name in the last second.
    fn syscalls(&mut self) -> HashMap<String, u64> {
        let Some(c) = self.counter.as_mut() else {
            return HashMap::new();
        };
        let now = c.read();
        let diff = now
            .iter()
            .filter_map(|(name, &n)| {
                let d = n.saturating_sub(self.counted.get(name).copied().unwrap_or(0));
                (d > 0).then(|| (name.clone(), d))
            })
            .collect();
        self.counted = now;
        diff
    }
}
