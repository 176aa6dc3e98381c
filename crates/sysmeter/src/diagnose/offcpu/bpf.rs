//! The in-kernel backend of the off-CPU profile (`--backend bpf`, docs/bpf.md): the BPF
//! programs of `crates/sysmeter/bpf/offcpu.bpf.c` on `sched_switch`, `sched_waking`,
//! `sched_process_fork` and `sched_process_exec` aggregate blocked time per (thread, stacks,
//! state, waker) in the kernel, filtered to the target's processes (children followed), so
//! no record per switch crosses to user space. A software dummy event per CPU (or per
//! thread of an attached process) still brings the side-band records (mappings, execs,
//! names) that symbolisation needs, timed on CLOCK_MONOTONIC like `bpf_ktime_get_ns`. The
//! live line reads the interval counter (one array lookup); at the end the maps are read
//! once and turned into the perf backend's records (`bpf_maps`), so the analysis, reports and
//! flame graphs are the same code.

use perf_event::Sampler;

use super::bpf_maps::{self, KEY_BYTES, Maps, SNAPSHOT_WORDS, SPAN_BYTES};
use super::raw::OffRaw;
use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::bpf::{BpfError, Field, Loaded, Snapshot, VALUE_WORDS, u32_at};
use crate::diagnose::observe::rings::{drain_side_band, side_band_of_thread, side_band_on_exec};
use crate::diagnose::observe::sampled::SampledError;
use crate::diagnose::observe::sampled::cpu_clock::{open_error, thread_event};
use crate::diagnose::observe::sampled::session::Extra;

/// The compiled programs (scripts/build-bpf.sh); aligned, or aya refuses the ELF.
static OBJECT: &[u8] = aya::include_bytes_aligned!("../../../bpf/offcpu.bpf.o");

/// The tracepoint fields the programs read (besides follow.h's).
const FIELDS: [Field; 3] = [
    ("off_prev_state", "sched", "sched_switch", "prev_state"),
    ("off_next_pid", "sched", "sched_switch", "next_pid"),
    ("off_waking_pid", "sched", "sched_waking", "pid"),
];

fn bpf_error(e: BpfError) -> SampledError {
    SampledError::PerfOpen {
        what: e.what,
        cause: std::io::Error::other(e.cause),
        hint: "use --backend perf".into(),
    }
}

/// Loads and attaches the programs; `Err` is one line saying why they cannot run here.
fn load() -> Result<Loaded, Reason> {
    let tracepoints = [("sched", "sched_switch"), ("sched", "sched_waking")];
    Loaded::attached("offcpu.bpf.o", OBJECT, &FIELDS, &tracepoints)
}

/// Why the in-kernel backend cannot run here (one line), or `Ok`: loads and unloads it.
pub fn available() -> Result<(), Reason> {
    load().map(drop)
}

/// The in-kernel backend as the session's [`Extra`]: the programs, the side-band events,
/// and what was read at the end.
pub struct BpfSession {
    loaded: Option<Loaded>,
    side: Vec<Sampler>,
    cpus: Vec<usize>,
    /// The records: side-band while running, everything after [`Extra::close`].
    pub raw: OffRaw,
    /// The maps read at the end (`None` before, or when reading failed).
    pub maps: Option<Maps>,
    /// Why reading the maps failed.
    pub read_error: Option<String>,
}

impl BpfSession {
    /// Loads the programs (nothing is a target yet); `Err` says why it cannot run here.
    pub fn new(cpus: Vec<usize>) -> Result<BpfSession, Reason> {
        Ok(BpfSession {
            loaded: Some(load()?),
            side: Vec::new(),
            cpus,
            raw: OffRaw::default(),
            maps: None,
            read_error: None,
        })
    }

    fn target(&mut self, map: &str, pid: i32) -> Result<(), SampledError> {
        match &mut self.loaded {
            Some(l) => l.insert(map, pid as u32, 1u8).map_err(bpf_error),
            None => Ok(()),
        }
    }
}

impl Extra for BpfSession {
    fn open_child(&mut self, pid: i32) -> Result<(), SampledError> {
        // A target from its execve on (before it, it is sysmeter's gated child).
        self.target("armed", pid)?;
        for &cpu in &self.cpus {
            let what = format!("side-band event of pid {pid} on CPU {cpu}");
            let s = side_band_on_exec(pid, cpu);
            self.side.push(s.map_err(|e| open_error(what, e))?);
        }
        Ok(())
    }

    fn add_thread(&mut self, tid: i32) -> Result<bool, SampledError> {
        // Keys are process ids; a thread id in the set matches nothing but costs nothing,
        // and the main thread's id is the process's.
        self.target("targets", tid)?;
        let what = format!("side-band event of thread {tid}");
        let s = thread_event(side_band_of_thread(tid), what)?;
        let opened = s.is_some();
        self.side.extend(s);
        Ok(opened)
    }

    fn drain(&mut self, _last: bool) {
        drain_side_band(&mut self.side, &mut self.raw.side);
    }

    fn close(&mut self) {
        self.side.clear();
        if let Some(mut l) = self.loaded.take() {
            match read(&mut l) {
                Ok(m) => self.maps = Some(m),
                Err(e) => self.read_error = Some(e.to_string()),
            }
            // Dropping `l` detaches and unloads the programs.
        }
    }

    fn live(&mut self) -> Option<u64> {
        let counters = self.loaded.as_mut()?.counters("counters").ok()?;
        counters.get(bpf_maps::slot::INTERVALS).copied()
    }
}

/// Reads every map the analysis needs.
fn read(l: &mut Loaded) -> Result<Maps, BpfError> {
    let blocked: Vec<([u8; KEY_BYTES], [u64; VALUE_WORDS])> = l.entries("blocked")?;
    let snapshots: Vec<([u8; 8], [u64; SNAPSHOT_WORDS])> = l.entries("snapshots")?;
    let spans: Vec<(u32, [u8; SPAN_BYTES])> = l.entries("spans")?;
    let starts: Vec<(u32, [u8; 32])> = l.entries("starts")?;
    let mut maps = Maps {
        blocked,
        snapshots: snapshots
            .into_iter()
            .map(|(k, v)| {
                (
                    (u32_at(&k, 0), u32_at(&k, 4) as i32),
                    Snapshot::from_words(&v),
                )
            })
            .collect(),
        spans,
        comms: l.entries("comms")?,
        // Entries stay while their thread runs (`on_cpu`, the last word of `struct start`).
        unfinished: starts.iter().filter(|(_, s)| u32_at(s, 28) == 0).count() as u64,
        counters: l.counters("counters")?,
        ..Maps::default()
    };
    maps.stacks = l.stacks("stacks", &maps.stack_ids())?;
    Ok(maps)
}

/// The records and intervals of a finished session; `Err` when the maps could not be read.
pub fn finish(s: &mut BpfSession) -> Result<super::blocks::Blocks, SampledError> {
    let maps = s.maps.as_ref().ok_or_else(|| SampledError::PerfOpen {
        what: "reading the BPF maps".into(),
        cause: std::io::Error::other(s.read_error.clone().unwrap_or_default()),
        hint: "use --backend perf".into(),
    })?;
    let blocks = bpf_maps::into_raw(maps, &mut s.raw);
    s.raw.wakings_read = maps.counter(bpf_maps::slot::WAKINGS);
    s.raw.closed_at_waking = maps.counter(bpf_maps::slot::CLOSED_AT_WAKING);
    // What could not be kept: intervals dropped (maps full, or a switch the kernel did not
    // report) and stacks missing.
    s.raw.side.lost += [
        bpf_maps::slot::KEYS_FULL,
        bpf_maps::slot::STARTS_FULL,
        bpf_maps::slot::USTACK_LOST,
        bpf_maps::slot::KSTACK_LOST,
        bpf_maps::slot::IN_MISSED,
        bpf_maps::slot::OUT_MISSED,
    ]
    .iter()
    .map(|&c| maps.counter(c))
    .sum::<u64>();
    Ok(blocks)
}
