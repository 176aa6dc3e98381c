//! The events of an off-CPU profile (perf_event_open through perf-event2):
//! - `sched:sched_switch` on the target, sampled on every switch with the thread id, time,
//!   the user and kernel call chain, the raw record (for `prev_state`: blocked or preempted),
//!   the user registers and the top of the user stack (unwound into the whole user stack
//!   at every drain, see `unwind`); `context_switch` adds a record when the thread runs again,
//!   and `mmap2`/`comm`/`task` the side-band records that symbolisation needs. A launched
//!   command gets one inherited event per CPU (enabled at `execve`), an attached process one
//!   event per thread.
//! - `sched:sched_waking` system-wide, one event per CPU: who made a thread runnable (the
//!   waker is the current task, its stack is the sample's call chain).
//!
//! Traps (docs/kernel-traps.md): perf-event2 excludes the kernel unless `include_kernel`
//! (tracepoints then give no samples), and tracepoint ids come from tracefs, not debugfs.

use perf_event::{Builder, Sampler};

use super::raw::{OffRaw, Switches, Wakings};
use crate::diagnose::observe::pump::drain_ring;
use crate::diagnose::observe::rings::{stack_sampled, stack_sampled_format};
use crate::diagnose::observe::sampled::SampledError;
use crate::diagnose::observe::sampled::cpu_clock::{open_error, thread_event};
use crate::diagnose::observe::tracefs::EventFormat;

/// Ring buffer per CPU of a launched command's switch events: each switch carries a stack
/// copy of [`STACK_BYTES`], so 8 MiB hold ~2 000 switches per CPU between two drains
/// (100 000 a second), as many as the 1 MiB rings held with the earlier 512-byte copies.
const RING_BYTES: usize = 8 << 20;
/// Ring buffer per thread of an attached process (one event each): locked memory grows
/// with the threads, so ~250 switches per thread between two drains.
const THREAD_RING_BYTES: usize = 1 << 20;
/// Ring buffer per CPU for the system-wide wakings: every process's wake-ups land there, so
/// a busy machine fills them fastest (one ring per CPU, so this does not grow with threads).
const WAKING_RING_BYTES: usize = 4 << 20;
/// Bytes of user stack copied per switch of the target, for `observe::unwind`: a thread
/// blocks in a system call, whose stack up to `main` or the thread's start is rarely deeper
/// (the walks that needed more are counted). Every byte asked for takes ring space, used or
/// not, so a busy target's switches fill the rings in proportion.
pub const STACK_BYTES: u32 = 4 << 10;
/// Bytes copied per waking: wakings are sampled on the whole machine (a ping-pong elsewhere
/// makes 100 000 a second), and a waker's stack is shown for its first frames, the call
/// that woke; 1 KiB keeps ~3 700 per CPU ring.
pub const WAKING_STACK_BYTES: u32 = 1 << 10;

/// Tracepoint ids and field offsets read from tracefs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ids {
    /// `sched:sched_switch`.
    pub switch: u64,
    /// Offset of `long prev_state` in its raw record.
    pub prev_state: usize,
    /// `sched:sched_waking`.
    pub waking: u64,
    /// Offset of `pid_t pid` (the thread woken) in its raw record.
    pub woken_pid: usize,
}

/// Reads the ids from tracefs (mounted by `trace`'s probe when needed); `Err` says why
/// off-CPU profiling cannot run here and how to fix it.
pub fn ids() -> Result<Ids, String> {
    let base = crate::diagnose::observe::tracefs::holding("events/sched/sched_switch/id").ok_or(
        "tracefs with sched events is not mounted or not readable; run as root \
                 (`mount -t tracefs nodev /sys/kernel/tracing`)",
    )?;
    let read = |event: &str, field: &str| -> Result<(u64, usize), String> {
        let e = EventFormat::read(base, "sched", event).map_err(|e| format!("{e}; run as root"))?;
        let offset = e
            .offset(field)
            .ok_or_else(|| format!("{}/format has no field {field}", e.dir))?;
        Ok((e.id, offset))
    };
    let (switch, prev_state) = read("sched_switch", "prev_state")?;
    let (waking, woken_pid) = read("sched_waking", "pid")?;
    Ok(Ids {
        switch,
        prev_state,
        waking,
        woken_pid,
    })
}

fn switch_builder(id: u64) -> Builder<'static> {
    let mut b = stack_sampled(id, STACK_BYTES);
    b.context_switch(true)
        .mmap(true)
        .mmap2(true)
        .comm(true)
        .task(true);
    b
}

/// The open events: switch events on the target, waking events on every CPU.
pub struct OffEvents {
    ids: Ids,
    switches: Vec<Sampler>,
    wakings: Vec<Sampler>,
}

fn open(b: &Builder<'_>, bytes: usize, what: String) -> Result<Sampler, SampledError> {
    b.build()
        .and_then(|c| c.sampled(bytes))
        .map_err(|e| open_error(what, e))
}

impl OffEvents {
    /// Waking events on every CPU in `cpus` (enabled now) and no switch event yet.
    pub fn new(ids: Ids, cpus: &[usize]) -> Result<OffEvents, SampledError> {
        let mut wakings = Vec::with_capacity(cpus.len());
        for &cpu in cpus {
            let mut b = stack_sampled(ids.waking, WAKING_STACK_BYTES);
            b.any_pid().one_cpu(cpu);
            let mut s = open(&b, WAKING_RING_BYTES, format!("sched_waking on CPU {cpu}"))?;
            s.enable()
                .map_err(|e| open_error(format!("CPU {cpu}"), e))?;
            wakings.push(s);
        }
        Ok(OffEvents {
            ids,
            switches: Vec::new(),
            wakings,
        })
    }

    /// One inherited switch event per CPU on `pid`, enabled at its next `execve`.
    pub fn for_child(&mut self, pid: i32, cpus: &[usize]) -> Result<(), SampledError> {
        for &cpu in cpus {
            let mut b = switch_builder(self.ids.switch);
            b.observe_pid(pid)
                .one_cpu(cpu)
                .inherit(true)
                .enable_on_exec(true);
            let s = open(
                &b,
                RING_BYTES,
                format!("sched_switch of pid {pid} on CPU {cpu}"),
            )?;
            self.switches.push(s);
        }
        Ok(())
    }

    /// A switch event on thread `tid`, enabled now; `Ok(false)` when it has exited.
    pub fn add_thread(&mut self, tid: i32) -> Result<bool, SampledError> {
        let mut b = switch_builder(self.ids.switch);
        b.observe_pid(tid).any_cpu().inherit(false);
        let opened = b.build().and_then(|c| c.sampled(THREAD_RING_BYTES));
        let s = thread_event(opened, format!("sched_switch of thread {tid}"))?;
        let opened = s.is_some();
        self.switches.extend(s);
        Ok(opened)
    }

    /// Number of switch events.
    pub fn switch_events(&self) -> usize {
        self.switches.len()
    }

    /// Reads every ring into `raw`: switch records first, then the wakings of threads seen
    /// switching out (a thread always switches out before it is woken).
    pub fn drain(&mut self, raw: &mut OffRaw) {
        let format = stack_sampled_format();
        let prev_state = self.ids.prev_state;
        let mut switches = Switches { raw, prev_state };
        for s in &mut self.switches {
            drain_ring(s, format, &mut switches);
        }
        let woken_pid = self.ids.woken_pid;
        let mut wakings = Wakings { raw, woken_pid };
        for s in &mut self.wakings {
            drain_ring(s, format, &mut wakings);
        }
    }
}
