//! The path strings of lookups without stopping the program: uprobes on the C library's
//! path-taking functions (`access`, `open`, `openat`, `stat`, `execve`, …) that copy the
//! path argument from the caller's memory (`+0(%di):ustring`) into the trace record, read
//! from the same per-CPU rings as the system-call records.
//!
//! The kernel's own ways are not available everywhere: event probes on the
//! `syscalls:sys_enter_*` tracepoints (`CONFIG_EPROBE_EVENTS`) and kprobes on `getname`
//! (`CONFIG_KPROBES`) are both off in the kernel this was built on (6.18), while uprobes
//! (`CONFIG_UPROBE_EVENTS`) are on. A uprobe sees only calls made through the C library
//! sysmeter itself loaded (the dynamic loader's own opens and static programs pass it by);
//! the lookups whose path was not seen are counted, not guessed.
//!
//! The probes are defined in `uprobe_events` under a group unique to this process
//! (`sysmeter_lk<pid>`), removed when [`PathProbes`] is dropped (after every perf event on
//! them is closed), and groups left by a sysmeter that died are removed first.

use std::collections::BTreeSet;
use std::io::Write;

use blazesym::inspect::Inspector;
use blazesym::inspect::source::{Elf, Source};

/// Prefix of our uprobe groups; the pid follows.
const GROUP_PREFIX: &str = "sysmeter_lk";
use crate::diagnose::tracefs;

/// The C library functions probed, by the argument (0-based) that holds the path. Each
/// probe costs about 70 ms when its last event is closed (the kernel unregisters it and
/// waits for an RCU grace period, under a global mutex), so the list is short: the calls
/// programs make most, at the addresses the library's other functions reach too (`stat`,
/// `lstat` and `fstatat` all run `fstatat64`'s code; `creat`, `fopen` and `__open_2` run
/// `open64`'s; `execv*` and `posix_spawn` run `execve`'s).
const FUNCTIONS: [(&[&str], usize); 2] = [
    (
        &[
            "open64", "access", "execve", "readlink", "opendir", "mkdir", "rmdir", "unlink",
            "rename", "chdir",
        ],
        0,
    ),
    (
        &[
            "openat64",
            "fstatat64",
            "statx",
            "faccessat",
            "readlinkat",
            "unlinkat",
        ],
        1,
    ),
];

/// The register holding argument `n` at a function's entry.
fn arg_register(n: usize) -> Option<&'static str> {
    #[cfg(target_arch = "x86_64")]
    const REGS: [&str; 3] = ["%di", "%si", "%dx"];
    #[cfg(target_arch = "aarch64")]
    const REGS: [&str; 3] = ["%x0", "%x1", "%x2"];
    REGS.get(n).copied()
}

/// One probe's trace event: its id and where its `path` field is in a raw record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::diagnose) struct PathEvent {
    /// Tracepoint id (`events/GROUP/NAME/id`).
    pub id: u64,
    /// Offset of the `__data_loc char[] path` field.
    pub path_offset: usize,
}

/// The defined probes; dropping it removes them.
#[derive(Debug)]
pub(in crate::diagnose) struct PathProbes {
    base: &'static str,
    group: String,
    names: Vec<String>,
    /// Their events.
    pub events: Vec<PathEvent>,
    /// The C library probed.
    pub libc: String,
}

/// The C library this process loaded (the one a program started from here loads too,
/// unless it brings its own).
fn own_libc() -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            p.rsplit('/')
                .next()
                .is_some_and(|f| f.starts_with("libc.so"))
        })
        .map(str::to_string)
}

fn append(base: &str, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(format!("{base}/uprobe_events"))?;
    f.write_all(format!("{line}\n").as_bytes())
}

/// The groups in `uprobe_events` text that belong to a sysmeter whose pid is not alive:
/// `(group, event)` pairs to remove. Pure apart from `alive`.
pub(super) fn stale(text: &str, alive: &dyn Fn(i32) -> bool) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_whitespace().next()?.split_once(':').map(|x| x.1))
        .filter(|ev| {
            ev.strip_prefix(GROUP_PREFIX)
                .and_then(|rest| rest.split('/').next()?.parse().ok())
                .is_some_and(|pid| !alive(pid))
        })
        .map(str::to_string)
        .collect()
}

fn remove_stale(base: &str) {
    let Ok(text) = std::fs::read_to_string(format!("{base}/uprobe_events")) else {
        return;
    };
    let alive = |pid: i32| std::path::Path::new(&format!("/proc/{pid}")).exists();
    for ev in stale(&text, &alive) {
        let _ = append(base, &format!("-:{ev}"));
    }
}

/// `(function, file offset, path argument)` of each probed function in `libc`, one per
/// address (aliases such as `open`/`open64` share one).
fn offsets(libc: &str) -> Result<Vec<(String, u64, usize)>, String> {
    let names: Vec<&str> = FUNCTIONS
        .iter()
        .flat_map(|(n, _)| n.iter().copied())
        .collect();
    let mut src = Elf::new(libc);
    src.debug_syms = false;
    let inspector = Inspector::new();
    let found = inspector
        .lookup(&Source::Elf(src), &names)
        .map_err(|e| format!("cannot read the symbols of {libc}: {e}"))?;
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (name, syms) in names.iter().zip(found) {
        let arg = FUNCTIONS
            .iter()
            .find(|(n, _)| n.contains(name))
            .map_or(0, |f| f.1);
        for off in syms.iter().filter_map(|s| s.file_offset) {
            if seen.insert(off) {
                out.push((name.to_string(), off, arg));
            }
        }
    }
    Ok(out)
}

/// The offset of the `path` field in an event's `format` file.
fn path_offset(base: &str, group: &str, name: &str) -> Option<(u64, usize)> {
    let dir = format!("{base}/events/{group}/{name}");
    let id = std::fs::read_to_string(format!("{dir}/id")).ok()?;
    let format = std::fs::read_to_string(format!("{dir}/format")).ok()?;
    Some((
        id.trim().parse().ok()?,
        super::setup::field_offset(&format, "path")?,
    ))
}

impl PathProbes {
    /// Defines the probes (root: tracefs is written); the reason when it cannot.
    pub fn define() -> Result<PathProbes, String> {
        let base = tracefs::holding("uprobe_events").ok_or(
            "the kernel has no uprobe events (CONFIG_UPROBE_EVENTS) or tracefs is not mounted",
        )?;
        let libc = own_libc().ok_or("sysmeter found no C library mapped in itself")?;
        remove_stale(base);
        let group = format!("{GROUP_PREFIX}{}", std::process::id());
        let mut probes = PathProbes {
            base,
            group,
            names: Vec::new(),
            events: Vec::new(),
            libc: libc.clone(),
        };
        for (name, off, arg) in offsets(&libc)? {
            let reg = arg_register(arg).ok_or("no argument registers known for this CPU")?;
            let ev = name.trim_start_matches('_').to_string();
            let line = format!(
                "p:{}/{ev} {libc}:{off:#x} path=+0({reg}):ustring",
                probes.group
            );
            if let Err(e) = append(base, &line) {
                return Err(format!(
                    "cannot define uprobes in {base}/uprobe_events ({e}): it needs root"
                ));
            }
            probes.names.push(ev.clone());
            let (id, path_offset) = path_offset(base, &probes.group, &ev)
                .ok_or_else(|| format!("{base}/events/{}/{ev} has no path field", probes.group))?;
            probes.events.push(PathEvent { id, path_offset });
        }
        if probes.events.is_empty() {
            return Err(format!("{libc} exports none of the path functions"));
        }
        Ok(probes)
    }
}

impl Drop for PathProbes {
    fn drop(&mut self) {
        for name in &self.names {
            let _ = append(self.base, &format!("-:{}/{name}", self.group));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_groups_of_dead_sysmeters_are_stale() {
        let text = "p:sysmeter_lk100/access /lib/libc.so.6:0xf8410 path=+0(%di):ustring\n\
                    p:sysmeter_lk200/open /lib/libc.so.6:0x1 path=+0(%di):ustring\n\
                    p:other/x /bin/true:0x10\n";
        let alive = |pid: i32| pid == 200;
        assert_eq!(stale(text, &alive), ["sysmeter_lk100/access"]);
    }

    #[test]
    fn every_function_names_its_path_argument_like_the_call() {
        for (names, arg) in FUNCTIONS {
            assert!(arg_register(arg).is_some());
            for n in names {
                if let Some(a) = crate::diagnose::trace::lookups::path_arg(n) {
                    assert_eq!(a, arg, "{n}");
                }
            }
        }
    }
}
