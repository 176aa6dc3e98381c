//! `sysmeter alloc`: a heap profile. For a launched, dynamically linked program, the
//! preload library that `calls` also uses (injected by `observe::inject`) interposes malloc,
//! calloc, realloc, free, posix_memalign, aligned_alloc, memalign, valloc, pvalloc and
//! anonymous mmap/munmap when `SYSMETER_ALLOC_SHM` names the run's region; per call stack
//! and process it counts allocations, bytes, frees and temporary allocations, and per
//! process the live and peak bytes ([`region`]). While the command runs, the live heap is
//! sampled from the region beside the RSS from /proc; when it ends the stacks are named
//! ([`names`]) and the result built ([`result`]). Where the library cannot go (`-p PID`, a
//! static or setuid program) the uprobe fallback ([`uprobe`]) fills the same [`Outcome`].
//! docs/alloc.md.
//!
//! Depends on `model`, `diagnose::observe` and sysmeter-sys; never on another diagnosis.

pub mod images;
pub mod names;
pub mod region;
pub mod result;
pub mod uprobe;

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::path::Path;
use std::time::Duration;

use crate::diagnose::observe::backend::{self, Reason, Request};
use crate::diagnose::observe::error::{ObserveError, resolve_program};
use crate::diagnose::observe::not_entered::{self, NotEntered};
use crate::diagnose::observe::session::{CommandState, Stopped, Watch};
use crate::diagnose::observe::target::Target;
use crate::diagnose::observe::{self, inject};
use crate::model::ExperimentResult;

/// What to run and how.
#[derive(Debug, Clone)]
pub struct AllocConfig {
    /// The command to launch, or the process to attach to (uprobes).
    pub target: Target,
    /// Count forked children (and what they exec) too.
    pub follow_forks: bool,
    /// Stop observing after this long (the command keeps running).
    pub duration: Option<Duration>,
    /// Walk stacks by frame pointers instead of the unwind tables.
    pub frame_pointers: bool,
    /// `--backend`.
    pub backend: Request<Backend>,
}

/// Why `alloc` could not run.
#[derive(Debug, thiserror::Error)]
pub enum AllocError {
    /// The target could not be started or read.
    #[error(transparent)]
    Target(#[from] ObserveError),
    /// The library cannot be loaded into this program (a usage error).
    #[error("cannot profile the heap of this program: {0}")]
    Refused(String),
    /// The kernel refused the uprobe backend's programs or maps.
    #[error("the uprobe backend failed: {0}")]
    Bpf(String),
}

impl AllocError {
    /// Bad input (exit 2).
    pub fn is_usage(&self) -> bool {
        match self {
            AllocError::Refused(_) => true,
            AllocError::Target(e) => e.is_usage(),
            AllocError::Bpf(_) => false,
        }
    }
    /// 126/127 for a command that cannot run.
    pub fn exit_code(&self) -> Option<u8> {
        match self {
            AllocError::Target(e) => e.exit_code(),
            AllocError::Refused(_) | AllocError::Bpf(_) => None,
        }
    }
}

/// One reading while the command ran.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// ns since the library started in the launched process.
    pub t_ns: f64,
    /// Bytes live on the heap (as the hooks count them).
    pub live: f64,
    /// Resident set size, bytes (from /proc).
    pub rss: f64,
}

/// Everything a run left: the region's contents, the samples, how it ended.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Header counts.
    pub header: region::Header,
    /// Process images (only the launched one's without `-f`).
    pub procs: Vec<region::Proc>,
    /// The stacks that have counters, by index.
    pub stacks: HashMap<usize, region::Stack>,
    /// Per (process record index, stack index): its counters (non-zero only).
    pub counters: Vec<(usize, usize, region::Counters)>,
    /// The live heap and RSS over time, of the launched process.
    pub samples: Vec<Sample>,
    /// The launched process.
    pub pid: u32,
    /// How the session ended: why, the command's fate, what observing took and the
    /// records not kept (the last two filled in once the result counted them).
    pub session: Stopped,
    /// How the allocations were seen.
    pub mechanism: Mechanism,
    /// The programs exec'd by a counted process that the library could not enter.
    pub not_entered: NotEntered,
}

observe::backend::backends! {
    /// How a run sees the allocations (`--backend`; `auto` takes the preload library where it
    /// can go).
    pub enum Backend {
        /// The preload library's hooks, in the process.
        Preload = "preload",
            "the preload library's hooks in the launched process (a dynamically linked \
             program; no root)";
        /// Uprobes and BPF programs in the kernel ([`uprobe`]).
        Uprobes = "uprobes",
            "uprobes and BPF programs on the allocation functions (root or CAP_BPF + \
             CAP_PERFMON; -p, static and setuid programs)";
    }
    auto "The preload library where it can go (a launched, dynamically linked program), else \
          uprobes":
        Preload because "a launched, dynamically linked program takes the preload library",
        else Uprobes;
}

/// How a run saw the allocations: the [`Backend`] that ran, with what the uprobe backend
/// probed and counted.
#[derive(Debug, Clone, Default)]
pub enum Mechanism {
    /// The preload library's hooks, in the process.
    #[default]
    Preload,
    /// Uprobes and BPF programs in the kernel ([`uprobe`]).
    Uprobes(Box<Uprobes>),
}

/// What the uprobe backend probed and what it could not keep.
#[derive(Debug, Clone, Default)]
pub struct Uprobes {
    /// The file whose allocation functions were probed.
    pub file: String,
    /// A running process was attached to (`-p`): what it allocated before is not seen.
    pub attached: bool,
    /// `--backend uprobes` asked for it (not `auto`'s fallback).
    pub asked: bool,
    /// The kernel's counters.
    pub stats: uprobe::maps::Stats,
    /// With `-p`: the process exited this long into the session.
    pub exited_after_ns: Option<u64>,
}

impl Mechanism {
    /// The uprobe backend on `file` (`attached`: `-p`).
    pub fn uprobes(file: &Path, attached: bool) -> Mechanism {
        Mechanism::Uprobes(Box::new(Uprobes {
            file: file.display().to_string(),
            attached,
            ..Uprobes::default()
        }))
    }

    /// Records the kernel's counters, when an attached process exited, and whether
    /// `--backend uprobes` asked for the backend.
    pub fn set_stats(
        &mut self,
        stats: uprobe::maps::Stats,
        exited_after_ns: Option<u64>,
        asked: bool,
    ) {
        if let Mechanism::Uprobes(u) = self {
            u.stats = stats;
            u.exited_after_ns = exited_after_ns;
            u.asked = asked;
        }
    }

    /// The backend that ran.
    pub fn backend(&self) -> Backend {
        match self {
            Mechanism::Preload => Backend::Preload,
            Mechanism::Uprobes(_) => Backend::Uprobes,
        }
    }

    /// The uprobe backend's details, if it ran.
    pub fn uprobes_used(&self) -> Option<&Uprobes> {
        match self {
            Mechanism::Uprobes(u) => Some(u),
            Mechanism::Preload => None,
        }
    }
}

/// The result of a run and the command's fate.
#[derive(Debug)]
pub struct AllocOutput {
    /// The `alloc` result.
    pub result: ExperimentResult,
    /// How the command ended.
    pub command: CommandState,
}

fn read_procs(shm: &File) -> Result<(region::Header, Vec<region::Proc>), ObserveError> {
    let head = inject::read_at(shm, 0, 64)?;
    let header = region::parse_header(&head).unwrap_or_default();
    let b = inject::read_at(
        shm,
        region::PROCS_AT as u64,
        region::procs_len(header.procs),
    )?;
    Ok((header, region::parse_procs(&b, header.procs)))
}

/// The stacks and counters of `procs`.
fn read_sites(shm: &File, out: &mut Outcome) -> Result<(), ObserveError> {
    let table = inject::read_at(shm, region::STACKS_AT as u64, region::STACKS_LEN)?;
    for p in &out.procs {
        let at = region::SITES_AT + p.index * region::SITES_LEN;
        let b = inject::read_at(shm, at as u64, region::SITES_LEN)?;
        for i in 0..region::STACKS {
            let c = region::parse_counters(&b, i);
            if c.allocs == 0 && c.frees == 0 {
                continue;
            }
            out.counters.push((p.index, i, c));
            if let Some(s) = region::parse_stack(&table, i) {
                out.stacks.entry(i).or_insert(s);
            }
        }
    }
    Ok(())
}

/// The resident set size of `pid` in bytes (0 once it is gone).
fn rss(pid: u32) -> f64 {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * sysmeter_sys::memory::page_size() as f64
}

/// One sample of the launched process's live heap (from its record) and RSS.
fn sample(shm: &File, pid: u32, samples: &mut Vec<Sample>) {
    let Ok((_, procs)) = read_procs(shm) else {
        return;
    };
    let Some(p) = region::launched(&procs, pid) else {
        return;
    };
    let now = sysmeter_sys::clock::clock_gettime_ns(sysmeter_sys::clock::ClockId::Monotonic);
    let rss = rss(pid);
    if rss > 0.0 {
        samples.push(Sample {
            t_ns: (now as f64 - p.start_ns as f64).max(0.0),
            live: p.heap.live as f64,
            rss,
        });
    }
}

/// Launches `argv` with the library and reads the region when it ends (or Ctrl-C, or
/// `--duration`).
pub fn run(cfg: &AllocConfig, argv: &[OsString]) -> Result<(Outcome, Option<f64>), AllocError> {
    let (lib, shm) = inject::library_and_region(
        c"sysmeter-alloc-region",
        region::SIZE as u64,
        &region::header(),
    )?;
    let mut extra = vec![("SYSMETER_ALLOC_SHM".to_string(), inject::path_of(&shm))];
    if cfg.frame_pointers {
        extra.push(("SYSMETER_ALLOC_UNWIND".into(), "fp".into()));
    }
    if cfg.follow_forks {
        // Without it the library counts only the launched process and the images it execs.
        extra.push(("SYSMETER_ALLOC_FOLLOW".into(), "1".into()));
    }
    let env = inject::environment(&lib, &["SYSMETER_ALLOC_"], &extra);
    let mut child = inject::launch(argv, &env)?;
    let pid = child.pid() as u32;
    let mut samples = Vec::new();
    let (ended, waited) =
        inject::watch(&mut child, cfg.duration, || sample(&shm, pid, &mut samples))?;
    let (header, mut procs) = read_procs(&shm)?;
    let not_entered = not_entered::read(&shm, |p| cfg.follow_forks || p == pid)?;
    if !cfg.follow_forks {
        // Without -f only the launched process counts (its exec'd images keep its pid).
        procs.retain(|p| p.pid == pid && !p.forked);
    }
    let cpu = waited.map(|(_, u)| (u.user_ns + u.system_ns) as f64);
    let mut out = Outcome {
        header,
        procs,
        samples,
        pid,
        session: Stopped::new(ended, CommandState::NotLaunched),
        not_entered,
        ..Outcome::default()
    };
    read_sites(&shm, &mut out)?;
    out.session.command = match waited {
        Some((x, _)) => CommandState::Exited(x.shell_code()),
        None => CommandState::StillRunning(inject::still_running(child, lib, shm)),
    };
    Ok((out, cpu))
}

/// Why the preload library cannot go into `cfg`'s target, if it cannot: the preferred
/// backend's availability check.
fn cannot_preload(target: &Target) -> Result<Option<String>, AllocError> {
    Ok(match target {
        Target::Attach(_) => Some(
            "a running process (-p) cannot take the preload library (it is loaded at exec)".into(),
        ),
        Target::Launch(argv) => inject::cannot_preload(&resolve_program(&argv[0])?)
            .map(|why| format!("{why}, so the allocation hooks cannot be preloaded")),
    })
}

/// The backend for `cfg`'s target (`backend::choose`): the preload library where it can go,
/// else uprobes (where they may run; else the refusal says both reasons).
fn observe(
    cfg: &AllocConfig,
    say: &mut dyn FnMut(&str),
) -> Result<(Outcome, Option<f64>), AllocError> {
    let cannot = cannot_preload(&cfg.target)?;
    let check = || cannot.clone().map_or(Ok(()), |why| Err(Reason(why)));
    let chosen =
        backend::choose(cfg.backend, check).map_err(|no| AllocError::Refused(no.to_string()))?;
    if let (Backend::Preload, Target::Launch(argv)) = (chosen.backend, &cfg.target) {
        return run(cfg, argv);
    }
    let asked = cfg.backend != Request::Auto;
    if let (false, Target::Launch(_), Some(why), Some(no)) =
        (asked, &cfg.target, &cannot, uprobe::unavailable())
    {
        return Err(AllocError::Refused(format!(
            "{why}, and the uprobe fallback cannot run here: {no} (docs/alloc.md)"
        )));
    }
    uprobe::run(&cfg.target, (cfg.duration, asked), say)
}

/// `sysmeter alloc`: observe the target, then build the result (`cpu_ns`: the command's CPU
/// time, for the share of it the allocations cost); `say` hears what the uprobe backend
/// attached to.
pub fn alloc(
    cfg: &AllocConfig,
    say: &mut dyn FnMut(&str),
) -> Result<(AllocOutput, Option<f64>), AllocError> {
    let watch = Watch::start();
    let (mut out, cpu) = observe(cfg, say)?;
    let target = cfg.target.text();
    let sites = names::name_sites(&out);
    let mut result = result::build(&target, &out, &sites);
    // What was not kept is counted by the `lost` finding (its value: how many).
    let lost = result.findings.iter().find(|f| f.key == "lost");
    out.session.lost = lost.and_then(|f| f.value).map_or(0, |n| n as u64);
    out.session.watched = watch.read();
    result.session = Some(out.session.end(None));
    let command = out.session.command;
    Ok((AllocOutput { result, command }, cpu))
}
