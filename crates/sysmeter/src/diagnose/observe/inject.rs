//! The one injection of sysmeter's preload library into a launched command, shared by the
//! in-process backends (`calls`, `alloc`, `locks`' table): the library and each run's shared
//! region are close-on-exec memfds of sysmeter's, named to the command by a path that stays
//! valid while sysmeter runs, `/proc/<sysmeter's pid>/fd/N` ([`path_of`]): the command
//! loads the library by it (appended to any `LD_PRELOAD` already set: the program's own
//! preloads keep their precedence) and opens the region by it, so a program that closed
//! every descriptor and then execs another still loads the library quietly (an inherited
//! `/proc/self/fd/N` would be gone, and the dynamic linker would say so on its stderr).
//! Every process and exec'd image of the run writes into the same region, which outlives
//! them all. The region is read back with `pread` ([`read_at`]): no unsafe code here.
//!
//! Whether the library can enter a program ([`cannot_preload`]) follows a script's `#!`
//! chain (`#!/usr/bin/env NAME` resolved on `PATH`) to the ELF program that runs it.
//!
//! Also the launch itself and the watch until the command ends (Ctrl-C passed on,
//! `--duration` leaving it running), with a hook called between checks so a backend can
//! sample its region while the command runs. Depends on sysmeter-sys and the floor's
//! `error` and `session`.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::Path;
use std::time::Duration;

use sysmeter_sys::preload;
use sysmeter_sys::process::child::Child;

use super::error::{ObserveError, resolve_program};
use super::pump::{self, NoRecords, Ticks, Watched};
use super::script;
use super::session::{Ended, Exited, Pending, StillRunning, StopWhen, exit_code, wait_for_end};

/// The preload library in a memfd, and a fresh region of `size` bytes starting with
/// `header` (both inherited by the command).
pub fn library_and_region(
    region_name: &std::ffi::CStr,
    size: u64,
    header: &[u8],
) -> Result<(File, File), ObserveError> {
    let lib = preload::library_memfd().map_err(ObserveError::io("writing the preload library"))?;
    let mut shm =
        preload::memfd(region_name).map_err(ObserveError::io("creating the shared region"))?;
    shm.set_len(size)
        .and_then(|()| shm.write_all(header))
        .map_err(ObserveError::io("creating the shared region"))?;
    Ok((lib, shm))
}

/// The path by which the command and every process it starts reach `file`, one of
/// sysmeter's memfds: valid while sysmeter runs, whatever descriptors they close.
pub fn path_of(file: &File) -> String {
    format!("/proc/{}/fd/{}", std::process::id(), file.as_raw_fd())
}

/// The command's environment: ours without the variables whose names start with one of
/// `drop` (a stale setting of an outer sysmeter, `LD_BIND_NOW`), the library preloaded
/// last, then `extra`.
pub fn environment(lib: &File, drop: &[&str], extra: &[(String, String)]) -> Vec<OsString> {
    let lib_path = path_of(lib);
    let mut env: Vec<OsString> = Vec::new();
    let mut preload = lib_path.clone();
    for (k, v) in std::env::vars_os() {
        let key = k.as_bytes();
        if key == b"LD_PRELOAD" && !v.is_empty() {
            // Ours last: the program's own preloads keep their precedence.
            preload = format!("{}:{lib_path}", v.to_string_lossy());
        } else if !drop.iter().any(|d| key.starts_with(d.as_bytes())) {
            let mut kv = k.clone();
            kv.push("=");
            kv.push(&v);
            env.push(kv);
        }
    }
    env.push(format!("LD_PRELOAD={preload}").into());
    env.extend(
        extra
            .iter()
            .map(|(k, v)| OsString::from(format!("{k}={v}"))),
    );
    env
}

/// Starts `argv` with `env`, released from its gate (126/127 with the shell's sentence
/// when it cannot run).
pub fn launch(argv: &[OsString], env: &[OsString]) -> Result<Child, ObserveError> {
    let program = resolve_program(&argv[0])?;
    let env: Vec<&OsStr> = env.iter().map(OsString::as_os_str).collect();
    let args: Vec<&OsStr> = argv.iter().map(OsString::as_os_str).collect();
    let mut child = Child::spawn_env(&program, &args, Some(&env))
        .map_err(ObserveError::io("starting the command"))?;
    child.release().map_err(|e| match e.raw_os_error() {
        Some(libc::ENOENT) => ObserveError::CommandNotFound(argv[0].to_string_lossy().into()),
        _ => ObserveError::io("starting the command")(e),
    })?;
    Ok(child)
}

/// A command left running after `--duration`: waited for with the library and the region
/// kept open, so the paths that it and the programs it execs load them by stay valid (a
/// closed memfd would make the dynamic linker complain on the program's stderr).
#[derive(Debug)]
struct Injected {
    child: Child,
    _kept: [File; 2],
}

impl StillRunning for Injected {
    fn wait(mut self: Box<Self>) -> Result<i32, ObserveError> {
        exit_code(self.child.wait(true)).map_err(ObserveError::io("waiting for the command"))
    }
}

/// The pending command of a run that ended before it (`--duration`), holding `lib` and
/// `shm` open until it ends.
pub fn still_running(child: Child, lib: File, shm: File) -> Pending {
    Pending::new(Injected {
        child,
        _kept: [lib, shm],
    })
}

/// Until the command ends, Ctrl-C (passed on; the command is waited for) or `duration`
/// (the command keeps running); `tick` runs at every drain of the one session loop
/// (`pump::run`) meanwhile.
pub fn watch(
    child: &mut Child,
    duration: Option<Duration>,
    tick: impl FnMut(),
) -> Result<(Ended, Option<Exited>), ObserveError> {
    let waiting = ObserveError::io("waiting for the command");
    let mut stop = StopWhen::until(duration, None);
    let mut ticks = Ticks(tick);
    let watched = Watched::Command(child);
    let (ended, exit) = pump::run(&mut ticks, &mut NoRecords, watched, &mut stop)
        .map_err(|e| ObserveError::io("waiting for the command")(e))?;
    if ended == Ended::Interrupted {
        return Ok((ended, wait_for_end(child).map_err(waiting)?));
    }
    Ok((ended, exit))
}

/// Whether the ELF file at `path` asks for a dynamic linker (has PT_INTERP).
pub fn dynamic(path: &Path) -> bool {
    elf_kind(path) == Some(true)
}

/// What the file at `path` is: `None` when it is not an ELF file (or cannot be read),
/// else whether it is a 64-bit ELF file that asks for a dynamic linker (PT_INTERP). Reads
/// the ELF header and the program headers only, not the whole file (a static program may
/// be large, and a launch asks this more than once).
fn elf_kind(path: &Path) -> Option<bool> {
    let f = File::open(path).ok()?;
    let mut head = [0u8; 64];
    let mut magic = [0u8; 4];
    f.read_exact_at(&mut magic, 0).ok()?;
    if &magic != b"\x7fELF" {
        return None;
    }
    if f.read_exact_at(&mut head, 0).is_err() || head[4] != 2 {
        return Some(false);
    }
    let u16_at = |at: usize| u16::from_le_bytes([head[at], head[at + 1]]);
    let phoff = u64::from_le_bytes(head[32..40].try_into().unwrap_or([0; 8]));
    let (phentsize, phnum) = (u16_at(54) as u64, u16_at(56) as u64);
    Some((0..phnum).any(|i| {
        let mut kind = [0u8; 4];
        f.read_exact_at(&mut kind, phoff.saturating_add(i * phentsize))
            .is_ok_and(|()| kind == 3u32.to_le_bytes())
    }))
}

/// Why the preload library cannot be injected into `program`, if it cannot: not x86-64,
/// setuid or setgid (the dynamic linker ignores LD_PRELOAD for it), or a static ELF file (no
/// dynamic linker to load it). A script is judged by the program at the end of its `#!`
/// chain ([`script::chain`]), which loads the library for it.
pub fn cannot_preload(program: &Path) -> Option<String> {
    if preload::CALLS_LIBRARY.is_empty() {
        return Some("the in-process library is built for x86-64 only".into());
    }
    let chain = script::chain(program);
    let runs = |what: &str| match chain.via.is_empty() {
        true => format!("{} {what}", program.display()),
        false => format!(
            "{} runs under {}, which {what}",
            program.display(),
            chain.program.display()
        ),
    };
    let mode = std::fs::metadata(&chain.program).map_or(0, |m| m.permissions().mode());
    if mode & 0o6000 != 0 {
        return Some(runs(
            "is setuid or setgid (the dynamic linker ignores LD_PRELOAD for it)",
        ));
    }
    if elf_kind(&chain.program) == Some(false) {
        return Some(runs(
            "is statically linked (no dynamic linker to load the library)",
        ));
    }
    None
}

/// Whether exec of `program` (the program at the end of its `#!` chain) changes the
/// process's ids: setuid to another user or setgid to another group than ours (`/proc/self`
/// belongs to our effective ids). The kernel then removes the probes opened on the process
/// before the exec (it is no longer dumpable), so a launch observed that way sees nothing.
pub fn changes_ids(program: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(file), Ok(us)) = (
        std::fs::metadata(script::chain(program).program),
        std::fs::metadata("/proc/self"),
    ) else {
        return false;
    };
    (file.mode() & 0o4000 != 0 && file.uid() != us.uid())
        || (file.mode() & 0o2000 != 0 && file.gid() != us.gid())
}

/// `len` bytes of the region at `at`.
pub fn read_at(shm: &File, at: u64, len: usize) -> Result<Vec<u8>, ObserveError> {
    let mut buf = vec![0u8; len];
    shm.read_exact_at(&mut buf, at)
        .map_err(ObserveError::io("reading the shared region"))?;
    Ok(buf)
}
