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
//! The probes are defined in an `observe::uprobes` group unique to this process
//! (`sysmeter_lk<pid>x<random>`), removed when [`PathProbes`] is dropped (after every perf event on
//! them is closed); the C library's offsets come from `observe::elf`.

use crate::diagnose::observe::backend::Reason;
use crate::diagnose::observe::elf;
use crate::diagnose::observe::uprobes::{self, Fires, UprobeGroup};

/// Prefix of our uprobe groups; the pid follows.
const GROUP_PREFIX: &str = "sysmeter_lk";

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
    /// Their definitions (removed on drop).
    _group: UprobeGroup,
    /// Their events.
    pub events: Vec<PathEvent>,
    /// The C library probed.
    pub libc: String,
}

/// `(function, file offset, path argument)` of each probed function in `libc`, one per
/// address (aliases such as `open`/`open64` share one).
fn offsets(libc: &std::path::Path) -> Result<Vec<(String, u64, usize)>, Reason> {
    let names: Vec<&str> = FUNCTIONS
        .iter()
        .flat_map(|(n, _)| n.iter().copied())
        .collect();
    let found = elf::defined_offsets(libc, &names).map_err(|e| {
        Reason(format!(
            "cannot read the symbols of {}: {e}",
            libc.display()
        ))
    })?;
    Ok(found
        .into_iter()
        .map(|(name, off)| {
            let arg = FUNCTIONS
                .iter()
                .find(|(n, _)| n.contains(&name.as_str()))
                .map_or(0, |f| f.1);
            (name, off, arg)
        })
        .collect())
}

impl PathProbes {
    /// Defines the probes (root: tracefs is written); the reason when it cannot.
    pub fn define() -> Result<PathProbes, Reason> {
        let reason = |text: &str| Reason(text.to_string());
        let base = uprobes::tracefs_base().ok_or_else(|| {
            reason(
                "the kernel has no uprobe events (CONFIG_UPROBE_EVENTS) or tracefs is not \
                 mounted",
            )
        })?;
        let libc = elf::own_libc()
            .ok_or_else(|| reason("sysmeter found no C library mapped in itself"))?;
        let mut group = UprobeGroup::new(base, GROUP_PREFIX);
        let mut events = Vec::new();
        for (name, off, arg) in offsets(&libc)? {
            let reg = arg_register(arg)
                .ok_or_else(|| reason("no argument registers known for this CPU"))?;
            let ev = name.trim_start_matches('_').to_string();
            let fetch = format!("path=+0({reg}):ustring");
            let event = group
                .define(Fires::Entry, &ev, (&libc, off), &fetch)
                .map_err(|e| {
                    Reason(format!(
                        "cannot define uprobes in {base}/uprobe_events ({e}): it needs root"
                    ))
                })?;
            let path_offset = event
                .offset("path")
                .ok_or_else(|| Reason(format!("{} has no path field", event.dir)))?;
            events.push(PathEvent {
                id: event.id,
                path_offset,
            });
        }
        if events.is_empty() {
            return Err(Reason(format!(
                "{} exports none of the path functions",
                libc.display()
            )));
        }
        Ok(PathProbes {
            _group: group,
            events,
            libc: libc.display().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
