//! The machine cost experiments of `sysmeter bench`, one file per family, and the registry
//! that lists them and resolves a user's selection (groups, ids) to experiments.
//!
//! Experiments own only the work; timing, sampling and statistics belong to the harness.
//! Each documents its timing model in its `about().methodology`.

mod cpu_call;
mod cpu_loop;
mod cpu_ops;
mod cpu_timer;
mod estimate;
mod fs_blocks;
mod fs_cache;
mod fs_cache_report;
mod fs_contention;
mod fs_files;
mod fs_read;
mod fs_read_findings;
mod fs_remote;
mod fs_write;
mod ipc;
mod mem_bandwidth;
mod mem_latency;
mod mem_pagefault;
mod net;
mod os_ctxsw;
mod os_syscall;
mod os_task;
mod pingpong;

use crate::harness::Experiment;

/// The experiment groups, in run order, with a one-line description.
pub const GROUPS: &[(&str, &str)] = &[
    (
        "cpu",
        "the processor and the measurement itself: timers, loops, calls, instructions",
    ),
    (
        "os",
        "the operating system: system calls, process and thread creation, context switches",
    ),
    (
        "mem",
        "the memory hierarchy: cache and DRAM latency, bandwidth, page faults",
    ),
    (
        "ipc",
        "between processes on this machine: pipe, unix, TCP and UDP round trips, bandwidth, connections",
    ),
    (
        "net",
        "across the network, against `sysmeter serve` on another host (--remote HOST[:PORT])",
    ),
    (
        "fs",
        "files and disks: uncached and cached reads, file cache size, contention, durability",
    ),
];

/// Every experiment, in run order.
pub fn all() -> Vec<&'static dyn Experiment> {
    vec![
        &cpu_timer::CpuTimer,
        &cpu_loop::CpuLoop,
        &cpu_call::CpuCall,
        &cpu_ops::CpuOps,
        &os_syscall::OsSyscall,
        &os_task::OsTask,
        &os_ctxsw::OsCtxsw,
        &mem_latency::MemLatency,
        &mem_bandwidth::MemBandwidth,
        &mem_pagefault::MemPagefault,
        &ipc::PIPE,
        &ipc::UNIX,
        &ipc::TCP,
        &ipc::UDP,
        &net::RTT,
        &net::BANDWIDTH,
        &net::CONNECT,
        &net::UDP_RR,
        &fs_read::FsRead,
        &fs_cache::FsCacheSize,
        &fs_contention::FsContention,
        &fs_write::FsWrite,
        &fs_remote::FsRemoteRead,
    ]
}

/// A selection named something that does not exist.
#[derive(Debug, thiserror::Error)]
#[error(
    "unknown experiment or group '{name}'; valid groups: {groups}; valid ids: {ids} (see `sysmeter list`)"
)]
pub struct UnknownSelection {
    /// What the user typed.
    pub name: String,
    /// Valid group names, comma separated.
    pub groups: String,
    /// Valid experiment ids, comma separated.
    pub ids: String,
}

/// Resolve positional `names` (groups or ids) and `--only` ids to experiments in run order.
/// Nothing selected means the default set (every group).
pub fn select(
    names: &[String],
    only: &[String],
) -> Result<Vec<&'static dyn Experiment>, UnknownSelection> {
    let all = all();
    let mut wanted = vec![false; all.len()];
    for name in names.iter().chain(only) {
        let is_group = GROUPS.iter().any(|(g, _)| g == name) && !only.contains(name);
        let mut hit = false;
        for (i, e) in all.iter().enumerate() {
            let group = e.id().split('.').next().unwrap_or("");
            if e.id() == name || (is_group && group == name) {
                wanted[i] = true;
                hit = true;
            }
        }
        if !hit {
            return Err(UnknownSelection {
                name: name.clone(),
                groups: GROUPS
                    .iter()
                    .map(|(g, _)| *g)
                    .collect::<Vec<_>>()
                    .join(", "),
                ids: all.iter().map(|e| e.id()).collect::<Vec<_>>().join(", "),
            });
        }
    }
    let none = !wanted.iter().any(|&w| w);
    Ok(all
        .into_iter()
        .zip(wanted)
        .filter(|(_, w)| none || *w)
        .map(|(e, _)| e)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(v: &[&dyn Experiment]) -> Vec<&'static str> {
        v.iter().map(|e| e.id()).collect()
    }

    #[test]
    fn empty_selection_is_everything() {
        assert_eq!(select(&[], &[]).map(|v| v.len()).ok(), Some(all().len()));
    }

    #[test]
    fn groups_and_ids_resolve_in_run_order() {
        let v = select(&["os".into(), "cpu.timer".into()], &[]).expect("valid");
        assert_eq!(ids(&v), ["cpu.timer", "os.syscall", "os.task", "os.ctxsw"]);
        let v = select(&[], &["os.task".into()]).expect("valid");
        assert_eq!(ids(&v), ["os.task"]);
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let err = select(&["bogus".into()], &[]).err().expect("must fail");
        let msg = err.to_string();
        assert!(
            msg.contains("'bogus'") && msg.contains("cpu, os, mem") && msg.contains("os.ctxsw")
        );
        // --only takes ids, not groups
        assert!(select(&[], &["cpu".into()]).is_err());
    }

    #[test]
    fn every_id_is_group_dot_name_and_documented() {
        for e in all() {
            let (g, n) = e.id().split_once('.').expect("group.name");
            assert!(GROUPS.iter().any(|(x, _)| *x == g), "{g}");
            assert!(!n.is_empty());
            let a = e.about();
            assert!(!a.title.is_empty() && !a.measures.is_empty() && a.methodology.len() > 80);
        }
    }
}
