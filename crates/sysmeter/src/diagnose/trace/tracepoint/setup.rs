//! Whether the tracepoint backend can run here, and the tracepoint ids and field offsets it
//! needs: raw samples of `raw_syscalls` need CAP_PERFMON/CAP_SYS_ADMIN or
//! `perf_event_paranoid ≤ -1`, and the ids come from tracefs (`events/raw_syscalls/*/id`).
//! When tracefs is not mounted and we are root, it is mounted at /sys/kernel/tracing (as
//! `perf` does); otherwise the reason and the command that fixes it are returned.
//!
//! The field offsets are read from the `format` files (`observe::tracefs`), not assumed.

use std::path::Path;

use crate::host::procfs::{self, cap};

/// Ids and field offsets of `raw_syscalls:sys_enter` / `sys_exit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::diagnose::trace) struct Ids {
    /// Tracepoint id of sys_enter.
    pub enter: u64,
    /// Tracepoint id of sys_exit.
    pub exit: u64,
    /// Offset of `long id` in a sys_exit record.
    pub exit_id_offset: usize,
    /// Offset of `long ret` in a sys_exit record.
    pub exit_ret_offset: usize,
}

/// Why the tracepoint backend cannot run, and how to make it run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(in crate::diagnose::trace) struct Unavailable {
    /// What is missing.
    pub reason: String,
    /// The fix.
    pub fix: String,
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} — {}", self.reason, self.fix)
    }
}

use crate::diagnose::observe::tracefs::{self, EventFormat, FormatError, MOUNT_POINTS as TRACEFS};

fn privileged(paranoid: Option<i32>) -> Result<(), Unavailable> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map(|t| procfs::parse_status(&t))
        .unwrap_or_default();
    if status.has_cap(cap::PERFMON) || status.has_cap(cap::SYS_ADMIN) {
        return Ok(());
    }
    match paranoid {
        Some(p) if p <= -1 => Ok(()),
        Some(p) => Err(Unavailable {
            reason: format!(
                "system-call tracepoints need CAP_PERFMON or perf_event_paranoid ≤ -1 \
                 (it is {p})"
            ),
            fix: "run as root, or `sysctl kernel.perf_event_paranoid=-1`".into(),
        }),
        None => Err(Unavailable {
            reason: "this kernel has no perf events (/proc/sys/kernel/perf_event_paranoid \
                     is missing)"
                .into(),
            fix: "use --backend ptrace".into(),
        }),
    }
}

fn find_tracefs() -> Option<&'static str> {
    tracefs::holding("events/raw_syscalls/sys_enter/id")
}

fn read_event(base: &str, event: &str) -> Result<EventFormat, Unavailable> {
    EventFormat::read(base, "raw_syscalls", event).map_err(|e| match e {
        FormatError::Unreadable { .. } => Unavailable {
            reason: e.to_string(),
            fix: "run as root (tracefs is readable by root only)".into(),
        },
        FormatError::BadId { .. } => Unavailable {
            reason: e.to_string(),
            fix: "use --backend ptrace".into(),
        },
    })
}

/// Checks privileges and tracefs (mounting it when `may_mount` and root) and returns the
/// ids, plus a note when tracefs was mounted by us.
pub(in crate::diagnose::trace) fn probe(
    may_mount: bool,
) -> Result<(Ids, Option<String>), Unavailable> {
    let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|t| t.trim().parse().ok());
    privileged(paranoid)?;
    let mut note = None;
    let base = match find_tracefs() {
        Some(b) => b,
        None if may_mount && Path::new(TRACEFS[0]).is_dir() && tracefs::mount() => {
            note = Some(format!(
                "mounted tracefs at {} to read tracepoint ids",
                TRACEFS[0]
            ));
            find_tracefs().ok_or_else(no_raw_syscalls)?
        }
        None => {
            return Err(Unavailable {
                reason: "tracepoints unavailable: tracefs is not mounted".into(),
                fix: format!("as root: `mount -t tracefs nodev {}`", TRACEFS[0]),
            });
        }
    };
    let enter = read_event(base, "sys_enter")?.id;
    let exit = read_event(base, "sys_exit")?;
    let offsets = exit.offset("id").zip(exit.offset("ret"));
    let exit = exit.id;
    let (exit_id_offset, exit_ret_offset) = offsets.ok_or_else(|| Unavailable {
        reason: format!("{base}/events/raw_syscalls/sys_exit/format lacks the id/ret fields"),
        fix: "use --backend ptrace".into(),
    })?;
    let ids = Ids {
        enter,
        exit,
        exit_id_offset,
        exit_ret_offset,
    };
    Ok((ids, note))
}

fn no_raw_syscalls() -> Unavailable {
    Unavailable {
        reason: "tracefs has no raw_syscalls events (kernel without CONFIG_FTRACE_SYSCALLS)".into(),
        fix: "use --backend ptrace".into(),
    }
}
