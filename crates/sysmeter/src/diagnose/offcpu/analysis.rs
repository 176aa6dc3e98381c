//! From records to the off-CPU profile: blocked intervals (`blocks`) weighted by their time
//! and symbolised by the floor's sampled stacks (`observe::sampled::aggregate`; `unwind` gave
//! them their whole user stacks while the rings were drained), grouped per distinct stack and
//! reason with their durations and wakers, and the time of each thread for `--both`.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::blocks::{self, Block, Blocks};
use super::classify::{Reason, classify, is_preempted};
use super::raw::{OffRaw, Switch};
use super::threads;
use crate::diagnose::observe::maps::MapEvent;
use crate::diagnose::observe::records::RawData;
use crate::diagnose::observe::sampled::aggregate::{Analysis, EachSample, analyse_each};
use crate::model::thread_stacks::ThreadStacks;

/// Wakers kept per stack.
const WAKERS_PER_STACK: usize = 3;

/// Who woke a thread, and how often / for how much blocked time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Waker {
    /// `thread 123 (comm)`, `kernel (interrupt/timer)`, `another process: comm`, or
    /// `not seen`.
    pub who: String,
    /// The waker's stack, outermost first (threads of the traced tree only).
    #[serde(default)]
    pub stack: Vec<String>,
    /// Wake-ups.
    pub count: u64,
    /// Blocked time these wake-ups ended, ns.
    pub blocked_ns: u64,
}

/// One distinct blocked stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockedStack {
    /// Frames, outermost first (kernel frames end in `_[k]`).
    pub frames: Vec<String>,
    /// The innermost user function (what the program called when it blocked).
    pub user_leaf: String,
    /// The innermost function outside the system libraries (libc, the dynamic loader,
    /// vDSO): the program's own code that waited; the user leaf when there is none.
    pub caller: String,
    /// Why it was off the CPU.
    pub reason: Reason,
    /// Total time off the CPU, ns.
    pub blocked_ns: u64,
    /// Times it went off the CPU here.
    pub count: u64,
    /// Each interval, ns (the distribution).
    #[serde(skip)]
    pub durations: Vec<f64>,
    /// The most frequent wakers by blocked time.
    pub wakers: Vec<Waker>,
}

/// Time of one thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThreadTime {
    /// Thread id.
    pub tid: u32,
    /// From its first to its last record (start to exit), ns.
    pub span_ns: u64,
    /// Off the CPU (complete intervals, preemptions included), ns.
    pub off_ns: u64,
}

/// The analysed off-CPU profile.
#[derive(Debug, Clone, Default)]
pub struct OffAnalysis {
    /// Stacks weighted by blocked ns (for flat profile, call graph, flame graph).
    pub analysis: Analysis,
    /// Stacks by blocked time, most first.
    pub stacks: Vec<BlockedStack>,
    /// Pairing counts.
    pub blocks: Blocks,
    /// Per reason: time and count, most time first.
    pub by_reason: Vec<(Reason, u64, u64)>,
    /// Per thread.
    pub threads: Vec<ThreadTime>,
    /// All blocked time, ns (preemptions excluded).
    pub total_ns: u64,
    /// Time runnable but preempted (waiting for a CPU) and how many times, ns.
    pub preempted: (u64, u64),
    /// Per thread, stack and reason, with the intervals (`model::thread_stacks`).
    pub per_thread: ThreadStacks,
}

/// Analyses `raw` (`maps_at_start`: mappings of an attached process; `seen`: other
/// `(tid, time)` observations of the threads, the on-CPU samples of `--both`).
pub fn analyse(raw: &OffRaw, maps_at_start: &[MapEvent], seen: &[(u32, u64)]) -> OffAnalysis {
    analyse_paired(raw, blocks::pair(raw), maps_at_start, seen, true)
}

/// [`analyse`] of intervals already paired (by `blocks::pair`, or read from the in-kernel
/// backend's maps); `timed`: each interval was recorded (the perf backend), so the
/// per-thread stacks keep them.
pub fn analyse_paired(
    raw: &OffRaw,
    all: Blocks,
    maps_at_start: &[MapEvent],
    seen: &[(u32, u64)],
    timed: bool,
) -> OffAnalysis {
    let preempted = |b: &&Block| is_preempted(raw.outs[b.out].arg);
    let (preempted_ns, preempted_count) = all
        .list
        .iter()
        .filter(preempted)
        .fold((0, 0), |(t, n), b| (t + b.ns, n + 1));
    let mut off_per_thread: HashMap<u32, u64> = HashMap::new();
    for b in &all.list {
        *off_per_thread.entry(raw.outs[b.out].tid).or_default() += b.ns;
    }
    let blocks = Blocks {
        list: all.list.iter().filter(|b| !preempted(b)).copied().collect(),
        ..all
    };
    let named = symbolise(raw, &blocks, maps_at_start);
    let stacks = group(raw, &blocks, &named);
    let per_thread = threads::off_cpu(raw, &blocks, (&named.analysis, &named.each), timed);
    let mut off = finish(raw, blocks, named.analysis, stacks, seen);
    off.per_thread = per_thread;
    off.preempted = (preempted_ns, preempted_count);
    for t in &mut off.threads {
        t.off_ns = off_per_thread.get(&t.tid).copied().unwrap_or(0);
    }
    off
}

/// The blocked intervals (weighted by their time) and the wakers' stacks (weight 0),
/// symbolised together.
struct Named {
    analysis: Analysis,
    /// Symbolised stack of each sample: the blocks first, in order, then the wakers.
    each: EachSample,
    /// Sample index of each waking used.
    waker_sample: HashMap<usize, usize>,
}

fn symbolise(raw: &OffRaw, blocks: &Blocks, maps_at_start: &[MapEvent]) -> Named {
    let mut data = RawData::default();
    data.maps.clone_from(&raw.side.maps);
    data.execs.clone_from(&raw.side.execs);
    data.forks.clone_from(&raw.side.forks);
    // The chains already hold the unwound user stacks (`unwind`, at every drain).
    let mut push = |s: &Switch, weight: u64| {
        data.push_weighted(s.pid, s.tid, s.time, &s.chain, weight);
    };
    for b in &blocks.list {
        push(&raw.outs[b.out], b.ns);
    }
    let mut waker_sample: HashMap<usize, usize> = HashMap::new();
    for w in blocks.list.iter().filter_map(|b| b.waker) {
        if !waker_sample.contains_key(&w) {
            push(&raw.wakings[w], 0);
            waker_sample.insert(w, blocks.list.len() + waker_sample.len());
        }
    }
    let (analysis, each) = analyse_each(&data, maps_at_start);
    Named {
        analysis,
        each,
        waker_sample,
    }
}

/// The blocked intervals per distinct stack and reason.
fn group(raw: &OffRaw, blocks: &Blocks, n: &Named) -> Vec<BlockedStack> {
    let analysis = &n.analysis;
    let names = |ids: &[u32]| -> Vec<String> {
        ids.iter()
            .map(|&f| analysis.stacks.frame(f).folded_name())
            .collect()
    };
    let mut groups: HashMap<(Vec<u32>, Reason), BlockedStack> = HashMap::new();
    for (i, b) in blocks.list.iter().enumerate() {
        let ids = &n.each.stacks[i];
        let kernel = ids
            .iter()
            .map(|&f| analysis.stacks.frame(f))
            .filter(|f| f.kernel);
        let kernel: Vec<&str> = kernel.map(|f| f.name.as_str()).collect();
        let reason = classify(kernel, raw.outs[b.out].arg);
        let entry = groups
            .entry((ids.clone(), reason))
            .or_insert_with(|| BlockedStack {
                frames: names(ids),
                user_leaf: user_leaf(analysis, ids),
                caller: caller(analysis, ids),
                reason,
                blocked_ns: 0,
                count: 0,
                durations: Vec::new(),
                wakers: Vec::new(),
            });
        entry.blocked_ns += b.ns;
        entry.count += 1;
        entry.durations.push(b.ns as f64);
        let waker = describe_waker(raw, b.waker, &n.waker_sample, &n.each.stacks, &names);
        add_waker(&mut entry.wakers, waker, b.ns);
    }
    groups.into_values().collect()
}

fn user_leaf(analysis: &Analysis, ids: &[u32]) -> String {
    ids.iter()
        .rev()
        .map(|&f| analysis.stacks.frame(f))
        .find(|f| !f.kernel)
        .map_or_else(|| "[kernel thread]".to_string(), |f| f.name.clone())
}

/// Whether a module is a system library rather than the program's code.
fn system_module(module: &str) -> bool {
    module.starts_with("libc.so")
        || module.starts_with("libpthread")
        || module.starts_with("ld-linux")
        || module.starts_with("libstdc++")
        || module.starts_with('[')
        || module.is_empty()
}

fn caller(analysis: &Analysis, ids: &[u32]) -> String {
    ids.iter()
        .rev()
        .map(|&f| analysis.stacks.frame(f))
        .find(|f| !f.kernel && !system_module(&f.module))
        .map_or_else(|| user_leaf(analysis, ids), |f| f.name.clone())
}

/// Kernel frames that mean the wake-up came from an interrupt, a timer or a softirq.
fn from_interrupt(chain_names: &[String]) -> bool {
    chain_names.iter().any(|n| {
        n.contains("irq")
            || n.contains("sysvec")
            || n.contains("hrtimer_wakeup")
            || n.contains("apic_timer")
    })
}

fn describe_waker(
    raw: &OffRaw,
    waker: Option<usize>,
    samples: &HashMap<usize, usize>,
    each: &[Vec<u32>],
    names: &dyn Fn(&[u32]) -> Vec<String>,
) -> Waker {
    let mut who = Waker {
        who: "not seen".into(),
        stack: Vec::new(),
        count: 1,
        blocked_ns: 0,
    };
    let Some(w) = waker.map(|i| &raw.wakings[i]) else {
        return who;
    };
    let stack = waker
        .and_then(|i| samples.get(&i))
        .map(|&s| names(&each[s]));
    let comm = |pid: u32| raw.comm(pid);
    let stack = stack.unwrap_or_default();
    who.who = if w.pid == 0 || from_interrupt(&stack) {
        "kernel (interrupt/timer)".into()
    } else if raw.tids.contains(&w.tid) {
        who.stack = stack;
        format!("thread {} ({})", w.tid, comm(w.pid))
    } else {
        format!("another process: {}", comm(w.pid))
    };
    who
}

fn add_waker(list: &mut Vec<Waker>, w: Waker, ns: u64) {
    match list
        .iter_mut()
        .find(|x| x.who == w.who && x.stack == w.stack)
    {
        Some(x) => {
            x.count += 1;
            x.blocked_ns += ns;
        }
        None => list.push(Waker {
            blocked_ns: ns,
            ..w
        }),
    }
}

fn finish(
    raw: &OffRaw,
    blocks: Blocks,
    analysis: Analysis,
    mut stacks: Vec<BlockedStack>,
    seen: &[(u32, u64)],
) -> OffAnalysis {
    stacks.sort_by(|a, b| {
        b.blocked_ns
            .cmp(&a.blocked_ns)
            .then(a.frames.cmp(&b.frames))
    });
    let mut reasons: HashMap<Reason, (u64, u64)> = HashMap::new();
    for s in &mut stacks {
        s.wakers
            .sort_by(|a, b| b.blocked_ns.cmp(&a.blocked_ns).then(a.who.cmp(&b.who)));
        s.wakers.truncate(WAKERS_PER_STACK);
        let r = reasons.entry(s.reason).or_default();
        r.0 += s.blocked_ns;
        r.1 += s.count;
    }
    let mut by_reason: Vec<(Reason, u64, u64)> =
        reasons.into_iter().map(|(r, (t, c))| (r, t, c)).collect();
    by_reason.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut off: HashMap<u32, u64> = HashMap::new();
    for b in &blocks.list {
        *off.entry(raw.outs[b.out].tid).or_default() += b.ns;
    }
    let mut threads: Vec<ThreadTime> = blocks::spans(raw, seen)
        .into_iter()
        .map(|(tid, (a, b))| ThreadTime {
            tid,
            span_ns: b - a,
            off_ns: off.get(&tid).copied().unwrap_or(0),
        })
        .collect();
    threads.sort_by_key(|t| t.tid);
    OffAnalysis {
        total_ns: blocks.list.iter().map(|b| b.ns).sum(),
        analysis,
        stacks,
        blocks,
        by_reason,
        threads,
        preempted: (0, 0),
        per_thread: ThreadStacks::default(),
    }
}
