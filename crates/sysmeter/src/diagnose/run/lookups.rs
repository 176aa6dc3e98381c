//! Path lookups of a launched command, counted without stopping it: one counting perf event
//! per path-taking call on its `syscalls:sys_enter_<call>` tracepoint, and one on
//! `sys_exit_<call>` with the kernel filter `ret < 0` for the failures, opened on the gated
//! child before its exec (`enable_on_exec`, `inherit`: its threads and children count too).
//! The calls are the common lookups of `trace`'s `file` class. Counts only — no times and
//! no paths (that is `sysmeter trace`). Needs tracepoint privileges (root, CAP_PERFMON or
//! perf_event_paranoid ≤ -1) and tracefs; otherwise the reason is reported instead.

use std::ffi::CString;
use std::os::fd::AsRawFd;

use perf_event::events::Tracepoint;
use perf_event::{Builder, Counter};

use crate::model::Finding;
use crate::model::units::count;

/// The calls counted: the path lookups programs make (open/stat/access/exec/readlink and the
/// directory-changing calls).
const CALLS: [&str; 30] = [
    "open",
    "openat",
    "openat2",
    "creat",
    "stat",
    "lstat",
    "newfstatat",
    "statx",
    "statfs",
    "access",
    "faccessat",
    "faccessat2",
    "execve",
    "execveat",
    "readlink",
    "readlinkat",
    "chdir",
    "mkdir",
    "mkdirat",
    "rmdir",
    "unlink",
    "unlinkat",
    "rename",
    "renameat",
    "renameat2",
    "symlink",
    "symlinkat",
    "link",
    "linkat",
    "utimensat",
];

const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// What was counted, or why nothing was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupCount {
    /// Per call seen at least once: (name, calls, failed calls).
    Counted(Vec<(String, u64, u64)>),
    /// Why the calls could not be counted.
    Unavailable(String),
}

/// The open counters of one launched command.
pub struct Counters {
    calls: Vec<(String, Counter, Option<Counter>)>,
}

fn id(base: &str, event: &str) -> Option<u64> {
    let text = std::fs::read_to_string(format!("{base}/events/syscalls/{event}/id")).ok()?;
    text.trim().parse().ok()
}

fn counter(id: u64, pid: i32) -> std::io::Result<Counter> {
    let mut b = Builder::new(Tracepoint::with_id(id));
    b.observe_pid(pid)
        .any_cpu()
        .inherit(true)
        .include_kernel()
        .enable_on_exec(true);
    b.build()
}

impl Counters {
    /// Opens the counters on `pid` (a gated child that has not called execve yet).
    pub fn open(pid: i32) -> Result<Counters, String> {
        let base = TRACEFS
            .into_iter()
            .find(|b| std::path::Path::new(&format!("{b}/events/syscalls")).is_dir())
            .ok_or("tracefs with syscall tracepoints is not mounted or not readable (root)")?;
        let failed = CString::new("ret < 0").map_err(|e| e.to_string())?;
        let mut calls = Vec::new();
        for name in CALLS {
            let Some(enter) = id(base, &format!("sys_enter_{name}")) else {
                continue;
            };
            let c = counter(enter, pid).map_err(|e| {
                format!("the syscall tracepoints could not be opened ({e}): they need root, CAP_PERFMON or perf_event_paranoid ≤ -1")
            })?;
            let exit = id(base, &format!("sys_exit_{name}")).and_then(|x| {
                let e = counter(x, pid).ok()?;
                sysmeter_sys::tracepoint::set_filter(e.as_raw_fd(), &failed).ok()?;
                Some(e)
            });
            calls.push((name.to_string(), c, exit));
        }
        if calls.is_empty() {
            return Err(format!(
                "{base}/events/syscalls has none of the path-taking calls"
            ));
        }
        Ok(Counters { calls })
    }

    /// Reads the counts (after the command ended).
    pub fn read(mut self) -> LookupCount {
        let mut out = Vec::new();
        for (name, c, exit) in &mut self.calls {
            let n = c.read().unwrap_or(0);
            let failed = exit.as_mut().and_then(|e| e.read().ok()).unwrap_or(0);
            if n > 0 {
                out.push((name.clone(), n, failed.min(n)));
            }
        }
        out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        LookupCount::Counted(out)
    }
}

/// The finding about lookups: how many path-taking calls, which, how many failed.
pub fn finding(l: &LookupCount) -> Finding {
    match l {
        LookupCount::Counted(calls) => {
            let n: u64 = calls.iter().map(|c| c.1).sum();
            let failed: u64 = calls.iter().map(|c| c.2).sum();
            let list = calls
                .iter()
                .map(|(name, c, f)| match f {
                    0 => format!("{name} {}", count(*c as f64)),
                    f => format!("{name} {} ({} failed)", count(*c as f64), count(*f as f64)),
                })
                .collect::<Vec<_>>()
                .join(", ");
            let list = if list.is_empty() {
                "none".to_string()
            } else {
                list
            };
            Finding::new(
                "lookups",
                format!(
                    "path lookups: {} path-taking system calls, {} of them failed: {list}; their \
                     time and the paths looked up: sysmeter trace",
                    count(n as f64),
                    count(failed as f64)
                ),
                Some(n as f64),
            )
        }
        LookupCount::Unavailable(why) => Finding::new(
            "lookups_not_counted",
            format!("path lookups were not counted: {why}; sysmeter trace counts them with ptrace"),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counted_lookups_name_calls_and_failures() {
        let l = LookupCount::Counted(vec![
            ("access".into(), 20_000, 19_000),
            ("openat".into(), 3, 0),
        ]);
        let f = finding(&l);
        assert_eq!(f.value, Some(20_003.0));
        assert!(
            f.text.contains("access 20.0k (19.0k failed), openat 3"),
            "{}",
            f.text
        );
        let none = finding(&LookupCount::Counted(vec![]));
        assert!(none.text.contains("0 path-taking") && none.text.contains("none"));
        let u = finding(&LookupCount::Unavailable("no tracefs".into()));
        assert_eq!(u.key, "lookups_not_counted");
        assert!(u.text.contains("no tracefs"));
    }

    #[test]
    fn every_counted_call_takes_a_path() {
        for c in CALLS {
            assert!(
                crate::diagnose::trace::lookups::path_arg(c).is_some(),
                "{c}"
            );
        }
    }
}
