//! Whether the tracepoint backend can run here, and the tracepoint ids and field offsets it
//! needs: raw samples of `raw_syscalls` need CAP_PERFMON/CAP_SYS_ADMIN or
//! `perf_event_paranoid ≤ -1`, and the ids come from tracefs (`events/raw_syscalls/*/id`).
//! When tracefs is not mounted and we are root, it is mounted at /sys/kernel/tracing (as
//! `perf` does); otherwise the reason and the command that fixes it are returned.
//!
//! The field offsets are read from the `format` files, not assumed. Parsers are pure.

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

use crate::diagnose::tracefs::{self, MOUNT_POINTS as TRACEFS};

/// The offset of field `name` in a tracepoint `format` file.
pub(in crate::diagnose::trace) fn field_offset(format: &str, name: &str) -> Option<usize> {
    format.lines().find_map(|line| {
        let mut parts = line.trim().split(';').map(str::trim);
        let decl = parts.next()?.strip_prefix("field:")?;
        if decl.split_whitespace().last()? != name {
            return None;
        }
        parts.find_map(|p| p.strip_prefix("offset:")?.parse().ok())
    })
}

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

fn read_id(base: &str, event: &str) -> Result<(u64, String), Unavailable> {
    let dir = format!("{base}/events/raw_syscalls/{event}");
    let unreadable = |e: std::io::Error| Unavailable {
        reason: format!("cannot read {dir}: {e}"),
        fix: "run as root (tracefs is readable by root only)".into(),
    };
    let id = std::fs::read_to_string(format!("{dir}/id")).map_err(unreadable)?;
    let format = std::fs::read_to_string(format!("{dir}/format")).map_err(unreadable)?;
    let id = id.trim().parse().map_err(|_| Unavailable {
        reason: format!("{dir}/id does not hold a number"),
        fix: "use --backend ptrace".into(),
    })?;
    Ok((id, format))
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
    let (enter, _) = read_id(base, "sys_enter")?;
    let (exit, format) = read_id(base, "sys_exit")?;
    let offsets = field_offset(&format, "id").zip(field_offset(&format, "ret"));
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

#[cfg(test)]
mod tests {
    use super::field_offset;

    const EXIT_FORMAT: &str = "name: sys_exit\nID: 442\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\
        \tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n\
        print fmt: \"NR %ld = %ld\", REC->id, REC->ret\n";

    #[test]
    fn offsets_come_from_the_format_file() {
        assert_eq!(field_offset(EXIT_FORMAT, "id"), Some(8));
        assert_eq!(field_offset(EXIT_FORMAT, "ret"), Some(16));
        assert_eq!(field_offset(EXIT_FORMAT, "common_pid"), Some(4));
        assert_eq!(field_offset(EXIT_FORMAT, "args"), None);
    }
}
