//! Sampling with `perf_event_open` (perf-event2): the software CPU clock at a fixed
//! frequency, each sample carrying pid/tid, time, the kernel's frame-pointer call chain (its
//! kernel part is kept), the user registers and [`STACK_BYTES`] of the user stack (unwound
//! by `observe::unwind` at every drain, so the copies are never kept), plus the side-band
//! records that make offline symbolisation possible (MMAP2 for every executable mapping,
//! COMM with the exec flag, FORK). The opener of a sampling event ([`open_sampler`], its
//! errors with their hint in [`open_error`]) also serves `offcpu`'s tracepoint events and
//! `profile`'s overhead calibration.
//!
//! A launched command gets one event per CPU on its pid with `inherit` (the kernel refuses
//! to mmap an inherited per-task event, so `perf record`'s layout is the only one) and
//! `enable_on_exec`; an attached process gets one per-task event per thread. Kernel call
//! chains are asked for first and dropped when `perf_event_paranoid` forbids them. Nothing
//! here interprets addresses: see `maps` and `symbolize`.

use std::io;

use perf_event::events::Software;
use perf_event::{Builder, SampleFlag, Sampler};

use super::SampledError;
use crate::diagnose::observe::maps::MapEvent;
use crate::diagnose::observe::proc::online_cpus;
use crate::diagnose::observe::pump::drain_ring;
use crate::diagnose::observe::records::{Format, RawData};
use crate::diagnose::observe::unwind::{Live, REGS_MASK};

/// The open events and their ring buffers.
pub struct EventSet {
    samplers: Vec<Sampler>,
    /// Whether kernel frames are sampled (privileged or `perf_event_paranoid` ≤ 1).
    pub kernel: bool,
    frequency: u64,
    /// Unwinds the stack copies of every drain.
    live: Live,
}

/// Ring-buffer sizes tried per event, largest first: every sample carries a stack copy of
/// [`STACK_BYTES`], so a ring of 4 MiB holds ~250 of them (a quarter second at 999 Hz);
/// unprivileged users share a small locked-memory budget (`perf_event_mlock_kb`, 516 KiB
/// by default) across all events and get the smaller sizes, and lose samples sooner.
const RING_BYTES: [usize; 6] = [4 << 20, 2 << 20, 1 << 20, 512 << 10, 128 << 10, 64 << 10];

/// Bytes of user stack copied with every sample: enough for the whole stack of most
/// programs (the walks that needed more are counted, see the truncation finding); the copy
/// is the largest part of a sample's cost (docs/profiling.md, "Whole stacks").
pub const STACK_BYTES: u32 = 16 << 10;

/// What a CPU-clock sample carries.
const SAMPLED: SampleFlag = SampleFlag::IP
    .union(SampleFlag::TID)
    .union(SampleFlag::TIME)
    .union(SampleFlag::CALLCHAIN)
    .union(SampleFlag::REGS_USER)
    .union(SampleFlag::STACK_USER);

/// How the samples of a [`builder`] event are laid out (what `pump::drain_ring` parses by).
pub fn format() -> Format {
    Format::of(SAMPLED, REGS_MASK)
}

/// The CPU-clock sampling event at `frequency`, with kernel call chains when `kernel`.
pub fn builder(frequency: u64, kernel: bool) -> Builder<'static> {
    let mut b = Builder::new(Software::CPU_CLOCK);
    b.sample_frequency(frequency)
        .sample(SAMPLED)
        .sample_regs_user(REGS_MASK)
        .sample_stack_user(STACK_BYTES)
        .mmap(true)
        .mmap2(true)
        .comm(true)
        .task(true)
        .sample_id_all(true)
        .exclude_callchain_kernel(!kernel);
    if kernel {
        b.include_kernel();
    }
    b
}

/// Whether `e` is a refusal for lack of privilege (the kernel's call chains are then left
/// out and the event tried again).
pub fn is_permission(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EACCES) | Some(libc::EPERM))
}

/// What to do about an error of `perf_event_open` or its mmap.
fn hint_for(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => "run as root, or allow perf for users with \
             `sysctl kernel.perf_event_paranoid=2` (user space) or `=1` (with kernel); attaching \
             to another user's process needs root"
            .into(),
        Some(libc::ENOENT) | Some(libc::ENODEV) | Some(libc::EOPNOTSUPP) => {
            "this kernel has no software CPU-clock event; it needs CONFIG_PERF_EVENTS".into()
        }
        Some(libc::EINVAL) => "the frequency may exceed kernel.perf_event_max_sample_rate; \
             choose a lower -F"
            .into(),
        Some(libc::ESRCH) => "the process has exited".into(),
        Some(libc::ENOMEM) => "raise kernel.perf_event_mlock_kb or `ulimit -l`".into(),
        _ => "check `perf record` works on this machine".into(),
    }
}

/// The error of opening the event `what`, with the hint for `cause`.
pub fn open_error(what: String, cause: io::Error) -> SampledError {
    let hint = hint_for(&cause);
    SampledError::PerfOpen { what, cause, hint }
}

/// The event of one thread of an attached process (`what`, for errors), `opened` and now
/// enabled; `None` when the thread had already exited.
pub fn thread_event(
    opened: io::Result<Sampler>,
    what: String,
) -> Result<Option<Sampler>, SampledError> {
    match opened {
        Ok(mut s) => {
            s.enable().map_err(|e| open_error(what, e))?;
            Ok(Some(s))
        }
        Err(e) if e.raw_os_error() == Some(libc::ESRCH) => Ok(None),
        Err(e) => Err(open_error(what, e)),
    }
}

/// Builds the counter `b` describes and maps its ring buffer, trying
/// smaller buffers when locked memory is short.
pub fn open_sampler(b: &Builder<'_>) -> io::Result<Sampler> {
    let mut last = io::Error::other("no ring-buffer size was tried");
    for bytes in RING_BYTES {
        let counter = b.build()?;
        match counter.sampled(bytes) {
            Ok(s) => return Ok(s),
            Err(e) => last = e,
        }
    }
    Err(last)
}

impl EventSet {
    /// One inherited event per CPU on `pid`, enabled by the kernel at its next `execve`.
    pub fn for_child(pid: i32, frequency: u64) -> Result<EventSet, SampledError> {
        let cpus = online_cpus();
        let mut kernel = true;
        let mut samplers = Vec::with_capacity(cpus.len());
        for &cpu in &cpus {
            let what = format!("pid {pid} on CPU {cpu}");
            let mut b = builder(frequency, kernel);
            b.observe_pid(pid)
                .one_cpu(cpu)
                .inherit(true)
                .enable_on_exec(true);
            let sampler = match open_sampler(&b) {
                Err(e) if kernel && samplers.is_empty() && is_permission(&e) => {
                    // Kernel sampling is not allowed here: user space only.
                    kernel = false;
                    let mut b = builder(frequency, false);
                    b.observe_pid(pid)
                        .one_cpu(cpu)
                        .inherit(true)
                        .enable_on_exec(true);
                    open_sampler(&b).map_err(|e| open_error(what, e))?
                }
                other => other.map_err(|e| open_error(what, e))?,
            };
            samplers.push(sampler);
        }
        Ok(EventSet {
            samplers,
            kernel,
            frequency,
            live: Live::new(&[], STACK_BYTES),
        })
    }

    /// An empty set for attaching thread by thread ([`EventSet::add_thread`]) to a process
    /// that had `maps_at_start` mapped.
    pub fn for_attach(frequency: u64, maps_at_start: &[MapEvent]) -> EventSet {
        EventSet {
            samplers: Vec::new(),
            kernel: true,
            frequency,
            live: Live::new(maps_at_start, STACK_BYTES),
        }
    }

    /// One per-task event on thread `tid`, enabled at once. `Ok(false)` when the thread has
    /// already exited.
    pub fn add_thread(&mut self, tid: i32) -> Result<bool, SampledError> {
        let what = format!("thread {tid}");
        let open = |kernel: bool| {
            let mut b = builder(self.frequency, kernel);
            b.observe_pid(tid).any_cpu().inherit(false);
            open_sampler(&b)
        };
        let result = match open(self.kernel) {
            Err(e) if self.kernel && self.samplers.is_empty() && is_permission(&e) => {
                self.kernel = false;
                open(false)
            }
            other => other,
        };
        let s = thread_event(result, what)?;
        let opened = s.is_some();
        self.samplers.extend(s);
        Ok(opened)
    }

    /// Number of open events.
    pub fn len(&self) -> usize {
        self.samplers.len()
    }

    /// Whether no event is open.
    pub fn is_empty(&self) -> bool {
        self.samplers.is_empty()
    }

    /// Reads every record now in the ring buffers into `raw`, and unwinds the stacks read.
    pub fn drain(&mut self, raw: &mut RawData) {
        for s in &mut self.samplers {
            drain_ring(s, format(), raw);
        }
        raw.unwind_pending(&mut self.live);
    }
}

/// Opens (and closes) a sampling event on this process, as a launched child would need:
/// `Err` says why sampling is impossible here.
pub fn probe() -> Result<(), SampledError> {
    let mut b = builder(99, false);
    b.observe_self().any_cpu();
    open_sampler(&b)
        .map(drop)
        .map_err(|e| open_error("this process".to_string(), e))
}
