//! One ring buffer per CPU shared by every event opened on that CPU: the first event opened
//! on a CPU owns its ring, every later one writes into it (`PERF_EVENT_IOC_SET_OUTPUT`).
//! Inherited events opened with cpu = -1 cannot be mapped (docs/kernel-traps.md), so the
//! tracepoint backend of `trace` and the uprobes of `calls` both open per CPU and keep
//! their events here; enabling, disabling and draining the rings (as a [`Pump`] of
//! `observe::pump`, which knows what their samples carry) are the same for both.
//! The in-kernel backends' side-band events (mappings, execs, names; no samples) are opened
//! and drained here too.
//!
//! Depends on `perf_event` and `sysmeter_sys::tracepoint::set_output`.

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

use perf_event::events::Tracepoint;
use perf_event::{Builder, Clock, Counter, SampleFlag, Sampler};

use super::pump::{Handler, Pump, drain_all};
use super::records::{Format, RawData};
use super::unwind::REGS_MASK;

/// The events of one session, grouped by the CPU ring they write into.
pub(crate) struct PerCpuRings {
    /// One ring per CPU, owned by the first event opened on that CPU.
    rings: Vec<(usize, Sampler)>,
    /// Every other event; they write into their CPU's ring.
    others: Vec<Counter>,
    /// What the samples of every event carry.
    format: Format,
}

impl PerCpuRings {
    /// No events yet; every event will sample what `format` says.
    pub fn new(format: Format) -> PerCpuRings {
        PerCpuRings {
            rings: Vec::new(),
            others: Vec::new(),
            format,
        }
    }

    /// Keeps `counter`, opened on `cpu`: it becomes that CPU's ring (of `bytes`) when the CPU
    /// has none yet, else it writes into the existing one. Returns the ring's descriptor.
    pub fn attach(&mut self, cpu: usize, counter: Counter, bytes: usize) -> io::Result<RawFd> {
        if let Some((_, ring)) = self.rings.iter().find(|(c, _)| *c == cpu) {
            let fd = ring.as_raw_fd();
            self.redirect(counter, fd)?;
            return Ok(fd);
        }
        let ring = counter.sampled(bytes)?;
        let fd = ring.as_raw_fd();
        self.rings.push((cpu, ring));
        Ok(fd)
    }

    /// Keeps `counter`, writing into the ring `fd` (from [`PerCpuRings::attach`]).
    pub fn redirect(&mut self, counter: Counter, fd: RawFd) -> io::Result<()> {
        sysmeter_sys::tracepoint::set_output(counter.as_raw_fd(), fd)?;
        self.others.push(counter);
        Ok(())
    }

    /// Enables every event now.
    pub fn enable(&mut self) -> io::Result<()> {
        for (_, s) in &mut self.rings {
            s.as_counter_mut().enable()?;
        }
        self.others.iter_mut().try_for_each(|c| c.enable())
    }

    /// Disables every event (the targets are not affected).
    pub fn disable(&mut self) {
        for (_, s) in &mut self.rings {
            let _ = s.as_counter_mut().disable();
        }
        for c in &mut self.others {
            let _ = c.disable();
        }
    }
}

impl<H: Handler + ?Sized> Pump<H> for PerCpuRings {
    fn pump(&mut self, h: &mut H, last: bool) {
        drain_all(self.rings.iter_mut().map(|(_, s)| s), self.format, h, last);
    }

    fn stop(&mut self) {
        self.disable();
    }
}

/// Records of all rings merged by time before they are paired: a thread may enter on one
/// CPU's ring and leave on another's. Only records older than the previous drain are
/// released, so a record still being written to another ring cannot be passed over.
pub(crate) struct TimeMerge<E> {
    pending: Vec<E>,
    last_drain: i64,
}

impl<E> TimeMerge<E> {
    /// Nothing pending; the first drain releases what is older than now.
    pub fn new() -> TimeMerge<E> {
        TimeMerge {
            pending: Vec::new(),
            last_drain: sysmeter_sys::clock::clock_gettime_ns(
                sysmeter_sys::clock::ClockId::Monotonic,
            ),
        }
    }

    /// The records drained so far, to add to.
    pub fn pending(&mut self) -> &mut Vec<E> {
        &mut self.pending
    }

    /// Sorts what is pending by `time` and releases the records older than the previous
    /// drain (all of them with `all`); `started` is when this drain began.
    pub fn release(
        &mut self,
        all: bool,
        started: i64,
        time: impl Fn(&E) -> i64,
    ) -> std::vec::Drain<'_, E> {
        self.pending.sort_by_key(&time);
        let cut = if all {
            self.pending.len()
        } else {
            self.pending.partition_point(|e| time(e) < self.last_drain)
        };
        self.last_drain = started;
        self.pending.drain(..cut)
    }
}

/// The attributes of a tracepoint sampled on every hit with who and when, the call chain,
/// the raw record, the user registers and the top `stack` bytes of the user stack, which
/// `observe::unwind` turns into the whole user stack (`locks`' futex events, the off-CPU
/// switch and waking events). The kernel is included (perf-event2 excludes it by
/// default, which silences tracepoints); `sample_id_all` puts who and when on side-band
/// records too.
pub(crate) fn stack_sampled(id: u64, stack: u32) -> Builder<'static> {
    let mut b = Builder::new(Tracepoint::with_id(id));
    b.include_kernel()
        .sample_period(1)
        .sample(STACK_SAMPLED)
        .sample_regs_user(REGS_MASK)
        .sample_stack_user(stack)
        .sample_id_all(true);
    b
}

/// How [`stack_sampled`] samples are laid out.
pub(crate) fn stack_sampled_format() -> Format {
    Format::of(STACK_SAMPLED, REGS_MASK)
}

/// What [`stack_sampled`] events record.
pub(crate) const STACK_SAMPLED: SampleFlag = SampleFlag::TID
    .union(SampleFlag::TIME)
    .union(SampleFlag::CALLCHAIN)
    .union(SampleFlag::RAW)
    .union(SampleFlag::REGS_USER)
    .union(SampleFlag::STACK_USER);

/// How often every session drains its rings (`pump::run`).
pub(crate) const DRAIN_PERIOD: Duration = Duration::from_millis(10);

/// Where a paired tracer (`trace`, `calls`) opens its events: on which thread and CPU,
/// whether child processes inherit them (else new threads only), and whether they start at
/// the target's next exec.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Placement {
    /// The traced thread.
    pub tid: i32,
    /// The CPU this event counts on (one event per CPU, all writing into that CPU's ring).
    pub cpu: usize,
    /// Inherit into child processes too.
    pub follow_forks: bool,
    /// Enable at the target's next execve.
    pub enable_on_exec: bool,
}

/// One event that samples every hit of tracepoint `id` at `at` with its thread and time on
/// the monotonic clock (the clock paired entries and exits are timed with), inherited by new
/// threads; `extra` adds what the tracer records beyond TID and TIME. The kernel is
/// included (perf-event2 excludes it by default, which silences tracepoints).
pub(crate) fn paired_tracepoint(id: u64, at: Placement, extra: SampleFlag) -> io::Result<Counter> {
    let mut b = Builder::new(Tracepoint::with_id(id));
    b.observe_pid(at.tid)
        .one_cpu(at.cpu)
        .inherit(true)
        .inherit_thread(!at.follow_forks)
        .include_kernel()
        .sample_period(1)
        .sample(SampleFlag::TID | SampleFlag::TIME | extra)
        .clockid(Clock::MONOTONIC)
        .enable_on_exec(at.enable_on_exec);
    b.build()
}
/// The ring of one side-band event: mappings and names only, a few records per thread.
const SIDE_RING_BYTES: usize = 256 << 10;

/// The side-band event of launched process `pid` on `cpu`: inherited by its threads and
/// children, enabled by its execve (before it, it is sysmeter's gated child).
pub fn side_band_on_exec(pid: i32, cpu: usize) -> io::Result<Sampler> {
    let mut b = side_band();
    b.observe_pid(pid)
        .one_cpu(cpu)
        .inherit(true)
        .enable_on_exec(true);
    b.build().and_then(|c| c.sampled(SIDE_RING_BYTES))
}

/// The side-band event of thread `tid` of an attached process, on any CPU, not inherited
/// and not enabled yet.
pub fn side_band_of_thread(tid: i32) -> io::Result<Sampler> {
    let mut b = side_band();
    b.observe_pid(tid).any_cpu().inherit(false);
    b.build().and_then(|c| c.sampled(SIDE_RING_BYTES))
}

/// Reads the side-band records now in `events` into `raw`.
pub fn drain_side_band(events: &mut [Sampler], raw: &mut RawData) {
    drain_all(events, Format::default(), raw, false);
}

/// A software dummy event that samples nothing but brings the side-band records
/// (mappings, execs, names, forks) timed on CLOCK_MONOTONIC like `bpf_ktime_get_ns`: what
/// the in-kernel backends need to symbolise the stacks their maps hold.
fn side_band() -> Builder<'static> {
    let mut b = Builder::new(perf_event::events::Software::DUMMY);
    b.sample(SampleFlag::TID | SampleFlag::TIME)
        .sample_id_all(true)
        .clockid(Clock::MONOTONIC)
        .mmap(true)
        .mmap2(true)
        .comm(true)
        .task(true);
    b
}
