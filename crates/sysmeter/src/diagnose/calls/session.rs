//! One `calls` run: read the program, choose the sites, make sure uprobes can be defined
//! (root, tracefs — mounted when missing, stale groups of dead sysmeters removed), measure
//! the probe cost, define the probes, then launch the command (events opened on the gated
//! child with `enable_on_exec`; for a setuid or setgid program, whose exec drops them, on
//! the child held at its exec, `sysmeter_sys::ptrace::hold_at_exec`) or attach to every thread of a process, and drain the rings
//! until the target ends, Ctrl-C or `--duration`. Events are closed before the probes are
//! removed; both go whatever happens, so the process keeps running unprobed.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use sysmeter_sys::process::child::Child;
use sysmeter_sys::ptrace;

use super::collector::Collector;
use super::probes;
use super::rings::{Calls, OpenSpec, Rings};
use super::select::{Objects, Site};
use super::{CallsConfig, CallsError, calibrate};
use crate::diagnose::observe::error::{ObserveError, check_target, resolve_program};
use crate::diagnose::observe::inject;
use crate::diagnose::observe::overhead::Overhead;
use crate::diagnose::observe::proc::{each_thread, online_cpus};
use crate::diagnose::observe::pump::{self, Watched};
use crate::diagnose::observe::session::{CommandState, Observer, Pending, StopWhen, Stopped};
use crate::diagnose::observe::target::Target;
use crate::diagnose::observe::uprobes::{self, UprobeGroup};

/// Everything a run produced, before it becomes a result.
pub struct Outcome {
    /// The tallies, in site order.
    pub collector: Collector,
    /// What was probed.
    pub sites: Vec<Site>,
    /// The measured probe cost.
    pub overhead: Overhead,
    /// Facts for the findings.
    pub notes: Vec<String>,
    /// How tracing ended: why, the launched command's fate, the records lost by full
    /// rings (the wall and own CPU time are read by the caller, who started them).
    pub session: Stopped,
    /// CPU time (user + system) of the launched command, ns.
    pub cpu_ns: Option<f64>,
    /// On-CPU time each probed call adds, ns (calibrated).
    pub added_cpu_ns: f64,
    /// The launched command was held at its exec and its events opened after it (a setuid
    /// or setgid program, whose exec drops the events opened before).
    pub opened_after_exec: bool,
}

fn unavailable(reason: impl Into<String>, fix: &str) -> CallsError {
    CallsError::Unavailable {
        reason: reason.into(),
        fix: fix.into(),
    }
}

/// tracefs with `uprobe_events`, mounted when missing; a note when we mounted it.
fn tracefs() -> Result<(&'static str, Option<String>), CallsError> {
    if let Some(base) = uprobes::tracefs_base() {
        return Ok((base, None));
    }
    if crate::diagnose::observe::tracefs::mount()
        && let Some(base) = uprobes::tracefs_base()
    {
        let note = format!("mounted tracefs at {base}");
        return Ok((base, Some(note)));
    }
    Err(unavailable(
        "tracefs with uprobe_events is not mounted, or not writable by this user",
        "run as root (it is mounted with `mount -t tracefs nodev /sys/kernel/tracing`)",
    ))
}

fn io_failed(what: &str) -> impl FnOnce(std::io::Error) -> CallsError {
    let what = what.to_string();
    move |e| match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => unavailable(
            format!("{what} was refused ({e})"),
            "run as root (uprobes need CAP_SYS_ADMIN and a writable tracefs)",
        ),
        _ => CallsError::Target(ObserveError::Io { what, error: e }),
    }
}

/// The libraries mapped by process `pid`.
fn mapped_libraries(pid: i32) -> Vec<PathBuf> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let mut libs: Vec<PathBuf> = maps
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| p.starts_with('/') && p.contains(".so"))
        .map(PathBuf::from)
        .collect();
    libs.dedup();
    libs
}

fn choose_sites(cfg: &CallsConfig, program: &Path) -> Result<(Vec<Site>, Vec<String>), CallsError> {
    let maps = cfg.target.pid().map(mapped_libraries);
    let objects = Objects::read(program, maps)?;
    let (sites, notes) = objects.sites(&cfg.patterns);
    if sites.is_empty() {
        let mut imports: Vec<&str> = objects
            .program
            .1
            .plt
            .iter()
            .map(|(n, _)| n.as_str())
            .collect();
        imports.sort_unstable();
        let hint = match (notes.first(), imports.is_empty()) {
            (Some(n), _) => n.clone(),
            (None, true) => "it calls no shared library through a PLT (static, or -fno-plt); \
                 name library functions as OBJECT:NAME (e.g. libc.so.6:malloc)"
                .into(),
            (None, false) => format!("it imports: {}", imports.join(", ")),
        };
        let patterns = cfg.patterns.iter().map(|p| match &p.object {
            Some(o) => format!("{o}:{}", p.glob),
            None => p.glob.clone(),
        });
        return Err(CallsError::NothingMatches {
            object: program.display().to_string(),
            patterns: patterns.collect::<Vec<_>>().join(","),
            hint,
        });
    }
    Ok((sites, notes))
}

/// Defines the probes of every site; `(entry id, return id)` per site.
fn define(probes: &mut UprobeGroup, sites: &[Site]) -> Result<Vec<(u64, u64)>, CallsError> {
    sites
        .iter()
        .enumerate()
        .map(|(i, s)| {
            probes::define_pair(probes, &format!("f{i}"), &s.path, s.offset)
                .map_err(io_failed(&format!("defining the uprobe of {}", s.name)))
        })
        .collect()
}

/// What a traced session left: its events (closed before the probes are removed), its
/// tally, how it ended, the launched command's CPU time.
struct Traced {
    rings: Rings,
    calls: Calls,
    session: Stopped,
    cpu_ns: Option<f64>,
    /// The command was held at its exec and its events opened there.
    held: bool,
}

/// Opens the events of the gated `child` and lets it exec. A program whose exec changes the
/// process's ids (setuid or setgid to another user) makes the kernel drop every perf event
/// opened before; such a child is held at its exec (ptrace) and its events opened there,
/// before its first instruction. `true` when it was held; when holding is refused (no
/// CAP_SYS_PTRACE, Yama), the events are opened before the exec as for any program, and the
/// caller says its calls were not seen.
fn open_and_release(
    cfg: &CallsConfig,
    child: &mut Child,
    rings: &mut Rings,
    (program, cpus): (&Path, &[usize]),
) -> Result<bool, CallsError> {
    let hold = match inject::changes_ids(program) {
        true => ptrace::hold_at_exec(child.pid()).ok(),
        false => None,
    };
    let spec = OpenSpec {
        cpus,
        follow_forks: cfg.follow_forks,
        enable_on_exec: hold.is_none(),
    };
    let opening = io_failed("opening the uprobe events");
    let Some(mut hold) = hold else {
        rings.add(child.pid(), &spec).map_err(opening)?;
        child
            .release()
            .map_err(io_failed("letting the command start"))?;
        return Ok(false);
    };
    child
        .release()
        .map_err(io_failed("letting the command start"))?;
    hold.wait_exec()
        .map_err(io_failed("waiting for the command's exec"))?;
    rings.add(child.pid(), &spec).map_err(opening)?;
    rings
        .enable()
        .map_err(io_failed("enabling the uprobe events"))?;
    hold.let_go()
        .map_err(io_failed("letting the command run"))?;
    Ok(true)
}

fn launch(
    cfg: &CallsConfig,
    argv: &[OsString],
    ids: &[(u64, u64)],
    cpus: &[usize],
    c: Collector,
) -> Result<Traced, CallsError> {
    let program = resolve_program(&argv[0])?;
    let args: Vec<&std::ffi::OsStr> = argv.iter().map(OsString::as_os_str).collect();
    let mut child = Child::spawn(&program, &args).map_err(io_failed("starting the command"))?;
    let mut rings = Rings::new(ids);
    let held = open_and_release(cfg, &mut child, &mut rings, (&program, cpus))?;
    let mut stop = StopWhen::until(cfg.duration, None);
    let mut calls = rings.calls(c);
    let watched = Watched::Command(&mut child);
    let (ended, exit) = pump::run(&mut rings, &mut calls, watched, &mut stop)
        .map_err(io_failed("waiting for the command"))?;
    let cpu_ns = exit.as_ref().map(|(_, u)| (u.user_ns + u.system_ns) as f64);
    let command = match exit {
        Some((x, _)) => CommandState::Exited(x.shell_code()),
        None => CommandState::StillRunning(Pending::gated(child)),
    };
    Ok(Traced {
        rings,
        calls,
        session: Stopped::new(ended, command),
        cpu_ns,
        held,
    })
}

fn attach(
    cfg: &CallsConfig,
    pid: i32,
    ids: &[(u64, u64)],
    cpus: &[usize],
    c: Collector,
    observer: &mut dyn Observer,
) -> Result<Traced, CallsError> {
    let spec = OpenSpec {
        cpus,
        follow_forks: cfg.follow_forks,
        enable_on_exec: false,
    };
    let mut rings = Rings::new(ids);
    let threads = each_thread(pid, |tid| rings.add(tid, &spec))
        .map_err(io_failed("opening the uprobe events"))?
        .ok_or(ObserveError::NoProcess(pid))?;
    rings
        .enable()
        .map_err(io_failed("enabling the uprobe events"))?;
    observer.attached(&format!(
        "tracing library calls of PID {pid} ({} thread(s)) with uprobes; Ctrl-C stops tracing \
         and removes the probes, leaving it running",
        threads
    ));
    let mut stop = StopWhen::until(cfg.duration, Some(observer));
    let mut calls = rings.calls(c);
    let (ended, _) = pump::run(&mut rings, &mut calls, Watched::Process(pid), &mut stop)
        .map_err(io_failed("watching the process"))?;
    Ok(Traced {
        rings,
        calls,
        session: Stopped::new(ended, CommandState::NotLaunched),
        cpu_ns: None,
        held: false,
    })
}

/// Runs `calls` as `cfg` says.
pub fn run(cfg: &CallsConfig, observer: &mut dyn Observer) -> Result<Outcome, CallsError> {
    let program = match &cfg.target {
        Target::Attach(pid) => {
            check_target(*pid)?;
            std::fs::read_link(format!("/proc/{pid}/exe"))
                .map_err(|_| ObserveError::NoProcess(*pid))?
        }
        Target::Launch(argv) => resolve_program(&argv[0])?,
    };
    let (sites, mut notes) = choose_sites(cfg, &program)?;
    let (base, mounted) = tracefs()?;
    notes.extend(mounted);
    let mut probes = UprobeGroup::new(base, "sysmeter_");
    let cpus = online_cpus();
    let calibrate::Measured {
        overhead,
        added_cpu_ns,
    } = calibrate::overhead(&mut probes, &cpus).map_err(io_failed("measuring the uprobe cost"))?;
    let ids = define(&mut probes, &sites)?;
    let c = Collector::new(sites.len(), overhead.inside_ns(), overhead.added_ns());
    let traced = match &cfg.target {
        Target::Launch(argv) => launch(cfg, argv, &ids, &cpus, c)?,
        Target::Attach(pid) => attach(cfg, *pid, &ids, &cpus, c, observer)?,
    };
    drop(traced.rings);
    drop(probes);
    Ok(Outcome {
        collector: traced.calls.collector,
        sites,
        overhead,
        notes,
        session: Stopped {
            lost: traced.calls.lost,
            ..traced.session
        },
        cpu_ns: traced.cpu_ns,
        added_cpu_ns,
        opened_after_exec: traced.held,
    })
}
