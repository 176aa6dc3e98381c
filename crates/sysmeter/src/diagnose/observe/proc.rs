//! What the tracers read of `/proc` and `/sys` about a target and the machine: its threads
//! (opened one by one, rescanning for threads started meanwhile), whether it is gone, and
//! the online CPUs their per-CPU events are opened on. `trace`, `calls`, `locks` and
//! `profile` share these.
//!
//! Depends on `host::cpulist` and `sysmeter_sys::sched`.

/// The CPUs events must cover: every online CPU (a tracee may move anywhere).
pub(crate) fn online_cpus() -> Vec<usize> {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|t| crate::host::cpulist::parse_cpu_list(t.trim()))
        .map(|l| l.into_iter().map(|c| c as usize).collect())
        .filter(|l: &Vec<usize>| !l.is_empty())
        .or_else(|| sysmeter_sys::sched::allowed_cpus().ok())
        .unwrap_or_else(|| vec![0])
}

/// Calls `open` on every thread of `pid`, rescanning `/proc/PID/task` until no new thread
/// appears (so threads started meanwhile are caught); a thread that ended in between
/// (ESRCH) is passed over. Returns how many threads were seen, `None` when the process is
/// gone, or the first other error of `open`.
pub(crate) fn each_thread(
    pid: i32,
    mut open: impl FnMut(i32) -> std::io::Result<()>,
) -> std::io::Result<Option<usize>> {
    let mut seen = std::collections::BTreeSet::new();
    loop {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return Ok(None);
        };
        let tids: Vec<i32> = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .filter(|t| !seen.contains(t))
            .collect();
        if tids.is_empty() {
            return Ok(Some(seen.len()));
        }
        for tid in tids {
            match open(tid) {
                Err(e) if e.raw_os_error() != Some(libc::ESRCH) => return Err(e),
                _ => {}
            }
            seen.insert(tid);
        }
    }
}

/// Whether process `pid` is gone (no /proc entry, or a zombie).
pub(crate) fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => text
            .rsplit_once(") ")
            .is_none_or(|(_, rest)| ended_state(rest)),
        Err(_) => true,
    }
}

/// Whether the fields of a `/proc/PID/stat` after the command name start with the state of
/// a process that has ended (zombie or dead).
pub(crate) fn ended_state(after_comm: &str) -> bool {
    after_comm.starts_with('Z') || after_comm.starts_with('X')
}
