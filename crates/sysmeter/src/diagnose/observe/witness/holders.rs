//! The BPF programs attached to a tracepoint now, with the process that holds each: the
//! kernel's BPF links of perf events on that tracepoint (how aya and libbpf attach, kernel
//! 6.6 and later) and the perf event descriptors with a program set on them (how bpftrace
//! and bcc attach), found by one pass over `/proc/*/fd`. Read only when a session was
//! blinded, to say by what; a query the kernel refuses leaves the list shorter, never fails
//! the session.
//!
//! Depends on `sysmeter_sys::bpf_query` and aya's list of loaded programs (their names).

use std::collections::{BTreeMap, HashMap};

use sysmeter_sys::bpf_query;

/// One BPF program on the tracepoint.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Holder {
    /// The kernel's id of the program (`bpftool prog show id N`).
    pub prog_id: u32,
    /// Its name, when the kernel gave one.
    pub name: String,
    /// The processes holding it attached (pid, command name).
    pub owners: Vec<(i32, String)>,
}

/// The BPF programs attached to tracepoint `tracepoint` (its own name: `sys_enter_futex`).
pub fn on_tracepoint(tracepoint: &str) -> Vec<Holder> {
    let links = links_on(tracepoint);
    let mut owners: BTreeMap<u32, Vec<(i32, String)>> = BTreeMap::new();
    for prog in links.values() {
        owners.entry(*prog).or_default();
    }
    each_descriptor(|pid, fd, target| {
        let prog = match target {
            "anon_inode:bpf_link" => link_of(pid, fd).and_then(|l| links.get(&l).copied()),
            "anon_inode:[perf_event]" => match bpf_query::task_fd_tracepoint(pid, fd) {
                Ok(Some((prog, tp))) if tp == tracepoint => Some(prog),
                _ => None,
            },
            _ => None,
        };
        if let Some(prog) = prog {
            let list = owners.entry(prog).or_default();
            if !list.iter().any(|(p, _)| *p == pid) {
                list.push((pid, comm(pid)));
            }
        }
    });
    let names = program_names();
    owners
        .into_iter()
        .map(|(prog_id, owners)| Holder {
            prog_id,
            name: names.get(&prog_id).cloned().unwrap_or_default(),
            owners,
        })
        .collect()
}

/// The sentence part naming `holders` ("attached to it now: program 41 `sys_enter_futex`
/// of pid 812 (bpftrace)").
pub fn sentence(holders: &[Holder]) -> String {
    if holders.is_empty() {
        return "none is attached to it any more, or the kernel would not list them \
                (`bpftool perf` lists what sits on a tracepoint)"
            .into();
    }
    let each: Vec<String> = holders
        .iter()
        .map(|h| {
            let name = match h.name.as_str() {
                "" => String::new(),
                n => format!(" `{n}`"),
            };
            let owners: Vec<String> = h
                .owners
                .iter()
                .map(|(pid, comm)| format!("pid {pid} ({comm})"))
                .collect();
            match owners.is_empty() {
                true => format!("BPF program {}{name}", h.prog_id),
                false => format!("BPF program {}{name} of {}", h.prog_id, owners.join(", ")),
            }
        })
        .collect();
    format!("attached to it now: {}", each.join("; "))
}

/// Link id → program id of every perf-event link on `tracepoint`.
fn links_on(tracepoint: &str) -> HashMap<u32, u32> {
    let mut found = HashMap::new();
    let mut id = 0;
    while let Ok(Some(next)) = bpf_query::next_link_id(id) {
        id = next;
        if let Ok(Some((prog, tp))) = bpf_query::link_tracepoint(next)
            && tp == tracepoint
        {
            found.insert(next, prog);
        }
    }
    found
}

/// Calls `each(pid, fd, link target)` for every descriptor of every process but this one.
fn each_descriptor(mut each: impl FnMut(i32, i32, &str)) {
    let me = std::process::id() as i32;
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return;
    };
    for pid in procs
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
    {
        if pid == me {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            continue;
        };
        for entry in fds.flatten() {
            let Some(fd) = entry
                .file_name()
                .to_str()
                .and_then(|f| f.parse::<i32>().ok())
            else {
                continue;
            };
            if let Ok(target) = std::fs::read_link(entry.path()) {
                each(pid, fd, &target.to_string_lossy());
            }
        }
    }
}

/// The link id of BPF link descriptor `fd` of `pid` (its fdinfo's `link_id:` line).
fn link_of(pid: i32, fd: i32) -> Option<u32> {
    let info = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}")).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("link_id:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The command name of `pid`.
fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .map(|c| c.trim_end().to_string())
        .unwrap_or_else(|_| "gone".into())
}

/// Program id → name of every loaded BPF program the kernel lets us see.
fn program_names() -> HashMap<u32, String> {
    aya::programs::loaded_programs()
        .flatten()
        .map(|p| (p.id(), p.name_as_str().unwrap_or_default().to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sentence_names_each_program_and_its_holders() {
        let h = Holder {
            prog_id: 41,
            name: "sys_enter_futex".into(),
            owners: vec![(812, "bpftrace".into())],
        };
        assert_eq!(
            sentence(&[h]),
            "attached to it now: BPF program 41 `sys_enter_futex` of pid 812 (bpftrace)"
        );
        assert!(sentence(&[]).contains("bpftool perf"));
    }
}
