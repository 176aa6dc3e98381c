//! The uprobe fallback of `sysmeter alloc`, for what the preload library cannot enter: a
//! running process (`-p PID`) and a launched program without a dynamic linker (static) or
//! one the dynamic linker will not preload into (setuid). BPF programs
//! (`crates/sysmeter/bpf/alloc.bpf.c`) on uprobes and uretprobes of the allocation
//! functions of the C library the process maps (or of the static program itself) aggregate
//! in the kernel; when observation stops the maps are read ([`maps`]), each stack walked
//! from its snapshot with the DWARF tables ([`stacks`]), and the same [`Outcome`] as the
//! preload backend's is built, so the result, report and store do not differ.
//!
//! Needs root (or CAP_BPF + CAP_PERFMON) and the kernel's BTF: `observe::bpf::available`.
//! Threads are followed (the probes fire for the process's address space); forked children
//! are not. Depends on `diagnose::observe`, sysmeter-sys and the siblings; docs/alloc.md.

pub mod maps;
pub mod stacks;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sysmeter_sys::clock::{ClockId, clock_gettime_ns};
use sysmeter_sys::process::child::Child;

use super::{AllocError, Mechanism, Outcome, Sample, rss};
use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::bpf::{self, Loaded};
use crate::diagnose::observe::error::{ObserveError, resolve_program};
use crate::diagnose::observe::pump::{self, NoRecords, Ticks, Watched};
use crate::diagnose::observe::session::{CommandState, Ended, Pending, StopWhen, Stopped};
use crate::diagnose::observe::target::Target;
use crate::diagnose::observe::{elf, inject};

static OBJECT: &[u8] = aya::include_bytes_aligned!("../../../../bpf/alloc.bpf.o");

/// The functions probed and their entry program; the allocating ones also get the return
/// program. Aliases at one address (`aligned_alloc`/`memalign`, `cfree`/`free`) are probed
/// once.
const FUNCTIONS: &[(&str, &str, bool)] = &[
    ("malloc", "malloc_enter", true),
    ("calloc", "calloc_enter", true),
    ("realloc", "realloc_enter", true),
    ("posix_memalign", "posix_memalign_enter", true),
    ("aligned_alloc", "memalign_enter", true),
    ("memalign", "memalign_enter", true),
    ("valloc", "malloc_enter", true),
    ("pvalloc", "malloc_enter", true),
    ("free", "free_enter", false),
    ("cfree", "free_enter", false),
];

/// Why this backend cannot run here, if it cannot (one line).
pub fn unavailable() -> Option<Reason> {
    bpf::available().err()
}

/// The file whose allocator a process uses: the C library it maps, else its executable (a
/// static program carries its own).
fn probed_file(pid: i32) -> Option<PathBuf> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    elf::mapped_libc(&maps).or_else(|| std::fs::read_link(format!("/proc/{pid}/exe")).ok())
}

/// The probes of `file`: (entry program, offset, with a return probe).
fn probes(file: &Path) -> Result<Vec<(&'static str, u64, bool)>, AllocError> {
    let names: Vec<&str> = FUNCTIONS.iter().map(|f| f.0).collect();
    let found = elf::static_offsets(file, &names)
        .map_err(|e| AllocError::Refused(format!("{e}; its allocator cannot be probed")))?;
    if !found.iter().any(|(n, _)| n == "malloc") || !found.iter().any(|(n, _)| n == "free") {
        return Err(AllocError::Refused(format!(
            "{} names no malloc and free (a stripped static program, or another allocator); \
             build it with symbols",
            file.display()
        )));
    }
    Ok(found
        .iter()
        .filter_map(|(name, off)| {
            let f = FUNCTIONS.iter().find(|f| f.0 == name)?;
            Some((f.1, *off, f.2))
        })
        .collect())
}

/// Loads the programs for process `pid` and attaches them to `file`: every return probe
/// before any entry probe, so no entry is seen without its return. A static program's own
/// file is probed for every process that runs it (only its instances trap; the programs
/// count `pid`'s alone): a probe opened on a pid fires only while that thread lives, and a
/// main thread may exit before the others (`pthread_exit` in `main`). The C library is
/// probed for `pid` alone, not for every process of the machine. `dynamic`: whether `file`
/// asks for a dynamic linker, asked only of a file that is not the C library (the caller
/// may know it already; each asking reads the file).
fn attach(
    pid: i32,
    file: &Path,
    dynamic: impl FnOnce() -> bool,
) -> Result<(Loaded, usize), AllocError> {
    let shared = !elf::is_libc(file) && !dynamic();
    let filter = (!shared).then_some(pid);
    let probes = probes(file)?;
    let fail = |e: bpf::BpfError| AllocError::Bpf(e.to_string());
    let mut l =
        Loaded::load("alloc.bpf.o", OBJECT, &[("target_tgid", pid as u32)]).map_err(fail)?;
    for &(_, off, ret) in &probes {
        if ret {
            l.attach_uprobe("alloc_return", file, off, filter)
                .map_err(fail)?;
        }
    }
    for &(program, off, _) in &probes {
        l.attach_uprobe(program, file, off, filter).map_err(fail)?;
    }
    Ok((l, probes.len()))
}

/// What is read while observing: the live heap and RSS, and the latest mappings.
struct Watch {
    pid: i32,
    start_ns: i64,
    samples: Vec<Sample>,
    maps: Option<String>,
    /// The program, read at the start (the one object known when no mapping was read).
    exe: Option<PathBuf>,
}

/// The mappings of process `pid`: through any of its threads, since the process's own entry
/// reads empty once its main thread has exited (`pthread_exit` in `main`).
fn read_maps(pid: i32) -> Option<String> {
    let own = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok();
    if let Some(text) = own.filter(|t| !t.is_empty()) {
        return Some(text);
    }
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    tasks
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("maps")).ok())
        .find(|t| !t.is_empty())
}

impl Watch {
    /// The watch of `pid`, whose program file is `exe` (when it is the file to symbolise).
    fn new(pid: i32, exe: Option<PathBuf>) -> Watch {
        Watch {
            pid,
            start_ns: clock_gettime_ns(ClockId::Monotonic),
            samples: Vec::new(),
            maps: None,
            exe,
        }
    }

    fn tick(&mut self, l: &mut Loaded) {
        if let Some(text) = read_maps(self.pid) {
            self.maps = Some(text);
        }
        let live = l.counters("stats").ok().and_then(|s| s.first().copied());
        let rss = rss(self.pid as u32);
        if let (Some(live), true) = (live, rss > 0.0) {
            let now = clock_gettime_ns(ClockId::Monotonic);
            self.samples.push(Sample {
                t_ns: (now - self.start_ns).max(0) as f64,
                live: live as i64 as f64,
                rss,
            });
        }
    }
}

/// Observes process `pid` until it ends, Ctrl-C or `duration`.
fn observe_pid(l: &mut Loaded, w: &mut Watch, duration: Option<Duration>) -> (Ended, bool) {
    let mut stop = StopWhen::until(duration, None);
    let pid = w.pid;
    let mut ticks = Ticks(|| w.tick(l));
    let watched = Watched::Process(pid);
    // Watching a process by /proc cannot fail.
    let ended = pump::run(&mut ticks, &mut NoRecords, watched, &mut stop)
        .map_or(Ended::Finished, |(ended, _)| ended);
    (ended, ended == Ended::Finished)
}

/// The command started (gated), the file its allocator lives in, and whether the program
/// is dynamic (so is that file then: the C library, or the program when none is found).
fn spawn(argv: &[OsString]) -> Result<(Child, PathBuf, PathBuf, bool), AllocError> {
    let program = resolve_program(&argv[0])?;
    let dynamic = inject::dynamic(&program);
    // A dynamic program (setuid) loads the C library this process loaded.
    let file = match dynamic {
        true => elf::own_libc().unwrap_or_else(|| program.clone()),
        false => program.clone(),
    };
    // The kernel resolves the path itself: it must not depend on our working directory.
    let file = std::fs::canonicalize(&file).unwrap_or(file);
    let args: Vec<&std::ffi::OsStr> = argv.iter().map(OsString::as_os_str).collect();
    let child = Child::spawn(&program, &args).map_err(ObserveError::io("starting the command"))?;
    Ok((child, program, file, dynamic))
}

/// Lets the gated command exec (127/126 with the shell's sentence when it cannot run).
fn release(child: &mut Child, argv: &[OsString]) -> Result<(), AllocError> {
    child.release().map_err(|e| {
        AllocError::Target(match e.raw_os_error() {
            Some(libc::ENOENT) => ObserveError::CommandNotFound(argv[0].to_string_lossy().into()),
            _ => ObserveError::io("starting the command")(e),
        })
    })
}

/// What a session produced before the maps are read.
struct Session {
    stopped: Stopped,
    exited_after_ns: Option<u64>,
    cpu_ns: Option<f64>,
}

/// Launches `argv` with the probes on its allocator and watches it until it ends.
fn launched(
    argv: &[OsString],
    (duration, asked): (Option<Duration>, bool),
    say: &mut dyn FnMut(&str),
) -> Result<(Loaded, Watch, Session, Mechanism), AllocError> {
    let (mut child, program, file, dynamic) = spawn(argv)?;
    let (mut l, functions) = attach(child.pid(), &file, || dynamic)?;
    let why = match asked {
        true => "chosen with --backend uprobes".to_string(),
        false => format!("{} cannot take the preload library", program.display()),
    };
    say(&format!(
        "alloc: uprobes on {functions} allocation functions of {} ({why})",
        file.display(),
    ));
    let mut w = Watch::new(child.pid(), Some(file.clone()).filter(|_| !dynamic));
    release(&mut child, argv)?;
    let (ended, waited) = inject::watch(&mut child, duration, || w.tick(&mut l))?;
    let command = match waited {
        Some((x, _)) => CommandState::Exited(x.shell_code()),
        None => CommandState::StillRunning(Pending::gated(child)),
    };
    let cpu_ns = waited.map(|(_, u)| (u.user_ns + u.system_ns) as f64);
    let mech = Mechanism::uprobes(&file, false);
    let s = Session {
        stopped: Stopped::new(ended, command),
        exited_after_ns: None,
        cpu_ns,
    };
    Ok((l, w, s, mech))
}

/// Attaches to `pid` and watches it until it ends, Ctrl-C or `duration`.
fn attached(
    pid: i32,
    duration: Option<Duration>,
    say: &mut dyn FnMut(&str),
) -> Result<(Loaded, Watch, Session, Mechanism), AllocError> {
    let file = probed_file(pid).ok_or(AllocError::Target(ObserveError::NoProcess(pid)))?;
    let (mut l, functions) = attach(pid, &file, || inject::dynamic(&file))?;
    let started = Instant::now();
    let mut w = Watch::new(pid, std::fs::read_link(format!("/proc/{pid}/exe")).ok());
    // The mappings now, before the process can end: on a loaded machine the first tick may
    // come only after a short-lived target exited, and its sites would stay bare addresses.
    w.maps = read_maps(pid);
    say(&format!(
        "alloc: observing PID {pid} through uprobes on {functions} allocation functions of \
         {}; Ctrl-C stops tracing",
        file.display()
    ));
    let (ended, gone) = observe_pid(&mut l, &mut w, duration);
    let after = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let s = Session {
        stopped: Stopped::new(ended, CommandState::NotLaunched),
        exited_after_ns: gone.then_some(after),
        cpu_ns: None,
    };
    Ok((l, w, s, Mechanism::uprobes(&file, true)))
}

/// Observes `target` through uprobes (`asked`: with `--backend uprobes`): the outcome (with
/// how the session ended) and the command's CPU time.
pub fn run(
    target: &Target,
    (duration, asked): (Option<Duration>, bool),
    say: &mut dyn FnMut(&str),
) -> Result<(Outcome, Option<f64>), AllocError> {
    if let Some(why) = unavailable() {
        return Err(AllocError::Refused(format!(
            "the uprobe fallback cannot run here: {why}"
        )));
    }
    let (mut l, w, s, mut mechanism) = match target {
        Target::Launch(argv) => launched(argv, (duration, asked), say)?,
        Target::Attach(pid) => attached(*pid, duration, say)?,
    };
    let kept = maps::read(&mut l).map_err(|e| AllocError::Bpf(e.to_string()))?;
    // Detach before the slow part (naming): the process runs at full speed again.
    drop(l);
    let mut out = stacks::outcome(&kept, w.pid as u32, w.maps.as_deref(), w.exe.as_deref());
    if let Some(p) = out.procs.first_mut() {
        p.start_ns = w.start_ns as u64;
    }
    out.samples = w.samples;
    out.session = s.stopped;
    mechanism.set_stats(kept.stats, s.exited_after_ns, asked);
    out.mechanism = mechanism;
    Ok((out, s.cpu_ns))
}
